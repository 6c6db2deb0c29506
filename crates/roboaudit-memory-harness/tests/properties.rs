//! Properties of harness output (proptest): swapping the memory labels flips F and U1; one chunk
//! for both memories gives F = U1 = S = 0 whatever the policy.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use proptest::prelude::*;
use roboaudit_data::MemoryLabel;
use roboaudit_memory_harness::{PolicyKind, PolicyParams, Reuse};
use roboaudit_testbed::TaskKind;

fn kind() -> impl Strategy<Value = PolicyKind> {
    prop::sample::select(PolicyKind::ALL.to_vec())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 6, ..ProptestConfig::default() })]

    #[test]
    fn swapping_memory_labels_flips_faithfulness(
        kind in kind(),
        r in 0.0f64..=1.0,
        seed in 0u64..1000,
        start in 0u64..50,
    ) {
        let mut cfg = common::small(TaskKind::PutBack, 3, &[start, start + 1]);
        cfg.seed = seed;
        let params = PolicyParams { reliability: vec![r], seed, ..PolicyParams::default() };
        let records = common::run(&cfg, kind, params, Reuse::Never);
        let swapped: Vec<_> = records
            .iter()
            .cloned()
            .map(|mut x| {
                x.memory = x.memory.other();
                x
            })
            .collect();
        let a = common::audit(&records);
        let b = common::audit(&swapped);
        let (f, fs) = (a.faithfulness.value.unwrap(), b.faithfulness.value.unwrap());
        prop_assert!((f + fs).abs() < 1e-12, "F {f} swapped {fs}");
        let (u, us) = (a.u1.value.unwrap(), b.u1.value.unwrap());
        prop_assert!((u + us).abs() < 1e-12, "U1 {u} swapped {us}");
    }

    #[test]
    fn one_chunk_for_both_memories_gives_zero(
        kind in kind(),
        r in 0.0f64..=1.0,
        seed in 0u64..1000,
    ) {
        let mut cfg = common::small(TaskKind::PutBack, 2, &[seed]);
        cfg.seed = seed;
        let params = PolicyParams { reliability: vec![r], seed, ..PolicyParams::default() };
        let records = common::run(&cfg, kind, params, Reuse::Balanced);
        for x in &records {
            let twin = records
                .iter()
                .find(|y| y.pair_id == x.pair_id && y.world == x.world && y.memory == x.memory.other())
                .unwrap();
            prop_assert_eq!(&x.action, &twin.action);
            // Same chunk, same physics: the world label changes only which branch is warranted.
            prop_assert_eq!(x.progress_warranted.to_bits(), twin.progress_warranted.to_bits());
        }
        let a = common::audit(&records);
        prop_assert_eq!(a.faithfulness.value, Some(0.0));
        prop_assert!(a.u1.value.unwrap().abs() < 1e-12);
        prop_assert_eq!(a.sensitivity, Some(0.0));
        prop_assert!(records.iter().all(|x| x.memory == MemoryLabel::A || x.memory == MemoryLabel::B));
    }
}
