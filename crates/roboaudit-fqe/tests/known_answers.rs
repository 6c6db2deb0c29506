//! Known-answer tests (issue 7): a tabular chain with one-hot inputs whose `V^π` is known by
//! dynamic programming, a two-input chain where the target action at `x_t` and `x_{t+1}` differ,
//! and multi-part inputs whose second part carries all the value information.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use roboaudit_fqe::{
    ActionTerms, EpisodeSpan, FitConfig, FqeInputs, InputPart, LinearFqeConfig, LinearSolver,
    NeuralFqeConfig, TargetActions, TargetPolicy, fit_all, fit_linear, fit_neural, naive_estimate,
};

/// One recorded episode: per frame (state, action), and the terminal label.
struct Ep {
    states: Vec<usize>,
    actions: Vec<usize>,
    success: bool,
    task: usize,
}

fn one_hot(i: usize, n: usize) -> Vec<f32> {
    let mut v = vec![0.0; n];
    v[i] = 1.0;
    v
}

/// Builds inputs with one-hot states split into the given parts (`part_of(state)` gives each
/// part's vector) and one-hot actions; target actions per state from `policy(state)` (M samples).
fn build(
    eps: &[Ep],
    n_actions: usize,
    tasks: usize,
    parts: &dyn Fn(usize) -> Vec<Vec<f32>>,
    part_names: &[&str],
    policy: &dyn Fn(usize) -> Vec<usize>,
) -> (FqeInputs, TargetActions) {
    let mut values: Vec<Vec<f32>> = vec![Vec::new(); part_names.len()];
    let mut widths = vec![0; part_names.len()];
    let mut actions = Vec::new();
    let mut target = Vec::new();
    let mut episodes = Vec::new();
    let mut frame_index = Vec::new();
    let mut samples = 0;
    for (i, ep) in eps.iter().enumerate() {
        episodes.push(EpisodeSpan {
            episode_index: i64::try_from(i).unwrap(),
            start: frame_index.len(),
            len: ep.states.len(),
            task: ep.task,
            success: ep.success,
        });
        for (s, a) in ep.states.iter().zip(&ep.actions) {
            for (j, part) in parts(*s).into_iter().enumerate() {
                widths[j] = part.len();
                values[j].extend(part);
            }
            actions.extend(one_hot(*a, n_actions));
            let acts = policy(*s);
            samples = acts.len();
            for b in acts {
                target.extend(one_hot(b, n_actions));
            }
            frame_index.push(i64::try_from(frame_index.len()).unwrap());
        }
    }
    let inputs = FqeInputs {
        parts: part_names
            .iter()
            .zip(values)
            .zip(widths)
            .map(|((name, values), width)| InputPart {
                name: (*name).to_owned(),
                width,
                values,
            })
            .collect(),
        action_dim: n_actions,
        actions,
        episodes,
        tasks: (0..tasks).map(|l| format!("task {l}")).collect(),
        frame_index,
    };
    let target = TargetActions {
        samples,
        action_dim: n_actions,
        values: target,
    };
    (inputs, target)
}

// Chain of S states; action 0 = left, 1 = right. Right at S−1 ends in success, left at 0 ends in
// failure; otherwise the state moves by one. π(right | s) = P_RIGHT[s], represented exactly by 4
// samples per frame.
const S: usize = 5;
const P_RIGHT: [usize; S] = [4, 3, 4, 2, 3]; // in quarters
const GAMMA: f64 = 0.9;

fn chain_policy(s: usize) -> Vec<usize> {
    (0..4).map(|j| usize::from(j < P_RIGHT[s])).collect()
}

/// Exact `V^π(s)` by value iteration on the known model (converged to machine precision).
fn chain_values() -> Vec<f64> {
    let mut v = vec![0.0; S];
    for _ in 0..2000 {
        let mut next = vec![0.0; S];
        for s in 0..S {
            let p = P_RIGHT[s] as f64 / 4.0;
            let right = if s == S - 1 { 1.0 } else { GAMMA * v[s + 1] };
            let left = if s == 0 { 0.0 } else { GAMMA * v[s - 1] };
            next[s] = p * right + (1.0 - p) * left;
        }
        v = next;
    }
    v
}

