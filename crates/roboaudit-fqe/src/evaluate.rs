//! Runs every estimator for every target policy ([`fit_all`]) and scores the estimates against
//! rollout ground truth ([`score`], from [`crate::ground_truth`]).

use crate::FqeError;
use crate::bounded::run_bounded;
use crate::coverage::{SupportIndex, coverage};
use crate::ground_truth::GroundTruth;
use crate::inputs::{FqeInputs, TargetActions};
use crate::linear::{LinearFqeConfig, LinearSystems};
use crate::metrics::{Metrics, Scored, metrics, suite_truth};
use crate::naive::naive_estimate;
use crate::neural::{NeuralFit, NeuralFqeConfig, fit_neural_replicate, fit_neural_with_progress};
use crate::number::compact;
use crate::report::{
    Cell, CellErrors, EstimatorMetrics, FqeReport, InSupport, Interval, PolicyReport, SCHEMA,
    SeedSpread, TruthCell,
};
use rayon::prelude::*;

/// What [`fit_all`] runs.
#[derive(Debug, Clone, PartialEq)]
pub struct FitConfig {
    /// Neural settings (its `seed` is replaced by each of `seeds`); `None` skips neural FQE.
    pub neural: Option<NeuralFqeConfig>,
    /// Linear settings (its `gamma` is used by every estimator).
    pub linear: LinearFqeConfig,
    /// Neural training seeds.
    pub seeds: Vec<u64>,
    /// Episode-bootstrap refits per policy (0: none). Refit `b` trains on resampled episodes
    /// with seed `seeds[b % seeds.len()]` ([`crate::neural::fit_neural_replicate`]); their
    /// estimates give each cell's and each policy's [`crate::report::Interval`].
    pub bootstrap: usize,
    /// Coverage threshold (see [`crate::coverage::DEFAULT_COVERAGE_THRESHOLD`]).
    pub coverage_threshold: f64,
}

impl FitConfig {
    /// Checks every setting against its bounds ([`crate::bounds_settings`]): the discount, the
    /// seeds (1..=100, each once), the neural settings ([`NeuralFqeConfig::validate`]) and the
    /// bootstrap refits (0..=1000) when neural FQE runs, the linear settings
    /// ([`LinearFqeConfig::validate`]) and the coverage threshold (finite, `> 0`).
    ///
    /// # Errors
    /// [`FqeError::Setting`] naming the first setting out of bounds; [`FqeError::InvalidConfig`]
    /// for the fixed (non-user) settings.
    pub fn validate(&self) -> Result<(), FqeError> {
        use crate::bounds_settings::{
            MAX_BOOTSTRAP, check_count, check_discount, check_positive, check_seeds,
        };
        use crate::error::Setting;
        check_discount(Setting::Gamma, self.linear.gamma)?;
        check_seeds(&self.seeds)?;
        if let Some(neural) = &self.neural {
            neural.validate()?;
            check_count(Setting::Bootstrap, self.bootstrap, 0, MAX_BOOTSTRAP)?;
        } else if self.bootstrap > 0 {
            // The refits are neural fits: without neural FQE a bootstrap request would be
            // silently ignored, and the report would show no interval the user asked for.
            return Err(crate::FqeError::setting(
                Setting::Bootstrap,
                format!(
                    "{} asks for neural FQE refits, but this fit runs no neural FQE",
                    self.bootstrap
                ),
            ));
        }
        self.linear.validate()?;
        check_positive(Setting::CoverageThreshold, self.coverage_threshold)
    }
}

/// One target policy to evaluate.
#[derive(Debug, Clone, PartialEq)]
pub struct TargetPolicy {
    /// Name.
    pub name: String,
    /// Its actions, aligned with the inputs' frames.
    pub actions: TargetActions,
}

/// Fits neural (per seed), linear and naive estimates for every policy; no metrics.
/// The (policy, seed) neural fits run in parallel on the current rayon pool, one fit per thread
/// (each single-threaded, so the pool's size is the number of cores the fit uses), then linear
/// FQE per policy; `progress(policy, step)` is called before the neural
/// batch and before each linear fit.
///
/// # Errors
/// Any estimator's error; [`FqeError::InvalidConfig`] for no seeds with neural FQE on.
pub fn fit_all(
    inputs: &FqeInputs,
    policies: &[TargetPolicy],
    config: &FitConfig,
    describe: serde_json::Value,
    progress: &mut dyn FnMut(&str, &str),
) -> Result<FqeReport, FqeError> {
    fit_all_with_progress(inputs, policies, config, describe, progress, &|_| {})
}

