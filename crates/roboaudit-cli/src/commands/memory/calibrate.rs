//! `roboaudit memory calibrate`: known-answer calibration through collect and audit.

use super::collect::{HarnessArgs, ServedArgs, usage_or};
use crate::exit::Usage;
use crate::{output, progress};
use anyhow::{Context, Result, bail};
use roboaudit_memory::Plan;
use roboaudit_memory_harness::{Calibration, Calibrator, calibrate, calibrate_policy};
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

/// Runs the `--served` calibrators through their servers.
fn calibrate_served(
    args: &CalibrateArgs,
    cfg: &roboaudit_memory_harness::CollectConfig,
    plan: &Plan,
    on_step: &mut dyn FnMut(Calibrator, usize, usize),
) -> Result<Calibration> {
    let mut results = Vec::new();
    for spec in &args.served {
        let Some((name, url)) = spec.split_once('=') else {
            return Err(Usage(format!(
                "--served expects CALIBRATOR=ws://HOST:PORT, got `{spec}`"
            ))
            .into());
        };
        let calibrator = Calibrator::parse(name).map_err(usage_or)?;
        let mut policy = args
            .served_args
            .connect(&format!("{name}={url}"), args.harness.chunk_len)?;
        results
            .push(calibrate_policy(cfg, calibrator, &mut policy, plan, on_step).map_err(usage_or)?);
    }
    Ok(Calibration {
        plan_hash: plan.hash(),
        passed: results.iter().all(|r| r.passed),
        results,
    })
}

/// Runs `memory calibrate`.
pub fn run(args: &CalibrateArgs) -> Result<()> {
    super::check_count("--seeds", args.seeds, super::MAX_SEEDS)?;
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
    let params = args.harness.params(vec![1.0], 0);
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
        calibrate_served(args, &cfg, &plan, &mut on_step)?
    };
    bar.finish_and_clear();
    // A calibrator without an eligible pair has undefined metrics, which would read as "the
    // audit did not recover a known answer"; the cause is the tolerances (or too few pairs).
    let empty: Vec<&str> = cal
        .results
        .iter()
        .filter(|r| r.n_pairs > 0 && r.n_excluded >= r.n_pairs)
        .map(|r| r.calibrator.name())
        .collect();
    if !empty.is_empty() {
        return Err(Usage(format!(
            "no pair passed the present check for calibrator(s) {}: every pair was excluded, so nothing could be calibrated; the present-check tolerances --tol-position {} m and --tol-joint {} rad are too tight (0 excludes any difference) for this --expert-skill, or --pairs {} is too few",
            empty.join(", "),
            args.harness.tol_position,
            args.harness.tol_joint,
            args.pairs
        ))
        .into());
    }

    outln!(
        "{:<10} {:<20} {:>10} {:>12}  ok",
        "calibrator",
        "metric",
        "expected",
        "got"
    )?;
    for r in &cal.results {
        for c in &r.checks {
            let got = c.got.map_or("undefined".to_owned(), |g| format!("{g:.6}"));
            outln!(
                "{:<10} {:<20} {:>10} {:>12}  {}",
                r.calibrator.name(),
                c.metric,
                c.expected,
                got,
                if c.passed { "yes" } else { "NO" }
            )?;
        }
    }
    if let Some(dir) = &args.out {
        output::ensure_dir(dir)?;
        let path = dir.join("calibration.json");
        let json = serde_json::to_vec_pretty(&cal).context("cannot serialize the calibration")?;
        output::write_atomic(&path, &json)?;
        outln!("wrote {}", path.display())?;
    }
    if !cal.passed {
        let failures: Vec<String> = cal
            .results
            .iter()
            .flat_map(|r| {
                r.checks.iter().filter(|c| !c.passed).map(move |c| {
                    format!(
                        "calibrator `{}`: {} expected {}, got {}",
                        r.calibrator.name(),
                        c.metric,
                        c.expected,
                        c.got.map_or("undefined".to_owned(), |g| g.to_string())
                    )
                })
            })
            .collect();
        bail!(
            "calibration failed, the audit did not recover a known answer: {}",
            failures.join("; ")
        );
    }
    outln!(
        "all {} calibrators recovered their known answers",
        cal.results.len()
    )?;
    Ok(())
}