/// Uniform-random behaviour episodes from random start states; two tasks share the dynamics.
fn chain_episodes(n: usize, seed: u64) -> Vec<Ep> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|i| {
            let mut s = rng.random_range(0..S);
            let (mut states, mut actions) = (Vec::new(), Vec::new());
            loop {
                let a = rng.random_range(0..2);
                states.push(s);
                actions.push(a);
                match (s, a) {
                    (0, 0) => {
                        break Ep {
                            states,
                            actions,
                            success: false,
                            task: i % 2,
                        };
                    }
                    (x, 1) if x == S - 1 => {
                        break Ep {
                            states,
                            actions,
                            success: true,
                            task: i % 2,
                        };
                    }
                    (_, 0) => s -= 1,
                    _ => s += 1,
                }
            }
        })
        .collect()
}

fn chain_inputs(seed: u64) -> (FqeInputs, TargetActions, Vec<f64>) {
    let eps = chain_episodes(300, seed);
    let v = chain_values();
    let truth = (0..2)
        .map(|l| {
            let starts: Vec<f64> = eps
                .iter()
                .filter(|e| e.task == l)
                .map(|e| v[e.states[0]])
                .collect();
            starts.iter().sum::<f64>() / starts.len() as f64
        })
        .collect();
    let (inputs, target) = build(
        &eps,
        2,
        2,
        &|s| vec![one_hot(s, S)],
        &["state"],
        &chain_policy,
    );
    (inputs, target, truth)
}

fn exact_linear() -> LinearFqeConfig {
    LinearFqeConfig {
        gamma: GAMMA,
        ridge: 1e-10,
        action_terms: ActionTerms::Linear,
        solver: LinearSolver::Lstd,
        max_iterations: 10_000,
        tolerance: 1e-13,
    }
}

const SOLVERS: [LinearSolver; 2] = [LinearSolver::Lstd, LinearSolver::Iterated];

#[test]
fn linear_fqe_matches_dynamic_programming_on_a_tabular_chain() {
    let (inputs, target, truth) = chain_inputs(7);
    for solver in SOLVERS {
        let config = LinearFqeConfig {
            solver,
            ..exact_linear()
        };
        let fit = fit_linear(&inputs, &target, &config).unwrap();
        assert!(fit.converged, "{} iterations", fit.iterations);
        for (est, v) in fit.tasks.iter().zip(&truth) {
            let got = est.value.unwrap();
            assert!(
                (got - v).abs() < 1e-6,
                "{solver:?} task {}: {got} vs exact {v}",
                est.task
            );
        }
    }
    // The naive average is not the target policy's value here: the chain tells them apart.
    let naive = naive_estimate(&inputs, GAMMA).unwrap();
    assert!(
        (naive[0].value.unwrap() - truth[0]).abs() > 0.05,
        "naive {:?} truth {truth:?}",
        naive
    );
}

#[test]
fn neural_fqe_matches_dynamic_programming_within_two_hundredths() {
    let (inputs, target, truth) = chain_inputs(11);
    let config = NeuralFqeConfig {
        gamma: GAMMA,
        steps: 3000,
        batch_size: 128,
        hidden: 64,
        part_embedding: 16,
        action_embedding: 8,
        task_embedding: 4,
        learning_rate: 2e-3,
        target_update_every: 50,
        curve_every: 500,
        seed: 3,
        ..NeuralFqeConfig::default()
    };
    let fit = fit_neural(&inputs, &target, &config).unwrap();
    for (est, v) in fit.tasks.iter().zip(&truth) {
        let got = est.value.unwrap();
        assert!(
            (got - v).abs() < 0.02,
            "task {}: {got} vs exact {v}",
            est.task
        );
    }
    assert_eq!(fit.curve.len(), 6);
    assert!(fit.curve.last().unwrap().loss < fit.curve[0].loss);
    // Same seed, same bytes.
    let again = fit_neural(&inputs, &target, &config).unwrap();
    assert_eq!(fit, again);
}

