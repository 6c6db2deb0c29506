//! Small deterministic audit outputs for the tests: a retrieval run with its audit, a demo
//! folder with two tasks, a memory audit and an FQE report scored against ground truth.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use roboaudit_data::{MemoryLabel, MemoryRecord};
use roboaudit_fqe::ground_truth::{GROUND_TRUTH_SCHEMA, NoExtra, TruthPolicy, TruthTask};
use roboaudit_fqe::report::{Cell, PolicyReport, SeedSpread};
use roboaudit_fqe::{
    CurvePoint, FqeReport, GroundTruth, LinearFqeConfig, NeuralFqeConfig, TaskCoverage,
};
use roboaudit_memory::{Plan, analyze};
use roboaudit_retrieval::synthetic::{SyntheticSpec, generate};
use roboaudit_retrieval::{AuditConfig, AuditReport, run_audit};
use std::path::Path;

/// The synthetic retrieval spec of the fixtures (K = 5, n = 8, 2 seeds, 2 representations).
pub fn spec(seed: u64) -> SyntheticSpec {
    SyntheticSpec {
        experiences: 5,
        scenes: 8,
        seeds: 2,
        representations: 2,
        dim: 4,
        seed,
    }
}

/// Writes a run folder (CSV tables, no embeddings: the report does not read them) and returns
/// the inputs' audit.
pub fn write_retrieval_run(run: &Path, seed: u64) -> AuditReport {
    let inputs = generate(&spec(seed));
    std::fs::create_dir_all(run).unwrap();
    roboaudit_data::write_executions(run.join("executions.csv"), &inputs.executions).unwrap();
    roboaudit_data::write_scenes(run.join("scenes.csv"), &inputs.scenes).unwrap();
    roboaudit_data::write_experiences(run.join("experiences.csv"), &inputs.experiences).unwrap();
    let config = AuditConfig {
        seed: 0,
        resamples: 200,
        permutations: 200,
        library_sizes: vec![3],
        random_subsets: 20,
        power_replicates: 20,
        ..AuditConfig::default()
    };
    run_audit(&inputs, &config.check().unwrap()).unwrap()
}

/// Writes `audit.json` of `report` into `dir`.
pub fn write_json<T: serde::Serialize>(dir: &Path, file: &str, value: &T) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join(file), serde_json::to_vec_pretty(value).unwrap()).unwrap();
}

/// A retrieval run at `root/run` with its audit in `root/run/audit` (the layout `retrieval
/// collect` suggests).
pub fn retrieval_fixture(root: &Path) {
    let audit = write_retrieval_run(&root.join("run"), 1);
    write_json(&root.join("run/audit"), "audit.json", &audit);
}

/// A demo folder: `audit.json` (`roboaudit.demo.v1`) with tasks `stack` and `door` and their
/// run folders under `runs/`.
pub fn demo_fixture(root: &Path) {
    let mut tasks = Vec::new();
    for (i, task) in ["stack", "door"].iter().enumerate() {
        let audit = write_retrieval_run(&root.join("runs").join(task), 10 + i as u64);
        tasks.push(serde_json::json!({
            "task": task,
            "collection": {"library": 5},
            "library": {"pool": 5},
            "run_dir": format!("runs/{task}"),
            "audit": audit,
        }));
    }
    write_json(
        root,
        "audit.json",
        &serde_json::json!({"schema": "roboaudit.demo.v1", "scale": "small", "tasks": tasks}),
    );
}

/// One record of action `chosen` (branch index, or `None` for ambiguous) under `memory`, executed
/// in `world`.
fn record(
    pair: &str,
    memory: MemoryLabel,
    seed: i64,
    world: MemoryLabel,
    chosen: Option<MemoryLabel>,
) -> MemoryRecord {
    let toward = match chosen {
        Some(c) if c == world => 1.0,
        Some(_) => 0.0,
        None => 0.5,
    };
    MemoryRecord {
        pair_id: pair.into(),
        memory,
        action_seed: seed,
        world,
        progress_warranted: toward,
        progress_other: 1.0 - toward,
        value: toward,
        action: vec![chosen.map_or(0.5, |c| c.index() as f32)],
        present_equal: true,
        route: None,
        stratum: None,
        plan_hash: None,
    }
}

