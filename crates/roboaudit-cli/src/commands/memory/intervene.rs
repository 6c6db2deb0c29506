//! `roboaudit memory intervene`: native-rollout history replacement and restoration.

use super::collect::usage_or;
use crate::exit::Usage;
use crate::{output, progress};
use anyhow::{Context, Result};
use roboaudit_memory_harness::intervals::{BootstrapSettings, RateInterval};
use roboaudit_memory_harness::intervene::{
    InterventionConfig, InterventionStudy, replacement_study, restoration_study,
};
use roboaudit_memory_harness::{
    BuiltinPolicy, MemoryPolicy, PolicyKind, PolicyParams, ServedPolicy,
};
use roboaudit_testbed::TaskKind;
use std::path::PathBuf;

/// Arguments of `memory intervene`.
#[derive(clap::Args, Debug)]
pub struct InterveneArgs {
    /// `replacement` (own, donor same, donor opposite, clear) or `restoration` (none, anchor, full).
    #[arg(long)]
    pub study: String,
    /// Built-in policy (faithful, blind, anti, random or bank), or a served one: ws://HOST:PORT
    /// or NAME=ws://HOST:PORT, whose server declares the roboaudit capabilities `reset`,
    /// `memory_get` and `memory_set` (see the policy-client README).
    #[arg(long, default_value = "bank")]
    pub policy: String,
    /// Served-policy settings.
    #[command(flatten)]
    pub served: super::collect::ServedArgs,
    /// Memory task: put_back or rearrange (swap is refused: no success predicate for the
    /// three-tray swap the harness crosses).
    #[arg(long, default_value = "put_back")]
    pub task: String,
    /// Recipient episodes (1 to 100,000).
    #[arg(long, default_value_t = 12)]
    pub episodes: usize,
    /// Master seed of layouts and episodes.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Restoration: chunks run with the cleared bank before the restoration query (at least 1,
    /// at most the chunks an episode of the task can run; a study whose episode ends before
    /// the restoration query fails rather than report an unrestored condition).
    #[arg(long, default_value_t = 1)]
    pub fault_chunks: usize,
    /// Bank policy: recall probability per tray index (comma-separated; the last one repeats).
    #[arg(long, value_delimiter = ',', default_value = "0.95,0.95,0.3")]
    pub reliability: Vec<f64>,
    /// Bootstrap resamples of the layout-stratified intervals (100 to 1,000,000).
    #[arg(long, default_value_t = 10_000,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(100..=1_000_000))]
    pub resamples: usize,
    /// Seed of the bootstrap resampling.
    #[arg(long, default_value_t = 0)]
    pub bootstrap_seed: u64,
    /// Output folder: DIR/interventions.json and DIR/interventions.md.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

/// Connects to a served policy and refuses it (exit 2) unless its memory is native: the
/// interventions replace and restore named memory components, which needs `memory_get` and
/// `memory_set`.
fn connect_served(args: &InterveneArgs, chunk_len: usize) -> Result<ServedPolicy> {
    let policy = args.served.connect(&args.policy, chunk_len)?;
    if !policy.has_native_memory() {
        let c = policy.client();
        return Err(Usage(format!(
            "memory intervene cannot run the served policy at {}: native interventions replace and restore named memory components, which needs the roboaudit capabilities memory_get and memory_set, and the server declares only {:?}; memory collect and memory calibrate need only reset",
            c.url(),
            c.capabilities()
        ))
        .into());
    }
    Ok(policy)
}

/// Runs `memory intervene`.
pub fn run(args: &InterveneArgs) -> Result<()> {
    let task = TaskKind::parse(&args.task)?;
    super::check_count("--episodes", args.episodes, super::MAX_UNITS)?;
    crate::output::refuse_out_file(&args.out)?;
    let params = PolicyParams {
        reliability: args.reliability.clone(),
        ..PolicyParams::default()
    };
    if args.study == "restoration" {
        check_fault_chunks(args.fault_chunks, task, params.chunk_len)?;
    }
    let cfg = InterventionConfig {
        task,
        episodes: args.episodes,
        seed: args.seed,
        fault_chunks: args.fault_chunks,
        bootstrap: BootstrapSettings {
            resamples: args.resamples,
            seed: args.bootstrap_seed,
            ..BootstrapSettings::default()
        },
        ..InterventionConfig::default()
    };
    let study_fn = match args.study.as_str() {
        "replacement" => replacement_study,
        "restoration" => restoration_study,
        other => {
            return Err(Usage(format!(
                "unknown study `{other}`; valid: replacement, restoration"
            ))
            .into());
        }
    };
    let mut served = None;
    let mut builtin = None;
    let policy: &mut dyn MemoryPolicy = if super::collect::is_served(&args.policy) {
        served.insert(connect_served(args, params.chunk_len)?)
    } else {
        let kind = PolicyKind::parse(&args.policy).map_err(usage_or)?;
        builtin.insert(BuiltinPolicy::new(kind, params).map_err(usage_or)?)
    };
    let name = policy.name();
    let spinner = progress::spinner("running continuations");
    let study = study_fn(&cfg, policy).map_err(usage_or)?;
    spinner.finish_and_clear();
    if let Some(p) = &served {
        println!("{}", super::collect::latency_line(p));
    }
    println!(
        "{} study, {} on {}: {} recipients ({} skipped before any query)",
        study.study,
        name,
        cfg.task.name(),
        cfg.episodes - study.skipped,
        study.skipped
    );
    print!("{}", table(&study));
    if let Some(ok) = study.own_reproduces_native {
        println!("own-history reconstruction reproduces the native memory: {ok}");
    }
    output::ensure_dir(&args.out)?;
    let path = args.out.join("interventions.json");
    let json = serde_json::to_vec_pretty(&study).context("cannot serialize the study")?;
    let md_path = args.out.join("interventions.md");
    output::write_all_atomic(&[
        (&path, &json),
        (&md_path, markdown(&study, &name).as_bytes()),
    ])?;
    println!("wrote {} and {}", path.display(), md_path.display());
    Ok(())
}

/// Refuses a `--fault-chunks` that cannot lead to a restoration: 0 (the restoration would
/// coincide with the fault) or more chunks than the task's step limit allows at all. A value in
/// range can still exceed what an episode runs after its lift event; the study then fails.
fn check_fault_chunks(fault_chunks: usize, task: TaskKind, chunk_len: usize) -> Result<()> {
    let max = task
        .max_steps()
        .div_ceil(chunk_len.max(1))
        .saturating_sub(1)
        .max(1);
    if !(1..=max).contains(&fault_chunks) {
        return Err(Usage(format!(
            "--fault-chunks must be in 1..={max} for {} (its episodes end after at most {} steps of {chunk_len}-action chunks, and the restoration query must come after the fault chunks), got {fault_chunks}",
            task.name(),
            task.max_steps()
        ))
        .into());
    }
    Ok(())
}

/// `0.833 [0.583, 1.000]`, or `–` where the rate does not apply.
fn rate(r: Option<RateInterval>) -> String {
    match r {
        None => "–".to_owned(),
        Some(r) => match r.ci {
            Some([lo, hi]) => format!("{:.3} [{lo:.3}, {hi:.3}]", r.estimate),
            None => format!("{:.3} [undefined]", r.estimate),
        },
    }
}

/// Rows of (condition, n, counts, success, committed own, committed donor) for both renderings.
fn rows(study: &InterventionStudy) -> Vec<[String; 6]> {
    study
        .summary
        .iter()
        .map(|c| {
            let iv = study.intervals.iter().find(|i| i.condition == c.condition);
            [
                c.condition.clone(),
                c.n.to_string(),
                format!(
                    "{}/{}/{}/{}",
                    c.successes, c.committed_own, c.committed_donor, c.committed_none
                ),
                rate(iv.and_then(|i| i.success)),
                rate(iv.and_then(|i| i.committed_own)),
                rate(iv.and_then(|i| i.committed_donor)),
            ]
        })
        .collect()
}

const HEADER: [&str; 6] = [
    "condition",
    "n",
    "succ/own/donor/none",
    "success",
    "committed own",
    "committed donor",
];

fn table(study: &InterventionStudy) -> String {
    let mut out = String::new();
    let line = |r: &[&str]| {
        format!(
            "{:<15} {:>3} {:>19}  {:<22} {:<22} {:<22}\n",
            r[0], r[1], r[2], r[3], r[4], r[5]
        )
    };
    out.push_str(&line(&HEADER));
    for r in rows(study) {
        let r: Vec<&str> = r.iter().map(String::as_str).collect();
        out.push_str(&line(&r));
    }
    out.push_str(&interval_note(study));
    out.push('\n');
    out
}

fn interval_note(study: &InterventionStudy) -> String {
    let b = &study.config.bootstrap;
    format!(
        "rates with {:.0}% layout-stratified bootstrap intervals (recipient clusters within layout levels, {} resamples, seed {})",
        b.level * 100.0,
        b.resamples,
        b.seed
    )
}

fn markdown(study: &InterventionStudy, policy: &str) -> String {
    let mut md = format!(
        "# Memory intervention: {} study\n\nPolicy `{policy}` on `{}`, {} recipients ({} skipped before any query).\n\n",
        study.study,
        study.config.task.name(),
        study.config.episodes - study.skipped,
        study.skipped
    );
    md.push_str(&format!("| {} |\n", HEADER.join(" | ")));
    md.push_str("|---|---:|---:|---|---|---|\n");
    for r in rows(study) {
        md.push_str(&format!("| {} |\n", r.join(" | ")));
    }
    md.push_str(&format!("\n{}.\n", interval_note(study)));
    if let Some(ok) = study.own_reproduces_native {
        md.push_str(&format!(
            "\nOwn-history reconstruction reproduces the native memory: {ok}.\n"
        ));
    }
    md
}