#[test]
fn neural_fqe_with_a_polyak_target_matches_dynamic_programming() {
    let (inputs, target, truth) = chain_inputs(11);
    let config = NeuralFqeConfig {
        gamma: GAMMA,
        steps: 3000,
        batch_size: 128,
        hidden: 64,
        part_embedding: 16,
        action_embedding: 8,
        task_embedding: 4,
        learning_rate: 2e-3,
        target_tau: 0.05,
        seed: 3,
        ..NeuralFqeConfig::default()
    };
    let fit = fit_neural(&inputs, &target, &config).unwrap();
    for (est, v) in fit.tasks.iter().zip(&truth) {
        let got = est.value.unwrap();
        assert!(
            (got - v).abs() < 0.02,
            "task {}: {got} vs exact {v}",
            est.task
        );
    }
    let bad = NeuralFqeConfig {
        target_tau: 1.5,
        ..config
    };
    assert!(fit_neural(&inputs, &target, &bad).is_err());
}

/// Two inputs A → B. At B action 0 succeeds and action 1 fails. π(A) = 1, π(B) = 0, so
/// `V^π(A) = γ`. An estimator that bootstraps `Q(x_{t+1}, π(x_t))` gets `Q(B, 1) = 0` instead.
fn two_input_chain() -> (FqeInputs, TargetActions) {
    let eps: Vec<Ep> = (0..40)
        .map(|i| {
            let (a0, a1) = (i % 2, (i / 2) % 2);
            Ep {
                states: vec![0, 1],
                actions: vec![a0, a1],
                success: a1 == 0,
                task: 0,
            }
        })
        .collect();
    build(&eps, 2, 1, &|s| vec![one_hot(s, 2)], &["x"], &|s| {
        vec![usize::from(s == 0)]
    })
}

#[test]
fn bellman_target_uses_the_target_action_at_the_next_input() {
    let (inputs, target) = two_input_chain();
    for solver in SOLVERS {
        let config = LinearFqeConfig {
            solver,
            ..exact_linear()
        };
        let fit = fit_linear(&inputs, &target, &config).unwrap();
        assert!(
            (fit.tasks[0].value.unwrap() - GAMMA).abs() < 1e-6,
            "{solver:?}"
        );
    }

    // The bug this test exists for: the Bellman target evaluated at π(x_t) instead of π(x_{t+1}).
    // Feeding each next frame the previous frame's target action reproduces that estimator; the
    // assertion above must reject it.
    let mut buggy = target.clone();
    for e in &inputs.episodes {
        for k in (e.start + 1..e.start + e.len).rev() {
            let prev = target.frame(k - 1).to_vec();
            buggy.values[k * 2..k * 2 + 2].copy_from_slice(&prev);
        }
    }
    for solver in SOLVERS {
        let config = LinearFqeConfig {
            solver,
            ..exact_linear()
        };
        let wrong = fit_linear(&inputs, &buggy, &config).unwrap();
        assert!(
            (wrong.tasks[0].value.unwrap() - GAMMA).abs() > 0.5,
            "{solver:?}"
        );
    }
}

/// Three-frame episodes; the image part is the same on every frame, the proprioception part is a
/// one-hot of (time, start kind). Success iff the start kind is "good"; so the value at the initial
/// inputs is `γ²·P(good)`, which only the second part can tell from later frames.
fn multi_part() -> (FqeInputs, TargetActions, f64) {
    let eps: Vec<Ep> = (0..60)
        .map(|i| {
            let good = i % 3 != 0;
            let base = if good { 3 } else { 0 };
            Ep {
                states: vec![base, base + 1, base + 2],
                actions: vec![0, 0, 0],
                success: good,
                task: 0,
            }
        })
        .collect();
    let (inputs, target) = build(
        &eps,
        1,
        1,
        &|s| vec![vec![0.25, 0.75, 0.5], one_hot(s, 6)],
        &["image", "proprio"],
        &|_| vec![0],
    );
    let gamma = 0.5_f64;
    (inputs, target, gamma * gamma * 40.0 / 60.0)
}

