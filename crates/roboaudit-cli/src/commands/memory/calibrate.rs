//! `roboaudit memory calibrate`: known-answer calibration through collect and audit.

use super::collect::{HarnessArgs, ServedArgs, request_error, usage_or};
use crate::progress;
use anyhow::{Result, bail};
use roboaudit_memory::Plan;
use roboaudit_memory_harness::request::calibrate::{self as pipeline, calibrate_served};
use roboaudit_memory_harness::request::{self, MAX_SEEDS};
use roboaudit_memory_harness::{Calibrator, PolicyParams, calibrate};
use std::path::PathBuf;

/// Arguments of `memory calibrate`.
#[derive(clap::Args, Debug)]
pub struct CalibrateArgs {
    /// Pairs per calibrator (1 to 100,000).
    #[arg(long, default_value_t = 12)]
    pub pairs: usize,
    /// Number of action seeds (0..N, N from 1 to 1,000).
    #[arg(long, default_value_t = 2)]
    pub seeds: usize,
    /// Plan of the audits (bootstrap settings, δ); default: SPEC §2 defaults.
    #[arg(long, value_name = "FILE")]
    pub plan: Option<PathBuf>,
    /// Write DIR/calibration.json.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// A calibrator played by a served policy, as CALIBRATOR=ws://HOST:PORT (repeatable; e.g.
    /// faithful=ws://127.0.0.1:8000): only the named calibrators run, each through the wire,
    /// and their known answers must come back.
    #[arg(long, value_name = "CALIBRATOR=URL")]
    pub served: Vec<String>,
    /// Served-policy settings.
    #[command(flatten)]
    pub served_args: ServedArgs,
    /// Harness settings.
    #[command(flatten)]
    pub harness: HarnessArgs,
}

/// Runs `memory calibrate`.
pub fn run(args: &CalibrateArgs) -> Result<()> {
    request::check_count("--seeds", args.seeds, MAX_SEEDS).map_err(request_error)?;
    if let Some(dir) = &args.out {
        crate::output::refuse_out_file(dir)?;
    }
    let plan = match &args.plan {
        Some(p) => Plan::load(p)?,
        None => Plan::default(),
    };
    let cfg = args
        .harness
        .config(args.pairs, (0..args.seeds as u64).collect())?;
    cfg.validate().map_err(usage_or)?;
    let reliability = PolicyParams {
        reliability: vec![1.0],
        ..PolicyParams::default()
    };
    let params = args.harness.params(reliability, 0);
    let bar = progress::bar(0, "");
    let mut on_step = |c: Calibrator, done: usize, total: usize| {
        if bar.length() != Some(total as u64) || done <= 1 {
            bar.set_length(total as u64);
            bar.reset_eta();
            bar.set_message(format!("calibrating {}: pairs", c.name()));
        }
        bar.set_position(done as u64);
    };
    let cal = if args.served.is_empty() {
        calibrate(&cfg, &params, &plan, &mut on_step).map_err(usage_or)?
    } else {
        let (settings, chunk_len) = (args.served_args.settings(), args.harness.chunk_len);
        calibrate_served(
            &args.served,
            &settings,
            chunk_len,
            (&cfg, &plan),
            &mut on_step,
        )
        .map_err(request_error)?
    };
    bar.finish_and_clear();
    pipeline::check_eligible(&cal, &cfg).map_err(request_error)?;
    out!("{}", pipeline::calibration_table(&cal))?;
    if let Some(dir) = &args.out {
        let path = pipeline::write_calibration(dir, &cal).map_err(request_error)?;
        outln!("wrote {}", path.display())?;
    }
    if let Some(failure) = pipeline::calibration_failure(&cal) {
        bail!(failure);
    }
    outln!(
        "all {} calibrators recovered their known answers",
        cal.results.len()
    )?;
    Ok(())
}