/// A memory audit of 4 pairs × 2 seeds: p0 and p3 faithful, p1 wrong under memory B at seed 1,
/// p2 ambiguous under memory A at seed 0.
pub fn memory_fixture(dir: &Path) {
    let mut records = Vec::new();
    for pair in ["p0", "p1", "p2", "p3"] {
        for seed in [0i64, 1] {
            for memory in MemoryLabel::BOTH {
                let chosen = match (pair, seed, memory) {
                    ("p1", 1, MemoryLabel::B) => Some(MemoryLabel::A),
                    ("p2", 0, MemoryLabel::A) => None,
                    _ => Some(memory),
                };
                for world in MemoryLabel::BOTH {
                    records.push(record(pair, memory, seed, world, chosen));
                }
            }
        }
    }
    let plan = Plan {
        seeds: vec![0, 1],
        bootstrap: roboaudit_memory::BootstrapPlan {
            resamples: 200,
            ..Default::default()
        },
        ..Plan::default()
    };
    let audit = analyze(&records, &plan).unwrap();
    write_json(dir, "audit.json", &audit);
}

fn cell(task: usize, neural: &[f64], linear: f64, naive: f64) -> Cell {
    Cell {
        task_index: task,
        task: format!("push {}", ["left", "right"][task]),
        dataset_episodes: 20,
        neural: SeedSpread::of(neural),
        linear: Some(linear),
        naive: Some(naive),
        coverage: TaskCoverage {
            task,
            mean_distance: Some(0.4 + 0.1 * task as f64),
            far_fraction: Some(0.05),
            out_of_support: false,
        },
        truth: None,
        are: None,
    }
}

fn curve(scale: f64) -> Vec<CurvePoint> {
    (1..=5)
        .map(|k| CurvePoint {
            step: k * 100,
            loss: scale / k as f64,
            mean_value: 0.5,
        })
        .collect()
}

/// An FQE report of two policies on two tasks, scored against ground truth.
pub fn fqe_fixture(dir: &Path) {
    let mut report = FqeReport {
        schema: roboaudit_fqe::SCHEMA.into(),
        gamma: 0.9,
        seeds: vec![0, 1],
        tasks: vec!["push left".into(), "push right".into()],
        coverage_threshold: roboaudit_fqe::DEFAULT_COVERAGE_THRESHOLD,
        neural_config: Some(NeuralFqeConfig::default()),
        linear_config: LinearFqeConfig::default(),
        inputs: serde_json::json!({"dataset": "fixture"}),
        policies: vec![
            PolicyReport {
                policy: "good".into(),
                samples: 4,
                tasks: vec![
                    cell(0, &[0.62, 0.70], 0.66, 0.50),
                    cell(1, &[0.55, 0.59], 0.52, 0.50),
                ],
                curves: vec![curve(0.2), curve(0.3)],
                neural_steps: Vec::new(),
                neural_interval: None,
                linear_converged: true,
                linear_iterations: 12,
                actions_fingerprint: None,
            },
            PolicyReport {
                policy: "weak".into(),
                samples: 4,
                tasks: vec![
                    cell(0, &[0.31, 0.41], 0.30, 0.50),
                    cell(1, &[0.22, 0.20], 0.28, 0.50),
                ],
                curves: vec![curve(0.1), curve(0.15)],
                neural_steps: Vec::new(),
                neural_interval: None,
                linear_converged: true,
                linear_iterations: 9,
                actions_fingerprint: None,
            },
        ],
        metrics: Vec::new(),
        coverage_flags: Vec::new(),
        notes: Vec::new(),
        median_episode_frames: None,
        dataset: None,
        ground_truth: None,
    };
    let task = |i: usize, v: f64| TruthTask {
        task: format!("push {}", ["left", "right"][i]),
        task_index: Some(i),
        name: NoExtra {},
        v_pi: v,
        success_rate: v / 0.9,
        spread: NoExtra {},
        n_episodes: Some(50),
    };
    let truth = GroundTruth {
        schema: GROUND_TRUTH_SCHEMA.into(),
        gamma: 0.9,
        run: NoExtra {},
        dataset: NoExtra {},
        policies: vec![
            TruthPolicy {
                policy: "good".into(),
                about: NoExtra {},
                actions_file: None,
                values: NoExtra {},
                tasks: vec![task(0, 0.68), task(1, 0.54)],
            },
            TruthPolicy {
                policy: "weak".into(),
                about: NoExtra {},
                actions_file: None,
                values: NoExtra {},
                tasks: vec![task(0, 0.36), task(1, 0.18)],
            },
        ],
        n_dataset_episodes: None,
    };
    roboaudit_fqe::score(&mut report, &truth).unwrap();
    write_json(dir, "fqe.json", &report);
}
