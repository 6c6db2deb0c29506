//! `roboaudit memory intervene`: native-rollout history replacement and restoration.

use super::collect::request_error;
use crate::{output, progress};
use anyhow::Result;
use roboaudit_memory_harness::intervene_shard;
use roboaudit_memory_harness::request::{InterveneOptions, study};

/// Runs `memory intervene`.
pub fn run(args: &InterveneOptions) -> Result<()> {
    let task = args.task().map_err(request_error)?;
    output::refuse_out_file(&args.out)?;
    let (spec, params, kind, cfg) = args.request(task).map_err(request_error)?;
    let mut opened = super::open(&spec, task, params, &args.served, true)?;
    let name = opened.as_policy().name();
    if let Some(shard) = args.shard {
        let identity = opened.identity.clone();
        let (policy, out) = (opened.as_policy(), &args.out);
        return super::run_study_shard(
            out,
            shard,
            (cfg.cohort.episodes, "recipients", "recipients"),
            |on| intervene_shard::run_shard(kind, &cfg, policy, &identity, out, shard, on),
        );
    }
    intervene_shard::refuse_shard_folder(&args.out).map_err(super::collect::usage_or)?;
    let spinner = progress::spinner("running continuations");
    let result = study::intervention_study(kind, &cfg, opened.as_policy());
    spinner.finish_and_clear();
    let result = result.map_err(request_error)?;
    out!(
        "{}",
        study::intervention_text(&result, &name, &cfg, opened.served())
    )?;
    let wrote = study::write_intervention(&args.out, &result, &name).map_err(request_error)?;
    outln!("{wrote}")?;
    Ok(())
}