/// Units of work of [`fit_all_with_progress`]: every neural gradient step (the cap with
/// `auto_steps`) of every (policy, seed) fit and bootstrap refit, plus one per linear fit.
pub fn fit_work(policies: usize, config: &FitConfig) -> u64 {
    let neural = config.neural.as_ref().map_or(0, |n| {
        n.steps * (config.seeds.len() + config.bootstrap) * policies
    });
    u64::try_from(neural + policies).unwrap_or(u64::MAX)
}

/// [`fit_all`], also calling `work(k)` as units of [`fit_work`] are done (neural steps from the
/// parallel fits, then 1 per linear fit), for a progress bar with rate and ETA. Does not change
/// the report.
///
/// # Errors
/// As [`fit_all`].
pub fn fit_all_with_progress(
    inputs: &FqeInputs,
    policies: &[TargetPolicy],
    config: &FitConfig,
    describe: serde_json::Value,
    progress: &mut dyn FnMut(&str, &str),
    work: &(dyn Fn(u64) + Sync),
) -> Result<FqeReport, FqeError> {
    if config.neural.is_some() && config.seeds.is_empty() {
        return Err(FqeError::InvalidConfig(
            "neural FQE needs at least one seed".into(),
        ));
    }
    let gamma = config.linear.gamma;
    let naive = naive_estimate(inputs, gamma)?;
    let support = SupportIndex::new(inputs)?;
    // Every (policy, seed) neural fit and bootstrap refit is independent: they run in parallel
    // at most rayon's thread count at once, and are collected in (policy, seed, refit) order, so the
    // report does not depend on the schedule.
    let per_policy = config.seeds.len() + config.bootstrap;
    let jobs: Vec<(usize, u64, Option<u64>)> = match &config.neural {
        Some(_) => (0..policies.len())
            .flat_map(|i| {
                let seeds = config.seeds.iter().map(move |s| (i, *s, None));
                let refits = (0..config.bootstrap)
                    .map(move |b| (i, config.seeds[b % config.seeds.len()], Some(b as u64)));
                seeds.chain(refits)
            })
            .collect(),
        None => Vec::new(),
    };
    if !jobs.is_empty() {
        progress(
            "all policies",
            &format!("neural: {} fits in parallel", jobs.len()),
        );
    }
    let neural_fits: Vec<NeuralFit> = match &config.neural {
        Some(neural) => run_bounded(jobs.len(), |j| {
            let (i, seed, replicate) = jobs[j];
            let c = NeuralFqeConfig {
                gamma,
                seed,
                ..neural.clone()
            };
            let on_steps = |k: usize| work(u64::try_from(k).unwrap_or(u64::MAX));
            match replicate {
                None => fit_neural_with_progress(inputs, &policies[i].actions, &c, &on_steps),
                Some(b) => fit_neural_replicate(inputs, &policies[i].actions, &c, b, &on_steps),
            }
        })
        .into_iter()
        .collect::<Result<Vec<_>, _>>()?,
        None => Vec::new(),
    };
    // ΦᵀΦ and Φᵀr do not depend on the policy: computed once, then one solve per policy, the
    // policies in parallel (collected in order).
    progress("all policies", "linear");
    let systems = LinearSystems::new(inputs, &config.linear)?;
    let linear_fits = policies
        .par_iter()
        .with_max_len(1)
        .map(|p| {
            let fit = systems.fit(inputs, &p.actions);
            work(1);
            fit
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut fits = neural_fits.into_iter();
    let mut out = Vec::new();
    let mut flags = Vec::new();
    for (p, lin) in policies.iter().zip(linear_fits) {
        let cov = coverage(inputs, &support, &p.actions, config.coverage_threshold)?;
        let mut per_seed: Vec<Vec<Option<f64>>> = Vec::new();
        let mut curves = Vec::new();
        let mut neural_steps = Vec::new();
        let mut refits: Vec<Vec<Option<f64>>> = Vec::new();
        if let Some(neural) = &config.neural {
            for (k, fit) in fits.by_ref().take(per_policy).enumerate() {
                if k >= config.seeds.len() {
                    refits.push(fit.tasks.iter().map(|t| t.value).collect());
                    continue;
                }
                per_seed.push(fit.tasks.iter().map(|t| t.value).collect());
                curves.push(fit.curve);
                if neural.auto_steps {
                    neural_steps.push(fit.steps);
                }
            }
        }
        let refit_means: Vec<f64> = refits
            .iter()
            .filter_map(|r| {
                let known: Vec<f64> = r.iter().flatten().copied().collect();
                let mean = known.iter().sum::<f64>() / known.len() as f64;
                (!known.is_empty()).then_some(mean)
            })
            .collect();
        let cells = (0..inputs.tasks.len())
            .map(|l| {
                let seeds: Vec<f64> = per_seed.iter().filter_map(|s| s[l]).collect();
                if cov[l].out_of_support {
                    flags.push((p.name.clone(), inputs.tasks[l].clone()));
                }
                Cell {
                    task_index: l,
                    task: inputs.tasks[l].clone(),
                    dataset_episodes: inputs.episodes.iter().filter(|e| e.task == l).count(),
                    neural: SeedSpread::of(&seeds).map(|mut s| {
                        let values: Vec<f64> = refits.iter().filter_map(|r| r[l]).collect();
                        s.interval = Interval::percentile(&values);
                        s
                    }),
                    linear: lin.tasks[l].value,
                    naive: naive[l].value,
                    coverage: cov[l].clone(),
                    truth: None,
                    are: None,
                }
            })
            .collect();
        out.push(PolicyReport {
            policy: p.name.clone(),
            samples: p.actions.samples,
            tasks: cells,
            curves,
            neural_steps,
            neural_interval: Interval::percentile(&refit_means),
            linear_converged: lin.converged,
            linear_iterations: lin.iterations,
            actions_fingerprint: None,
        });
    }
    let mut report = FqeReport {
        schema: SCHEMA.to_owned(),
        gamma,
        seeds: if config.neural.is_some() {
            config.seeds.clone()
        } else {
            Vec::new()
        },
        tasks: inputs.tasks.clone(),
        coverage_threshold: config.coverage_threshold,
        neural_config: config.neural.clone(),
        linear_config: config.linear.clone(),
        inputs: describe,
        policies: out,
        metrics: Vec::new(),
        coverage_flags: flags,
        notes: Vec::new(),
        median_episode_frames: inputs.median_episode_frames(),
        dataset: None,
        ground_truth: None,
    };
    report.notes = crate::notes::reliability_notes(&report);
    Ok(report)
}

fn are(estimate: Option<f64>, v: f64) -> Option<f64> {
    estimate
        .filter(|_| v != 0.0)
        .map(|e| (e - v).abs() / v.abs())
}

/// Estimate of `estimator` in a cell: neural uses the seed mean, or seed `seed` when given.
fn pick(cell: &Cell, estimator: &str, seed: Option<usize>) -> Option<f64> {
    match estimator {
        "neural" => cell
            .neural
            .as_ref()
            .map(|s| seed.and_then(|k| s.seeds.get(k).copied()).unwrap_or(s.mean)),
        "linear" => cell.linear,
        _ => cell.naive,
    }
}

/// Suite and per-task metrics of `estimator` over the policies `keep` accepts (neural: the seed
/// mean, or seed `seed`).
fn estimator_metrics(
    report: &FqeReport,
    estimator: &str,
    seed: Option<usize>,
    keep: &dyn Fn(&PolicyReport) -> bool,
) -> Result<Option<(Metrics, Vec<Metrics>)>, FqeError> {
    let n_tasks = report.tasks.len();
    let mut task_rows: Vec<Vec<Scored>> = vec![Vec::new(); n_tasks];
    let mut suite_rows = Vec::new();
    let mut pairs = Vec::new();
    for p in report.policies.iter().filter(|p| keep(p)) {
        let mut sum = 0.0;
        let mut truths = Vec::new();
        let (mut count, mut with_truth) = (0u32, 0u32);
        for c in &p.tasks {
            with_truth += u32::from(c.truth.is_some());
            let (Some(t), Some(e)) = (&c.truth, pick(c, estimator, seed)) else {
                continue;
            };
            let s = Scored {
                estimate: e,
                v_pi: t.v_pi,
                success_rate: t.success_rate,
            };
            task_rows[c.task_index].push(s);
            pairs.push(s);
            sum += e;
            truths.push((t.v_pi, t.success_rate, t.n_episodes));
            count += 1;
        }
        // A policy without an estimate on some task with ground truth (a diverged linear
        // solve) has no suite value: averaging its other tasks would compare it over another
        // set of tasks than the rest. Its estimated cells still count per task and in the ARE.
        if count > 0 && count == with_truth {
            let n = f64::from(count);
            // Truths averaged so that equal ground truth ties (issue 21, SPEC.md §0).
            let (v_pi, success_rate) = suite_truth(&truths);
            suite_rows.push(Scored {
                estimate: sum / n,
                v_pi,
                success_rate,
            });
        }
    }
    if pairs.is_empty() {
        return Ok(None);
    }
    let suite = metrics(&suite_rows, &pairs)?;
    let tasks = task_rows
        .iter()
        .map(|rows| metrics(rows, rows))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Some((suite, tasks)))
}

/// [`score`], then records the scored file's fingerprint ([`FqeReport::ground_truth`]) and
/// replaces the report's `ground truth:` notes ([`crate::notes::refresh_truth_notes`]): what a
/// fit and `fqe evaluate` both do with the ground truth they read.
///
/// # Errors
/// As [`score`].
pub fn score_recorded(
    report: &mut FqeReport,
    truth: &GroundTruth,
    fingerprint: &str,
) -> Result<(), FqeError> {
    score(report, truth)?;
    report.ground_truth = Some(fingerprint.to_owned());
    crate::notes::refresh_truth_notes(report);
    Ok(())
}

/// Attaches ground truth (matched by policy name, then task text, else `task_index` for a row
/// whose text is none of the report's tasks, so that no row scores two cells) and fills ARE per cell
/// and the metrics of every estimator, replacing any earlier scoring. Cells without ground truth
/// are left out of the metrics.
///
/// # Errors
/// [`FqeError::InvalidInputs`] when the ground truth's `γ` differs from the report's by more than
/// 1e-12 (the values would not be comparable); [`FqeError::Stats`].
pub fn score(report: &mut FqeReport, truth: &GroundTruth) -> Result<(), FqeError> {
    if (truth.gamma - report.gamma).abs() > 1e-12 {
        return Err(FqeError::InvalidInputs(format!(
            "ground truth uses gamma {}, the estimates gamma {}: refit with `fqe fit --gamma {}` (`fqe evaluate` scores the estimates as they are)",
            compact(truth.gamma),
            compact(report.gamma),
            compact(truth.gamma)
        )));
    }
    let fit_tasks = report.tasks.clone();
    for p in &mut report.policies {
        // A report scored before (`fqe evaluate`) keeps no truth the new file does not give.
        for c in &mut p.tasks {
            c.truth = None;
            c.are = None;
        }
        let Some(tp) = truth.policies.iter().find(|t| t.policy == p.policy) else {
            continue;
        };
        for c in &mut p.tasks {
            // By index only a row whose text names none of the fit's tasks: a row of another
            // task's text would otherwise score two cells, its own and the one at its index.
            let t = tp.tasks.iter().find(|t| t.task == c.task).or_else(|| {
                tp.tasks
                    .iter()
                    .find(|t| t.task_index == Some(c.task_index) && !fit_tasks.contains(&t.task))
            });
            if let Some(t) = t {
                c.truth = Some(TruthCell {
                    v_pi: t.v_pi,
                    success_rate: t.success_rate,
                    n_episodes: t.n_episodes,
                });
                c.are = Some(CellErrors {
                    neural: are(c.neural.as_ref().map(|s| s.mean), t.v_pi),
                    linear: are(c.linear, t.v_pi),
                    naive: are(c.naive, t.v_pi),
                    undefined: t.v_pi == 0.0,
                });
            }
        }
    }
    let flagged = |p: &PolicyReport| p.tasks.iter().any(|c| c.coverage.out_of_support);
    let excluded: Vec<String> = report
        .policies
        .iter()
        .filter(|p| flagged(p))
        .map(|p| p.policy.clone())
        .collect();
    let mut all = Vec::new();
    for est in crate::report::ESTIMATORS {
        let Some((suite, tasks)) = estimator_metrics(report, est, None, &|_| true)? else {
            continue;
        };
        let mut per_seed = Vec::new();
        if est == "neural" {
            for k in 0..report.seeds.len() {
                if let Some((m, _)) = estimator_metrics(report, est, Some(k), &|_| true)? {
                    per_seed.push(m);
                }
            }
        }
        let suite_in_support = if excluded.is_empty() {
            None
        } else {
            estimator_metrics(report, est, None, &|p| !flagged(p))?.map(|(metrics, _)| InSupport {
                excluded: excluded.clone(),
                metrics,
            })
        };
        all.push(EstimatorMetrics {
            estimator: est.to_owned(),
            suite,
            tasks,
            suite_per_seed: per_seed,
            suite_in_support,
        });
    }
    report.metrics = all;
    Ok(())
}