#[test]
fn every_input_part_is_used_at_the_initial_inputs() {
    let (inputs, target, truth) = multi_part();
    for solver in SOLVERS {
        let config = LinearFqeConfig {
            gamma: 0.5,
            solver,
            ..exact_linear()
        };
        let fit = fit_linear(&inputs, &target, &config).unwrap();
        assert!(
            (fit.tasks[0].value.unwrap() - truth).abs() < 1e-6,
            "{solver:?}"
        );
    }
    let config = LinearFqeConfig {
        gamma: 0.5,
        ..exact_linear()
    };

    // An estimator that sees only the first part cannot tell initial frames from later ones and
    // lands far from the truth: the assertion above would reject it.
    let mut first_only = inputs.clone();
    first_only.parts.truncate(1);
    let wrong = fit_linear(&first_only, &target, &config).unwrap();
    assert!((wrong.tasks[0].value.unwrap() - truth).abs() > 0.1);
}

fn small_neural() -> NeuralFqeConfig {
    NeuralFqeConfig {
        gamma: GAMMA,
        steps: 3000,
        batch_size: 128,
        hidden: 64,
        part_embedding: 16,
        action_embedding: 8,
        task_embedding: 4,
        learning_rate: 2e-3,
        target_update_every: 50,
        curve_every: 100,
        seed: 3,
        ..NeuralFqeConfig::default()
    }
}

#[test]
fn auto_steps_stop_a_settled_fit_before_the_cap_near_dynamic_programming() {
    let (inputs, target, truth) = chain_inputs(11);
    let config = NeuralFqeConfig {
        steps: 20_000,
        auto_steps: true,
        ..small_neural()
    };
    let fit = fit_neural(&inputs, &target, &config).unwrap();
    // At least one backup (a target copy every 50 steps) per frame of the median episode.
    let mut lens: Vec<usize> = inputs.episodes.iter().map(|e| e.len).collect();
    lens.sort_unstable();
    let median = lens[lens.len() / 2];
    assert!(
        fit.steps >= median * 50 && fit.steps < 20_000,
        "{} steps, median episode {median} frames",
        fit.steps
    );
    assert_eq!(fit.curve.last().unwrap().step, fit.steps);
    for (est, v) in fit.tasks.iter().zip(&truth) {
        let got = est.value.unwrap();
        assert!(
            (got - v).abs() < 0.03,
            "task {}: {got} vs exact {v}",
            est.task
        );
    }
    let fixed = fit_neural(&inputs, &target, &small_neural()).unwrap();
    assert_eq!(fixed.steps, 3000);
}

#[test]
fn fit_all_with_bootstrap_refits_gives_the_same_bytes_on_one_and_two_threads() {
    let (inputs, target, _) = chain_inputs(11);
    let policies = vec![
        TargetPolicy {
            name: "chain".into(),
            actions: target.clone(),
        },
        TargetPolicy {
            name: "chain again".into(),
            actions: target,
        },
    ];
    let config = FitConfig {
        neural: Some(NeuralFqeConfig {
            steps: 400,
            ..small_neural()
        }),
        linear: exact_linear(),
        seeds: vec![0, 1],
        bootstrap: 3,
        coverage_threshold: 3.0,
    };
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let report = pool
            .install(|| {
                fit_all(
                    &inputs,
                    &policies,
                    &config,
                    serde_json::json!({}),
                    &mut |_, _| {},
                )
            })
            .unwrap();
        serde_json::to_string(&report).unwrap()
    };
    let one = run(1);
    assert_eq!(one, run(2));
    let report: serde_json::Value = serde_json::from_str(&one).unwrap();
    for p in report["policies"].as_array().unwrap() {
        let i = &p["neural_interval"];
        assert_eq!(i["replicates"], 3);
        assert!(i["lo"].as_f64().unwrap() <= i["hi"].as_f64().unwrap());
        for c in p["tasks"].as_array().unwrap() {
            assert_eq!(c["neural"]["interval"]["replicates"], 3);
        }
    }
    // The same policy twice: the same fits, refits and intervals.
    assert_eq!(
        report["policies"][0]["tasks"],
        report["policies"][1]["tasks"]
    );
}
