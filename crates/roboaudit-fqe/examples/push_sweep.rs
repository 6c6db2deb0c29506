//! Experiment harness (not part of the library): loads an `fqe collect` run once and fits
//! estimator variants on it, printing suite metrics against the ground truth.
//!
//! `push_sweep RUN CACHE COMPONENTS [name=value ...]` (the last of a repeated name wins);
//! `steps=N auto=1` is `--steps auto` capped at N; `time=0` leaves out the time input; `temb=N`
//! sets its embedding width (16; 0: the part width); `pemb`, `aemb`, `kemb` the part, action and
//! task embedding widths (64, 32, 16); `wd` the AdamW weight decay (1e-4).
#![allow(clippy::print_stdout, clippy::unwrap_used, missing_docs)]

use std::path::PathBuf;
use std::time::Instant;

use roboaudit_data::lerobot::{LeRobotDataset, SuccessSource, read_policy_actions};
use roboaudit_fqe::{
    ActionTerms, Encoder, FitConfig, FrameFeatures, LinearFqeConfig, LoadOptions, NeuralFqeConfig,
    TargetPolicy, align_target_actions, fit_all, load_lerobot, read_ground_truth, score,
};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let run = PathBuf::from(&args[0]);
    let cache = PathBuf::from(&args[1]);
    let components: usize = args[2].parse().unwrap();
    let kv: Vec<(String, String)> = args[3..]
        .iter()
        .map(|a| {
            let (k, v) = a.split_once('=').unwrap();
            (k.to_owned(), v.to_owned())
        })
        .collect();
    let get = |k: &str| {
        kv.iter()
            .rev()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.clone())
    };
    // Run with RAYON_NUM_THREADS=1 CANDLE_NUM_THREADS=1 (candle single-threaded, as the CLI
    // sets it); the fits themselves run on this many threads.
    let threads: usize = get("threads").map_or(2, |v| v.parse().unwrap());
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build_global()
        .unwrap();
    let t = Instant::now();
    let ds = LeRobotDataset::open(run.join("dataset")).unwrap();
    let features = get("features").unwrap_or_else(|| "image:observation.images.scene".into());
    let features = match features.split_once(':') {
        Some(("image", k)) => FrameFeatures::Image(k.into()),
        Some(("state", k)) => FrameFeatures::Vector(k.into()),
        _ => FrameFeatures::None,
    };
    let opts = LoadOptions {
        features,
        state_feature: get("state")
            .or(Some("observation.state".into()))
            .filter(|s| s != "none"),
        action_feature: "action".into(),
        labels: SuccessSource::Column("next.success".into()),
        encoder: Encoder::raw32(),
        components,
        component_frames: 20_000,
        cache_dir: Some(cache),
        seed: 0,
        time_input: get("time").is_none_or(|v| v != "0"),
    };
    let loaded = load_lerobot(&ds, &opts).unwrap();
    println!(
        "loaded {} frames, parts {:?} in {:.1} s",
        loaded.inputs.n_frames(),
        loaded
            .inputs
            .parts
            .iter()
            .map(|p| (p.name.clone(), p.width))
            .collect::<Vec<_>>(),
        t.elapsed().as_secs_f64()
    );
    let truth = read_ground_truth(&run.join("ground_truth.json")).unwrap();
    let only = get("policies");
    let policies: Vec<TargetPolicy> = truth
        .policies
        .iter()
        .filter(|p| {
            only.as_ref()
                .is_none_or(|o| o.split(',').any(|n| n == p.policy))
        })
        .map(|p| {
            let file = run.join(p.actions_file.as_ref().unwrap());
            let actions = read_policy_actions(&file).unwrap();
            TargetPolicy {
                name: p.policy.clone(),
                actions: align_target_actions(&loaded, &actions).unwrap(),
            }
        })
        .collect();
    if let Some(dir) = get("dump") {
        dump(&PathBuf::from(dir), &loaded.inputs, &policies);
        return;
    }
    let f = |k: &str, d: f64| get(k).map_or(d, |v| v.parse().unwrap());
    let u = |k: &str, d: usize| get(k).map_or(d, |v| v.parse().unwrap());
    let linear = LinearFqeConfig {
        ridge: f("ridge", 1e-3),
        action_terms: if get("terms").as_deref() == Some("linear") {
            ActionTerms::Linear
        } else {
            ActionTerms::Quadratic
        },
        ..LinearFqeConfig::default()
    };
    let neural = (u("steps", 0) > 0).then(|| NeuralFqeConfig {
        steps: u("steps", 0),
        auto_steps: get("auto").is_some(),
        batch_size: u("batch", 256),
        hidden: u("hidden", 256),
        // `temb=0`: the time input at the part width (the demo's setting).
        time_embedding: Some(u("temb", 16)).filter(|w| *w > 0),
        part_embedding: u("pemb", 64),
        action_embedding: u("aemb", 32),
        task_embedding: u("kemb", 16),
        learning_rate: f("lr", 1e-3),
        weight_decay: f("wd", 1e-4),
        target_update_every: u("period", 100),
        target_tau: f("tau", 0.0),
        curve_every: u("curve", 500),
        head: if get("head").as_deref() == Some("linear") {
            roboaudit_fqe::QHead::Linear
        } else {
            roboaudit_fqe::QHead::Sigmoid
        },
        ..NeuralFqeConfig::default()
    });
    let seeds: Vec<u64> = get("seeds").map_or(vec![0], |s| {
        s.split(',').map(|x| x.parse().unwrap()).collect()
    });
    let config = FitConfig {
        neural,
        linear,
        seeds,
        bootstrap: u("bootstrap", 0),
        coverage_threshold: 3.0,
    };
    let t = Instant::now();
    let mut report = fit_all(
        &loaded.inputs,
        &policies,
        &config,
        serde_json::Value::Null,
        &mut |_, _| {},
    )
    .unwrap();
    println!("fit in {:.1} s", t.elapsed().as_secs_f64());
    score(&mut report, &truth).unwrap();
    for p in &report.policies {
        let mean = |pick: &dyn Fn(&roboaudit_fqe::report::Cell) -> Option<f64>| {
            let v: Vec<f64> = p.tasks.iter().filter_map(pick).collect();
            v.iter().sum::<f64>() / v.len().max(1) as f64
        };
        let truth_v = mean(&|c| c.truth.as_ref().map(|t| t.v_pi));
        let lin = mean(&|c| c.linear);
        let neu = mean(&|c| c.neural.as_ref().map(|s| s.mean));
        let per_task: Vec<String> = p
            .tasks
            .iter()
            .map(|c| {
                format!(
                    "{:.2}/{:.2}/{:.2}",
                    c.truth.as_ref().map_or(f64::NAN, |t| t.v_pi),
                    c.linear.unwrap_or(f64::NAN),
                    c.neural.as_ref().map_or(f64::NAN, |s| s.mean)
                )
            })
            .collect();
        println!(
            "{:<14} V {truth_v:.3} lin {lin:.3} neu {neu:.3}   [{}]",
            p.policy,
            per_task.join(" ")
        );
        for c in &p.curves {
            let pts: Vec<String> = c
                .iter()
                .map(|q| format!("{}:{:.3}/{:.4}", q.step, q.mean_value, q.loss))
                .collect();
            if get("curves").is_some() {
                println!("    curve {}", pts.join(" "));
            }
        }
    }
    for n in &report.notes {
        println!("note: {n}");
    }
    for p in &report.policies {
        println!("{:<14} stopped at {:?}", p.policy, p.neural_steps);
    }
    for m in &report.metrics {
        let s = &m.suite;
        println!(
            "{:<7} median ARE {:>6.1}%  Spearman V {:>6.3}  SR {:>6.3}  Pearson V {:>6.3}  regret@1 {:.3}",
            m.estimator,
            100.0 * s.median_are.unwrap_or(f64::NAN),
            s.spearman_v.unwrap_or(f64::NAN),
            s.spearman_sr.unwrap_or(f64::NAN),
            s.pearson_v.unwrap_or(f64::NAN),
            s.regret_at_1_v.unwrap_or(f64::NAN)
        );
    }
}

