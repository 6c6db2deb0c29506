//! Shared helpers of the harness tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use roboaudit_data::MemoryRecord;
use roboaudit_memory::{BootstrapPlan, MemoryAudit, Plan, analyze};
use roboaudit_memory_harness::{
    BuiltinPolicy, CollectConfig, PolicyKind, PolicyParams, Reuse, collect,
};
use roboaudit_testbed::TaskKind;

/// A small put_back configuration.
pub fn small(task: TaskKind, pairs: usize, seeds: &[u64]) -> CollectConfig {
    CollectConfig {
        task,
        pairs,
        action_seeds: seeds.to_vec(),
        ..CollectConfig::default()
    }
}

/// The default plan with fewer bootstrap draws (tests only).
pub fn plan() -> Plan {
    Plan {
        bootstrap: BootstrapPlan {
            resamples: 2000,
            ..Plan::default().bootstrap
        },
        ..Plan::default()
    }
}

/// Collects with a built-in policy.
pub fn run(
    cfg: &CollectConfig,
    kind: PolicyKind,
    params: PolicyParams,
    reuse: Reuse,
) -> Vec<MemoryRecord> {
    let mut p = BuiltinPolicy::new(kind, params).unwrap();
    let cfg = CollectConfig {
        reuse,
        ..cfg.clone()
    };
    collect(&cfg, &mut p, &mut |_, _| {}).unwrap().records
}

/// Audits records under [`plan`].
pub fn audit(records: &[MemoryRecord]) -> MemoryAudit {
    analyze(records, &plan()).unwrap()
}
