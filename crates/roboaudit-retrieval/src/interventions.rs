//! Library interventions (SPEC.md §1): label-informed diagnostics that re-run the rules on
//! changed libraries — top-pick deletion, nested libraries, the quality-equalized library and
//! random K'-subsets of the pool. Never retrieval methods.

use crate::matrix::{Reference, Transfer};
use crate::metrics::{core, oracle_top_share};
use crate::report::{
    LibraryRun, ReferencePoints, RuleRerun, SizeIntervention, SubsetSummary, TopPickDeletion,
};
use crate::rules::{RuleContext, RuleSpec};
use crate::shuffle::fisher_yates;
use crate::{RetrievalError, stream_seed};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

/// Reference points of library `lib` on `scenes` (non-empty).
pub(crate) fn reference_points(
    t: &Transfer,
    lib: &[usize],
    scenes: &[usize],
    unstable_below: f64,
) -> ReferencePoints {
    let r = Reference::compute(t, lib, scenes);
    let advantage = r.best_fixed_advantage();
    ReferencePoints {
        n_scenes: scenes.len(),
        random: r.random,
        oracle: r.oracle,
        best_fixed: r.best_fixed,
        best_fixed_experience: t.exp_ids[lib[r.best_fixed_pos]].clone(),
        headroom: r.headroom(),
        best_fixed_advantage_reason: advantage
            .is_none()
            .then(|| "oracle equals random (O - R = 0)".to_string()),
        best_fixed_advantage: advantage,
        advantage_unstable: r.headroom_over_random() < unstable_below,
        oracle_top_pick_share: oracle_top_share(t, lib, scenes).value(),
    }
}

/// Re-runs one rule on `lib` with point diagnostics and whether `C > 1` exactly; `None` when
/// the rule cannot run there.
fn rerun(
    ctx: &RuleContext<'_>,
    spec: &RuleSpec,
    lib: &[usize],
    seed: u64,
    unstable_below: f64,
) -> Result<Option<(RuleRerun, bool)>, RetrievalError> {
    let t = ctx.t;
    let all: Vec<usize> = (0..t.n).collect();
    let Ok(sel) = ctx.select(spec.kind, lib, stream_seed(seed, &spec.name))? else {
        return Ok(None);
    };
    let reference = Reference::compute(t, lib, &all);
    let c = core(
        t,
        lib,
        &reference,
        &oracle_top_share(t, lib, &all),
        &sel.picks,
        unstable_below,
    );
    let concentrated = c.concentrated;
    Ok(Some((
        RuleRerun {
            name: spec.name.clone(),
            success: c.success,
            advantage: c.advantage,
            advantage_unstable: c.unstable,
            top_pick: t.exp_ids[lib[c.top_pos]].clone(),
            top_pick_share: c.top_share,
            concentration: c.concentration,
            gap: c.gap,
        },
        concentrated,
    )))
}

/// The rule re-run on the full library without `removed` (a global experience index).
pub(crate) fn top_pick_deletion(
    ctx: &RuleContext<'_>,
    spec: &RuleSpec,
    removed: usize,
    seed: u64,
    unstable_below: f64,
) -> Result<Result<TopPickDeletion, String>, RetrievalError> {
    let t = ctx.t;
    if t.k < 2 {
        return Ok(Err("library has a single experience".into()));
    }
    if !spec.kind.rerunnable() {
        return Ok(Err(
            "rule is not a deterministic function of the library".into()
        ));
    }
    let lib: Vec<usize> = (0..t.k).filter(|&e| e != removed).collect();
    let all: Vec<usize> = (0..t.n).collect();
    let reference = Reference::compute(t, &lib, &all);
    Ok(match rerun(ctx, spec, &lib, seed, unstable_below)? {
        Some((rerun, _)) => Ok(TopPickDeletion {
            removed: t.exp_ids[removed].clone(),
            random: reference.random,
            oracle: reference.oracle,
            rerun,
        }),
        None => Err("rule cannot run on the reduced library".into()),
    })
}

