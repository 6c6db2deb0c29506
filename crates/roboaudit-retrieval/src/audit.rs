//! The audit pipeline: build `P` and the geometry once, run every rule (in parallel across
//! rules, each with its own seeded streams), then the library interventions.

use crate::draws::{Replicates, RuleDraws, SharedDraws};
use crate::geometry::{GeoScore, Geometry};
use crate::inference::{Aurocs, CellTallies, SceneBootstrap, aurocs, within_mean};
use crate::interventions::{by_size, reference_points, top_pick_deletion};
use crate::matrix::{OwnBase, Reference, SceneSet, Transfer, variance_shares};
use crate::metrics::{OracleShare, core, gap_on, oracle_top_share};
use crate::report::{
    AuditReport, ExperienceSummary, GapBySet, ReferenceBySet, RuleReport, SCHEMA, ShuffleReport,
    SizeIntervention, Skipped, VarianceShare,
};
use crate::rules::{RuleContext, RuleKind, RuleSpec, Selection, recency_keys, user_choices};
use crate::shuffle::{Null, PowerPlan, power};
use crate::{
    AuditConfig, CheckedConfig, CiMethod, Metric, PreparedInputs, RetrievalError, stream_seed,
};
use rayon::prelude::*;
use roboaudit_stats::{IntervalMethod, ResampleDesign, ResampleMatrix, spearman_exact};
use roboaudit_types::RetrievalInputs;
use std::collections::BTreeMap;

/// Tie-breaking convention, written into every report.
pub const TIE_BREAK: &str = "ties broken by the lowest experience index (library file order) in every argmax/argmin, top pick and best-fixed choice";

/// Description of the planted-gap power analysis, written into every report.
pub const POWER_METHOD: &str = "count-preserving planted gap: shuffle the rule's selections over scenes, pick round(rate*n) scenes at random and re-deal their experiences greedily (random scene order, each takes the remaining experience with the highest P[e,s]); selection counts are unchanged, so the rule's own shuffle envelope is the exact null; detection = success outside the envelope";

/// Runs the full retrieval audit of SPEC.md §1 on validated inputs:
/// [`PreparedInputs::new`] then [`run_prepared`].
///
/// Same inputs and config give byte-identical reports for any rayon thread count.
///
/// # Errors
/// Inconsistent inputs (missing cell, unknown id, bad embedding, invalid user log), an unknown
/// structural representation, or a statistics failure.
pub fn run_audit(
    inputs: &RetrievalInputs,
    config: &CheckedConfig,
) -> Result<AuditReport, RetrievalError> {
    run_prepared(&PreparedInputs::new(inputs)?, config)
}

