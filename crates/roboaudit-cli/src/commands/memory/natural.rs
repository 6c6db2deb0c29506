//! `roboaudit memory natural`: the natural-occurrence analysis (docs/methods.md §2.10):
//! untreated native episodes, the fraction containing the audited decision type, and the
//! observational remaining-step and final-success contrasts; writes natural.json and natural.md.

use super::collect::request_error;
use crate::{output, progress};
use anyhow::Result;
use roboaudit_memory_harness::natural::natural_study;
use roboaudit_memory_harness::natural_shard;
use roboaudit_memory_harness::request::{NaturalOptions, study};
use std::time::Instant;

/// Runs `memory natural`.
pub fn run(args: &NaturalOptions) -> Result<()> {
    let task = args.task().map_err(request_error)?;
    output::refuse_out_file(&args.out)?;
    // Refuse a bad configuration before a learned policy is qualified or a server reached.
    let (spec, params, cfg) = args.request(task).map_err(request_error)?;
    let mut opened = super::open(&spec, task, params, &args.served, false)?;
    let started = Instant::now();
    if let Some(shard) = args.shard {
        let identity = opened.identity.clone();
        let (policy, out) = (opened.as_policy(), &args.out);
        return super::run_study_shard(
            out,
            shard,
            (cfg.cohort.episodes, "episodes", "natural episodes"),
            |on| natural_shard::run_shard(&cfg, policy, &identity, out, shard, on),
        );
    }
    natural_shard::refuse_shard_folder(&args.out).map_err(super::collect::usage_or)?;
    let bar = progress::bar(cfg.cohort.episodes as u64, "natural episodes");
    let result = natural_study(&cfg, opened.as_policy(), &mut |d, _| {
        bar.set_position(d as u64);
    });
    bar.finish_and_clear();
    let result = result.map_err(super::collect::usage_or)?;
    let seconds = started.elapsed().as_secs_f64();
    out!("{}", study::natural_text(&result, seconds, opened.served()))?;
    outln!(
        "{}",
        study::write_natural(&args.out, &result).map_err(request_error)?
    )?;
    Ok(())
}