fn library_run(
    ctx: &RuleContext<'_>,
    specs: &[RuleSpec],
    lib: Vec<usize>,
    seed: u64,
    unstable_below: f64,
) -> Result<LibraryRun, RetrievalError> {
    let t = ctx.t;
    let all: Vec<usize> = (0..t.n).collect();
    // Qualities over the same scenes share one denominator: the range is a whole number.
    let q = t.quality_exact(&lib, &all);
    let lo = q.iter().map(|r| r.num()).min().unwrap_or(0);
    let hi = q.iter().map(|r| r.num()).max().unwrap_or(0);
    let mut rules = Vec::new();
    for spec in specs.iter().filter(|s| s.kind.rerunnable()) {
        if let Some((r, _)) = rerun(ctx, spec, &lib, seed, unstable_below)? {
            rules.push(r);
        }
    }
    Ok(LibraryRun {
        experiences: lib.iter().map(|&e| t.exp_ids[e].clone()).collect(),
        quality_range: t.rate(hi - lo, t.n).to_f64(),
        reference: reference_points(t, &lib, &all, unstable_below),
        rules,
    })
}

/// The `size` experiences with the narrowest range of `q` (consecutive in `(q, index)` order;
/// the first such window wins ties), returned in library order. `q` is compared exactly: the
/// qualities share the denominator `den · n`, so their numerators are compared.
pub(crate) fn quality_equalized(t: &Transfer, size: usize) -> Vec<usize> {
    let all: Vec<usize> = (0..t.n).collect();
    let lib: Vec<usize> = (0..t.k).collect();
    let q: Vec<u64> = lib.iter().map(|&e| t.row_sum(e, &all)).collect();
    let mut order = lib;
    order.sort_by(|&a, &b| q[a].cmp(&q[b]).then(a.cmp(&b)));
    let width = |start: usize| q[order[start + size - 1]] - q[order[start]];
    let mut best = 0;
    for start in 1..=(t.k - size) {
        if width(start) < width(best) {
            best = start;
        }
    }
    let mut chosen = order[best..best + size].to_vec();
    chosen.sort_unstable();
    chosen
}

/// Nested, quality-equalized and random-subset interventions for each configured size.
pub(crate) fn by_size(
    ctx: &RuleContext<'_>,
    specs: &[RuleSpec],
    sizes: &[usize],
    subsets: usize,
    seed: u64,
    unstable_below: f64,
) -> Result<Vec<SizeIntervention>, RetrievalError> {
    let t = ctx.t;
    let mut out = Vec::new();
    for &size in sizes {
        if size >= t.k {
            out.push(SizeIntervention {
                size,
                reason: Some(format!("size {size} is not below the library size {}", t.k)),
                nested: None,
                quality_equalized: None,
                random_subsets: 0,
                random_subset_rules: Vec::new(),
            });
            continue;
        }
        let nested = library_run(ctx, specs, (0..size).collect(), seed, unstable_below)?;
        let equalized = library_run(ctx, specs, quality_equalized(t, size), seed, unstable_below)?;
        let rerunnable: Vec<&RuleSpec> = specs.iter().filter(|s| s.kind.rerunnable()).collect();
        let runs = (0..subsets)
            .into_par_iter()
            .map(|m| {
                let mut rng =
                    ChaCha8Rng::seed_from_u64(stream_seed(seed, &format!("subset/{size}/{m}")));
                let mut pool: Vec<usize> = (0..t.k).collect();
                fisher_yates(&mut pool, &mut rng);
                let mut lib = pool[..size].to_vec();
                lib.sort_unstable();
                rerunnable
                    .iter()
                    .map(|spec| rerun(ctx, spec, &lib, seed, unstable_below))
                    .collect::<Result<Vec<_>, _>>()
            })
            .collect::<Result<Vec<_>, _>>()?;
        let summaries = rerunnable
            .iter()
            .enumerate()
            .map(|(i, spec)| {
                let done: Vec<&(RuleRerun, bool)> =
                    runs.iter().filter_map(|r| r[i].as_ref()).collect();
                let reruns: Vec<&RuleRerun> = done.iter().map(|(r, _)| r).collect();
                let count = reruns.len().max(1) as f64;
                let advantages: Vec<f64> = reruns.iter().filter_map(|r| r.advantage).collect();
                SubsetSummary {
                    name: spec.name.clone(),
                    fraction_concentration_above_1: done.iter().filter(|(_, above)| *above).count()
                        as f64
                        / count,
                    mean_concentration: reruns.iter().map(|r| r.concentration).sum::<f64>() / count,
                    mean_gap: reruns.iter().map(|r| r.gap).sum::<f64>() / count,
                    mean_advantage: (!advantages.is_empty())
                        .then(|| advantages.iter().sum::<f64>() / advantages.len() as f64),
                }
            })
            .collect();
        out.push(SizeIntervention {
            size,
            reason: None,
            nested: Some(nested),
            quality_equalized: Some(equalized),
            random_subsets: subsets,
            random_subset_rules: summaries,
        });
    }
    Ok(out)
}