/// Runs the full retrieval audit of SPEC.md §1 on prepared inputs (the report of [`run_audit`]
/// on the same inputs, byte for byte).
///
/// # Errors
/// An invalid user selection log, an unknown structural representation, or a statistics
/// failure.
pub fn run_prepared(
    prepared: &PreparedInputs<'_>,
    config: &CheckedConfig,
) -> Result<AuditReport, RetrievalError> {
    let cfg = config.get();
    let (inputs, t) = (prepared.inputs, &prepared.t);
    let reps: Vec<&str> = prepared.reps.iter().map(|r| r.name.as_str()).collect();
    if let Some(name) = &cfg.structural
        && !reps.contains(&name.as_str())
    {
        return Err(RetrievalError::UnknownRepresentation {
            name: name.clone(),
            available: reps.iter().map(|r| (*r).to_owned()).collect(),
        });
    }
    let boot_seed = stream_seed(cfg.seed, "bootstrap");
    // The shared draws need only the transfer matrix: drawn while the geometry is built, so that
    // a thread done with the smaller representations takes them up instead of waiting for the
    // largest one.
    let (geos, draws) = rayon::join(
        || {
            prepared
                .reps
                .par_iter()
                .map(|v| Geometry::from_vectors(v, inputs, cfg.csls_k))
                .collect::<Vec<_>>()
        },
        || {
            SharedDraws::build(
                t,
                cfg.resamples,
                boot_seed,
                cfg.permutations,
                stream_seed(cfg.seed, "shuffle"),
            )
        },
    );
    let draws = draws.map_err(RetrievalError::stats("shared scene resamples"))?;
    let ctx = RuleContext {
        t,
        geos: &geos,
        recency: recency_keys(inputs),
        user: user_choices(inputs, t)?,
        csls_k: cfg.csls_k,
    };
    let specs = rule_specs(&reps, cfg, ctx.user.is_some());
    let method = match cfg.ci_method {
        CiMethod::Percentile => IntervalMethod::Percentile,
        CiMethod::Bca => IntervalMethod::Bca,
    };
    let design = ResampleDesign {
        n_clusters: t.n,
        strata: None,
    };
    // The index rows only serve BCa (its jackknife and replicates are recomputed from them);
    // percentile intervals come from the shared draws, which hold the same resamples.
    let matrix = (method == IntervalMethod::Bca)
        .then(|| ResampleMatrix::generate(&design, cfg.resamples, boot_seed))
        .transpose()
        .map_err(RetrievalError::stats("scene resample matrix"))?;
    let boot = SceneBootstrap {
        matrix,
        n: t.n,
        draws,
        level: cfg.level,
        method,
    };
    // Every rule's choices and AUROCs first, then the shuffle nulls, gap and within-query
    // replicates of all rules in one pass over the shared draws (each block of draws read once
    // for every rule), then each rule's report.
    let full_lib: Vec<usize> = (0..t.k).collect();
    let all_scenes: Vec<usize> = (0..t.n).collect();
    let cells = CellTallies::new(t, &full_lib);
    let selections = specs
        .par_iter()
        .map(|spec| {
            let sel = ctx.select(spec.kind, &full_lib, stream_seed(cfg.seed, &spec.name))?;
            let sel = match sel {
                Ok(sel) => sel,
                Err(reason) => return Ok(Err(reason)),
            };
            let aur = match (&sel.scores, spec.kind.auroc_score()) {
                (Some(scores), Ok(_)) => Some(aurocs(&cells, scores)?),
                _ => None,
            };
            Ok(Ok((sel, aur)))
        })
        .collect::<Result<Vec<_>, RetrievalError>>()?;
    let rule_draws: Vec<RuleDraws<'_>> = selections
        .iter()
        .filter_map(|s| s.as_ref().ok())
        .map(|(sel, aur)| RuleDraws {
            picks: &sel.picks,
            per_scene: aur.as_ref().map(|a| a.per_scene.as_slice()),
        })
        .collect();
    let all_replicates = boot
        .draws
        .replicates_many(t, &rule_draws, method == IntervalMethod::Percentile)
        .map_err(RetrievalError::stats("shared scene resamples"))?;
    // One replicate set per rule that selected, in the same order: pairing them by position
    // below is only sound while the counts agree.
    if all_replicates.len() != rule_draws.len() {
        return Err(RetrievalError::Stats {
            what: "shared scene resamples".to_owned(),
            source: roboaudit_stats::StatsError::LengthMismatch {
                left: "replicate sets",
                left_len: all_replicates.len(),
                right: "rules that selected",
                right_len: rule_draws.len(),
            },
        });
    }
    drop(rule_draws);
    let mut all_replicates = all_replicates.into_iter();
    let shared = Shared {
        lib: &full_lib,
        reference: Reference::compute(t, &full_lib, &all_scenes),
        oracle_share: oracle_top_share(t, &full_lib, &all_scenes),
    };
    let prepared: Vec<Result<Prepared, String>> = selections
        .into_iter()
        .map(|s| {
            s.map(|(selection, aurocs)| Prepared {
                selection,
                aurocs,
                // Counted above: one per rule that selected.
                replicates: all_replicates.next().unwrap_or_default(),
            })
        })
        .collect();
    // The rules' reports beside the library interventions and the matrix-level figures, which
    // depend on no rule's report (errors in the rules' order first, as when they ran in turn).
    let (outcomes, matrix_level) = rayon::join(
        || {
            specs
                .par_iter()
                .zip(prepared)
                .map(|(spec, prepared)| rule_report(&ctx, spec, prepared, config, &boot, &shared))
                .collect::<Result<Vec<_>, _>>()
        },
        || matrix_level(&ctx, &specs, cfg),
    );
    let outcomes = outcomes?;
    let MatrixLevel {
        library_interventions,
        reference_by_set,
        shares,
        own_base: (own_base_spearman, own_base_spearman_reason, own_base_n),
        quality: q,
    } = matrix_level?;
    let reference = reference_by_set.all.clone();
    let mut rules = Vec::new();
    let mut skipped = Vec::new();
    for (spec, outcome) in specs.iter().zip(outcomes) {
        match outcome {
            Ok(r) => rules.push(r),
            Err(reason) => skipped.push(Skipped {
                name: spec.name.clone(),
                reason,
            }),
        }
    }
    Ok(AuditReport {
        schema: SCHEMA.to_string(),
        n_scenes: t.n,
        n_experiences: t.k,
        n_executions: t.cells.iter().map(Vec::len).sum(),
        tie_break: TIE_BREAK.to_string(),
        config: cfg.clone(),
        reference_by_set,
        reference,
        variance_share: VarianceShare {
            scene: shares.map(|s| s.0),
            experience: shares.map(|s| s.1),
            reason: shares
                .is_none()
                .then(|| "P is constant: no variance to share".to_string()),
        },
        own_base_spearman,
        own_base_spearman_reason,
        own_base_n,
        experiences: (0..t.k)
            .map(|e| ExperienceSummary {
                id: t.exp_ids[e].clone(),
                quality: q[e],
                own_base_success: t.own_base[e].map(OwnBase::value),
            })
            .collect(),
        rules,
        skipped_rules: skipped,
        library_interventions,
        power_method: POWER_METHOD.to_string(),
        run: None,
    })
}

