//! Synthetic records for the tests: policies whose audit answer is known.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use roboaudit_memory::{BootstrapPlan, MemoryLabel, MemoryRecord, Plan};

/// What one saved chunk does, seen from both worlds: progress toward `b_A` and `b_B`, and its
/// value in world A and world B.
#[derive(Debug, Clone, PartialEq)]
pub struct Act {
    pub toward_a: f64,
    pub toward_b: f64,
    pub value_a: f64,
    pub value_b: f64,
    pub action: Vec<f32>,
}

/// A chunk that reaches `branch` fully (value 1 there, 0 in the other world).
pub fn goes_to(branch: MemoryLabel, action: Vec<f32>) -> Act {
    let a = branch == MemoryLabel::A;
    Act {
        toward_a: if a { 1.0 } else { 0.0 },
        toward_b: if a { 0.0 } else { 1.0 },
        value_a: if a { 1.0 } else { 0.0 },
        value_b: if a { 0.0 } else { 1.0 },
        action,
    }
}

/// A chunk that approaches neither branch.
pub fn stays(action: Vec<f32>) -> Act {
    Act {
        toward_a: 0.2,
        toward_b: 0.2,
        value_a: 0.2,
        value_b: 0.2,
        action,
    }
}

/// The two world records of one (pair, memory, seed), consistent across worlds.
pub fn action_records(pair: &str, memory: MemoryLabel, seed: i64, act: &Act) -> [MemoryRecord; 2] {
    let record = |world: MemoryLabel| {
        let (warranted, other, value) = match world {
            MemoryLabel::A => (act.toward_a, act.toward_b, act.value_a),
            MemoryLabel::B => (act.toward_b, act.toward_a, act.value_b),
        };
        MemoryRecord {
            pair_id: pair.to_owned(),
            memory,
            action_seed: seed,
            world,
            progress_warranted: warranted,
            progress_other: other,
            value,
            action: act.action.clone(),
            present_equal: true,
            route: None,
            stratum: None,
            plan_hash: None,
        }
    };
    [record(MemoryLabel::A), record(MemoryLabel::B)]
}

/// Records of `n_pairs` pairs (`p000`, …) × `seeds` × both memories, from `policy(pair, memory, seed)`.
pub fn build(
    n_pairs: usize,
    seeds: &[i64],
    mut policy: impl FnMut(usize, MemoryLabel, i64) -> Act,
) -> Vec<MemoryRecord> {
    let mut out = Vec::new();
    for p in 0..n_pairs {
        for &k in seeds {
            for m in MemoryLabel::BOTH {
                let act = policy(p, m, k);
                out.extend(action_records(&format!("p{p:03}"), m, k, &act));
            }
        }
    }
    out
}

/// A plan with fewer resamples for fast tests.
pub fn plan(resamples: usize) -> Plan {
    Plan {
        bootstrap: BootstrapPlan {
            resamples,
            ..BootstrapPlan::default()
        },
        ..Plan::default()
    }
}

/// Distinct actions per memory so that sensitivity is positive.
pub fn chunk(m: MemoryLabel) -> Vec<f32> {
    match m {
        MemoryLabel::A => vec![0.0, 0.0],
        MemoryLabel::B => vec![3.0, 4.0],
    }
}
