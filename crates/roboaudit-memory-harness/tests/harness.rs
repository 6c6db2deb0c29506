//! Harness mechanics: exclusion before any query, determinism, records that the reader accepts,
//! the memory-state contract, unsupported tasks.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use roboaudit_data::{read_memory_records, write_memory_records};
use roboaudit_memory_harness::{
    ACTION_DIM, BuiltinPolicy, CollectConfig, HarnessError, MemoryPolicy, PolicyKind, PolicyParams,
    Reuse, Tolerance, collect,
};
use roboaudit_testbed::TaskKind;

#[test]
fn pairs_failing_the_present_check_are_excluded_and_counted_not_replaced() {
    let mut cfg = common::small(TaskKind::PutBack, 3, &[0]);
    cfg.tolerance = Tolerance {
        position_m: 0.0,
        joint_rad: 0.0,
    };
    let mut queried = Counting(
        BuiltinPolicy::new(PolicyKind::Faithful, PolicyParams::default()).unwrap(),
        0,
    );
    let run = collect(&cfg, &mut queried, &mut |_, _| {}).unwrap();
    // Two different natural histories never end bit-identical: every pair fails, none is queried.
    assert_eq!(run.manifest.n_excluded, 3);
    assert_eq!(queried.1, 0);
    assert!(
        run.manifest.excluded[0]
            .reason
            .starts_with("hidden physics"),
        "{}",
        run.manifest.excluded[0].reason
    );
    assert_eq!(run.records.len(), 3 * 4);
    assert!(run.records.iter().all(|r| !r.present_equal));
    let audit = roboaudit_memory::analyze(&run.records, &common::plan()).unwrap();
    assert_eq!((audit.n_pairs, audit.n_excluded), (0, 3));
}

#[test]
fn default_tolerance_admits_expert_histories_and_worlds_share_physics() {
    let cfg = common::small(TaskKind::PutBack, 4, &[0, 1]);
    let mut p = BuiltinPolicy::new(PolicyKind::Bank, PolicyParams::default()).unwrap();
    let run = collect(&cfg, &mut p, &mut |_, _| {}).unwrap();
    assert_eq!(run.manifest.n_excluded, 0);
    assert_eq!(run.manifest.world_physics_mismatches, 0);
    let [dp, dj] = run.manifest.max_hidden_delta;
    // The histories differ, so their natural presents differ, but within the tolerance.
    assert!(dp > 0.0 && dp <= 0.01 && dj <= 0.05, "{dp} {dj}");
    assert_eq!(run.records.len(), 4 * 2 * 2 * 2);
    assert!(
        run.records
            .iter()
            .all(|r| r.action.len() == 12 * ACTION_DIM)
    );
}

#[test]
fn same_configuration_gives_the_same_records_and_parquet_round_trips() {
    let cfg = common::small(TaskKind::PutBack, 2, &[3]);
    let a = common::run(
        &cfg,
        PolicyKind::Bank,
        PolicyParams::default(),
        Reuse::Never,
    );
    let b = common::run(
        &cfg,
        PolicyKind::Bank,
        PolicyParams::default(),
        Reuse::Never,
    );
    assert_eq!(a, b);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("records.parquet");
    write_memory_records(&path, &a).unwrap();
    assert_eq!(read_memory_records(&path).unwrap(), a);
}

#[test]
fn memory_state_round_trip_reproduces_actions_and_the_anchor_is_protected() {
    let cfg = common::small(TaskKind::PutBack, 1, &[0]);
    let mut p = BuiltinPolicy::new(PolicyKind::Faithful, PolicyParams::default()).unwrap();
    let run = collect(&cfg, &mut p, &mut |_, _| {}).unwrap();
    let spec = p.memory_spec();
    assert_eq!(spec.components[0].name, "anchor");
    assert!(spec.components[0].protected);
    assert_eq!(spec.components[0].shape, vec![1024]);
    let state = p.memory().unwrap();
    let mut q = BuiltinPolicy::new(PolicyKind::Faithful, PolicyParams::default()).unwrap();
    q.set_memory(&state).unwrap();
    assert!(q.memory().unwrap().bits_equal(&state));
    // Later observations move the window, never the anchor.
    let anchor = state.get("anchor").unwrap().values.clone();
    let obs = roboaudit_memory_harness::Observation {
        features: vec![9.0; 40],
        layout: roboaudit_memory_harness::FeatureLayout {
            n_blocks: 1,
            n_trays: 3,
            n_pads: 1,
        },
        frame: None,
        branch_candidates: vec![],
    };
    q.observe(&obs).unwrap();
    assert_eq!(q.memory().unwrap().get("anchor").unwrap().values, anchor);
    assert_ne!(
        q.memory().unwrap().get("window").unwrap().values,
        state.get("window").unwrap().values
    );
    let mut bad = state.clone();
    bad.components[0].values.pop();
    assert!(matches!(
        q.set_memory(&bad),
        Err(HarnessError::Policy { .. })
    ));
    assert_eq!(run.manifest.memory_spec, spec);
}