/// What the report holds beyond the rules: the library interventions and the matrix-level
/// figures.
struct MatrixLevel {
    library_interventions: Vec<SizeIntervention>,
    reference_by_set: ReferenceBySet,
    shares: Option<(f64, f64)>,
    own_base: (Option<f64>, Option<String>, usize),
    quality: Vec<f64>,
}

/// The library interventions (SPEC.md §1) and the reference points by scene set, variance
/// shares, own-base Spearman and qualities of the full library.
fn matrix_level(
    ctx: &RuleContext<'_>,
    specs: &[RuleSpec],
    cfg: &AuditConfig,
) -> Result<MatrixLevel, RetrievalError> {
    let t = ctx.t;
    let library_interventions = by_size(
        ctx,
        specs,
        &cfg.library_sizes,
        cfg.random_subsets,
        cfg.seed,
        cfg.unstable_threshold,
    )?;
    let lib: Vec<usize> = (0..t.k).collect();
    let all = t.scenes_of(SceneSet::All);
    let subset = |set: SceneSet, label: &str| {
        let scenes = t.scenes_of(set);
        if scenes.is_empty() {
            (None, Some(format!("no {label}-perturbed scenes")))
        } else {
            (
                Some(reference_points(t, &lib, &scenes, cfg.unstable_threshold)),
                None,
            )
        }
    };
    let (appearance, appearance_reason) = subset(SceneSet::Appearance, "appearance");
    let (layout, layout_reason) = subset(SceneSet::Layout, "layout");
    let (fresh, _) = subset(SceneSet::Fresh, "fresh");
    let reference = reference_points(t, &lib, &all, cfg.unstable_threshold);
    let shares = variance_shares(t);
    let q = t.quality(&lib, &all);
    Ok(MatrixLevel {
        library_interventions,
        reference_by_set: ReferenceBySet {
            all: reference,
            appearance,
            appearance_reason,
            layout,
            layout_reason,
            fresh,
        },
        shares,
        own_base: own_base(t)?,
        quality: q,
    })
}

