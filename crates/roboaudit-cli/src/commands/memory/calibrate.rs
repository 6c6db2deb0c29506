//! `roboaudit memory calibrate`: known-answer calibration through collect and audit.

use super::collect::{request_error, usage_or};
use crate::progress;
use anyhow::{Result, bail};
use roboaudit_memory_harness::request::calibrate::{self as pipeline, calibrate_served};
use roboaudit_memory_harness::request::{self, CalibrateOptions, MAX_SEEDS};
use roboaudit_memory_harness::{Calibrator, calibrate};

/// Runs `memory calibrate`.
pub fn run(args: &CalibrateOptions) -> Result<()> {
    request::check_count("--seeds", args.seeds, MAX_SEEDS).map_err(request_error)?;
    if let Some(dir) = &args.out {
        crate::output::refuse_out_file(dir)?;
        crate::output::refuse_foreign_results(dir, &[("fqe.json", &[])])?;
    }
    let (cfg, plan, params) = args.request().map_err(request_error)?;
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
        let (settings, chunk_len) = (args.served_args, args.harness.chunk_len);
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