#[test]
fn non_memory_tasks_are_refused_with_a_reason() {
    for task in [TaskKind::Stack, TaskKind::Door] {
        let cfg = CollectConfig {
            task,
            ..CollectConfig::default()
        };
        let mut p = BuiltinPolicy::new(PolicyKind::Faithful, PolicyParams::default()).unwrap();
        let err = collect(&cfg, &mut p, &mut |_, _| {}).unwrap_err();
        assert!(matches!(err, HarnessError::UnsupportedTask(_)), "{err}");
    }
    let cfg = CollectConfig {
        action_seeds: vec![1, 1],
        ..CollectConfig::default()
    };
    let mut p = BuiltinPolicy::new(PolicyKind::Faithful, PolicyParams::default()).unwrap();
    assert!(matches!(
        collect(&cfg, &mut p, &mut |_, _| {}),
        Err(HarnessError::InvalidConfig(_))
    ));
}

/// Counts queries of the wrapped policy.
struct Counting(BuiltinPolicy, usize);

impl MemoryPolicy for Counting {
    fn name(&self) -> String {
        self.0.name()
    }
    fn memory_spec(&self) -> roboaudit_memory_harness::MemorySpec {
        self.0.memory_spec()
    }
    fn chunk_len(&self) -> usize {
        self.0.chunk_len()
    }
    fn reset(&mut self) {
        self.0.reset()
    }
    fn observe(&mut self, obs: &roboaudit_memory_harness::Observation) -> Result<(), HarnessError> {
        self.0.observe(obs)
    }
    fn act(
        &mut self,
        present: &roboaudit_memory_harness::Observation,
        seed: u64,
    ) -> Result<roboaudit_memory_harness::ActionChunk, HarnessError> {
        self.1 += 1;
        self.0.act(present, seed)
    }
    fn memory(&mut self) -> Result<roboaudit_memory_harness::MemoryState, HarnessError> {
        self.0.memory()
    }
    fn set_memory(
        &mut self,
        s: &roboaudit_memory_harness::MemoryState,
    ) -> Result<(), HarnessError> {
        self.0.set_memory(s)
    }
}

#[test]
fn swap_pairs_warrant_the_blue_blocks_origin_and_share_one_present() {
    // Swap crosses red-in-tray-0 histories whose blue block started in tray 1 or 2.
    let cfg = CollectConfig {
        task: TaskKind::Swap,
        pairs: 2,
        action_seeds: vec![0],
        ..CollectConfig::default()
    };
    let mut p = BuiltinPolicy::new(PolicyKind::Faithful, PolicyParams::default()).unwrap();
    let run = collect(&cfg, &mut p, &mut |_, _| {}).unwrap();
    assert_eq!(run.manifest.n_excluded, 0, "{:?}", run.manifest);
    assert_eq!(run.manifest.world_physics_mismatches, 0);
    // The faithful chunk heads for its memory's branch: in the matched world almost a reference
    // chunk's progress toward the warranted tray and next to none toward the other outer tray
    // (the branches are far apart seen from the buffer pad); crossed, the roles flip.
    for r in &run.records {
        assert!(r.present_equal);
        let (toward, away) = if r.memory == r.world {
            (r.progress_warranted, r.progress_other)
        } else {
            (r.progress_other, r.progress_warranted)
        };
        assert!(toward > 0.8 && away < 0.2, "{r:?}");
    }
}