/// Every rule in report order: reference rules, then per representation the visual families,
/// then structural and the user log.
fn rule_specs(reps: &[&str], cfg: &AuditConfig, has_user: bool) -> Vec<RuleSpec> {
    let (structural, structural_metric) = (cfg.structural.as_deref(), cfg.structural_metric);
    let plain = |name: &str, kind| RuleSpec {
        name: name.to_string(),
        kind,
        representation: None,
    };
    let mut specs = vec![
        plain("random", RuleKind::Random),
        plain("oracle", RuleKind::Oracle),
        plain("best_fixed", RuleKind::BestFixed),
        plain("recency", RuleKind::Recency),
        plain("track_record", RuleKind::TrackRecord),
    ];
    for (rep, name) in reps.iter().enumerate() {
        if Some(*name) == structural {
            continue;
        }
        let geo = |family: String, score| RuleSpec {
            name: family,
            kind: RuleKind::Geo { rep, score },
            representation: Some(name.to_string()),
        };
        specs.push(geo(
            format!("nn/{name}/cosine"),
            GeoScore::Nn(Metric::Cosine),
        ));
        specs.push(geo(format!("nn/{name}/l2"), GeoScore::Nn(Metric::L2)));
        specs.push(geo(format!("csls/{name}"), GeoScore::Csls));
        specs.push(geo(format!("mp_empirical/{name}"), GeoScore::MpEmpirical));
        specs.push(geo(format!("mp_gaussian/{name}"), GeoScore::MpGaussian));
    }
    if let Some(name) = structural
        && let Some(rep) = reps.iter().position(|r| *r == name)
    {
        specs.push(RuleSpec {
            name: format!("structural/{name}"),
            kind: RuleKind::Structural {
                rep,
                metric: structural_metric,
            },
            representation: Some(name.to_string()),
        });
    }
    if has_user {
        specs.push(plain("user_selection", RuleKind::UserSelection));
    }
    specs
}

/// A rule's choices on the full library, its AUROCs (for rules with a score) and
/// its shared replicates (shuffle null, gap and within-query replicates; gaps empty unless the
/// interval is a percentile one), computed for all rules together.
struct Prepared {
    selection: Selection,
    aurocs: Option<Aurocs>,
    replicates: Replicates,
}

/// What every rule's report on the full library shares.
struct Shared<'a> {
    lib: &'a [usize],
    reference: Reference,
    oracle_share: OracleShare,
}