/// Raw little-endian f32 / i64 arrays and a JSON index, for NumPy experiments.
fn dump(dir: &std::path::Path, inputs: &roboaudit_fqe::FqeInputs, policies: &[TargetPolicy]) {
    std::fs::create_dir_all(dir).unwrap();
    let f32s = |name: &str, v: &[f32]| {
        let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        std::fs::write(dir.join(name), bytes).unwrap();
    };
    let mut x = Vec::new();
    for k in 0..inputs.n_frames() {
        inputs.push_input(k, &mut x);
    }
    f32s("x.f32", &x);
    f32s("a.f32", &inputs.actions);
    for p in policies {
        f32s(&format!("pi_{}.f32", p.name), &p.actions.values);
    }
    let episodes: Vec<serde_json::Value> = inputs
        .episodes
        .iter()
        .map(|e| serde_json::json!([e.start, e.len, e.task, e.success]))
        .collect();
    let meta = serde_json::json!({
        "n": inputs.n_frames(), "dx": inputs.input_dim(), "da": inputs.action_dim,
        "parts": inputs.parts.iter().map(|p| (p.name.clone(), p.width)).collect::<Vec<_>>(),
        "tasks": inputs.tasks, "episodes": episodes,
        "policies": policies.iter().map(|p| (p.name.clone(), p.actions.samples)).collect::<Vec<_>>(),
    });
    std::fs::write(dir.join("meta.json"), meta.to_string()).unwrap();
}