/// Full diagnostics of one rule on the whole library; `Ok(Err(reason))` when it cannot run.
fn rule_report(
    ctx: &RuleContext<'_>,
    spec: &RuleSpec,
    prepared: Result<Prepared, String>,
    config: &CheckedConfig,
    boot: &SceneBootstrap,
    shared: &Shared<'_>,
) -> Result<Result<RuleReport, String>, RetrievalError> {
    let (t, cfg) = (ctx.t, config.get());
    let lib = shared.lib;
    let Prepared {
        selection: sel,
        aurocs: aur,
        mut replicates,
    } = match prepared {
        Ok(prepared) => prepared,
        Err(reason) => return Ok(Err(reason)),
    };
    let c = core(
        t,
        lib,
        &shared.reference,
        &shared.oracle_share,
        &sel.picks,
        cfg.unstable_threshold,
    );
    let tail = (1.0 - cfg.level) / 2.0;
    let within = replicates.defined_within();
    let Replicates { shuffled, gaps, .. } = replicates;
    let envelope = shuffled
        .quantiles(&[tail, 1.0 - tail])
        .map_err(RetrievalError::stats("shuffle envelope"))?;
    let envelope = [envelope[0], envelope[1]];
    let gap_ci = boot.interval(
        "discrimination gap",
        |idx| gap_on(t, lib, &sel.picks, idx),
        || gaps,
    )?;
    let subset_gap = |set| gap_on(t, lib, &sel.picks, &t.scenes_of(set));
    let (gap_appearance, gap_layout) = (
        subset_gap(SceneSet::Appearance),
        subset_gap(SceneSet::Layout),
    );
    let auroc_score = spec.kind.auroc_score();
    let within_ci = match &aur {
        Some(a) => boot
            .interval(
                "within-query AUROC",
                |idx| within_mean(&a.per_scene, idx),
                || within,
            )?
            .ok(),
        None => None,
    };
    let no_score = || auroc_score.err().unwrap_or("rule has no score").to_string();
    let deletion = if cfg.top_pick_deletion {
        top_pick_deletion(ctx, spec, c.top_pos, cfg.seed, cfg.unstable_threshold)?
    } else {
        Err("top-pick deletion is off (config top_pick_deletion = false)".to_string())
    };
    let mut selection = BTreeMap::new();
    for (pos, &count) in c.counts.iter().enumerate().filter(|(_, c)| **c > 0) {
        selection.insert(t.exp_ids[lib[pos]].clone(), count as f64 / t.n as f64);
    }
    Ok(Ok(RuleReport {
        name: spec.name.clone(),
        family: spec.kind.family(),
        representation: spec.representation.clone(),
        success: c.success,
        advantage_reason: c
            .advantage
            .is_none()
            .then(|| "oracle equals random (O - R = 0)".to_string()),
        advantage: c.advantage,
        advantage_unstable: c.unstable,
        choices: sel
            .picks
            .iter()
            .map(|&p| t.exp_ids[lib[p]].clone())
            .collect(),
        selection,
        top_pick: t.exp_ids[lib[c.top_pos]].clone(),
        top_pick_share: c.top_share,
        oracle_top_pick_share: c.oracle_share,
        concentration: c.concentration,
        top_pick_margin: c.margin,
        entropy: c.entropy,
        effective_number: c.entropy.exp(),
        shuffle: ShuffleReport {
            expected: c.expected,
            envelope,
            inside: !crate::shuffle::outside_envelope(c.success, envelope),
            permutations: cfg.permutations,
        },
        gap: c.gap,
        gap_significant: gap_ci.as_ref().ok().map(|ci| ci[0] > 0.0 || ci[1] < 0.0),
        gap_ci_reason: gap_ci.as_ref().err().cloned(),
        gap_ci: gap_ci.ok(),
        gap_by_set: GapBySet {
            reason: (gap_appearance.is_none() || gap_layout.is_none())
                .then(|| "a null subset gap has no scenes of that perturbation".to_string()),
            appearance: gap_appearance,
            layout: gap_layout,
        },
        auroc_score: auroc_score.ok().map(str::to_string),
        pooled_auroc: aur.as_ref().and_then(|a| a.pooled.as_ref().ok().copied()),
        pooled_auroc_reason: match &aur {
            Some(a) => a.pooled.as_ref().err().cloned(),
            None => Some(no_score()),
        },
        within_query_auroc: aur.as_ref().and_then(|a| a.within.as_ref().ok().copied()),
        within_query_auroc_reason: match &aur {
            Some(a) => a.within.as_ref().err().cloned(),
            None => Some(no_score()),
        },
        within_query_eligible: aur.as_ref().map(|a| a.eligible),
        within_query_ci: within_ci,
        power: power(
            t,
            lib,
            &sel.picks,
            Null {
                envelope,
                expected: c.expected,
            },
            &PowerPlan {
                rates: &cfg.power_rates,
                replicates: cfg.power_replicates,
                seed: stream_seed(cfg.seed, &format!("power/{}", spec.name)),
            },
        ),
        top_pick_deletion_reason: deletion.as_ref().err().cloned(),
        top_pick_deletion: deletion.ok(),
    }))
}

/// Spearman ρ between own-base success and `q(e)` computed without the base scene when that
/// scene is a query scene (SPEC.md §1 own-base check), ranked on the exact values (equal
/// success counts tie, SPEC.md §0). Returns (ρ, reason if null, n used).
fn own_base(t: &Transfer) -> Result<(Option<f64>, Option<String>, usize), RetrievalError> {
    let (mut own, mut quality) = (Vec::new(), Vec::new());
    for e in 0..t.k {
        let Some(success) = t.own_base[e] else {
            continue;
        };
        let scenes: Vec<usize> = (0..t.n)
            .filter(|&s| Some(s) != t.base_query_scene[e])
            .collect();
        if scenes.is_empty() {
            continue;
        }
        own.push(success);
        quality.push(t.quality_exact(&[e], &scenes)[0]);
    }
    let n = own.len();
    if n < 2 {
        return Ok((
            None,
            Some(format!(
                "own-base success known for {n} experience(s); 2 needed"
            )),
            n,
        ));
    }
    let rho = spearman_exact(&own, &quality).map_err(RetrievalError::stats("own-base Spearman"))?;
    Ok(match rho {
        Some(r) => (Some(r), None, n),
        None => (
            None,
            Some("own-base success or quality is constant".to_string()),
            n,
        ),
    })
}
