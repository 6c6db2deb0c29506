//! Invariants of the audit (SPEC.md §2): label symmetry and the null of identical actions.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Act, build, plan};
use proptest::prelude::*;
use roboaudit_memory::{MemoryLabel, analyze};

/// One chunk per (pair, memory, seed): progress toward A and B and values in both worlds.
fn acts(n: usize) -> impl Strategy<Value = Vec<(f64, f64, f64, f64, f32)>> {
    prop::collection::vec(
        (
            0.0..1.0f64,
            0.0..1.0f64,
            0.0..=1.0f64,
            0.0..=1.0f64,
            -2.0..2.0f32,
        ),
        n,
    )
}

fn act((ta, tb, va, vb, x): (f64, f64, f64, f64, f32)) -> Act {
    Act {
        toward_a: ta,
        toward_b: tb,
        value_a: va,
        value_b: vb,
        action: vec![x, -x],
    }
}

const SEEDS: [i64; 2] = [0, 1];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Swapping the memory labels (the chunk of history A is relabelled B and vice versa)
    /// flips the sign of F and U1 and leaves S unchanged.
    #[test]
    fn swapping_memory_labels_flips_f(n_pairs in 1usize..7, draws in acts(6 * 2 * 2)) {
        let pick = |p: usize, m: MemoryLabel, k: i64| {
            act(draws[(p * 2 + usize::try_from(k).unwrap()) * 2 + m.index()])
        };
        let records = build(n_pairs, &SEEDS, pick);
        let mut swapped = records.clone();
        for r in &mut swapped {
            r.memory = r.memory.other();
        }
        let p = plan(200);
        let a = analyze(&records, &p).unwrap();
        let b = analyze(&swapped, &p).unwrap();
        prop_assert_eq!(b.faithfulness.value.unwrap(), -a.faithfulness.value.unwrap());
        prop_assert!((b.u1.value.unwrap() + a.u1.value.unwrap()).abs() < 1e-12);
        prop_assert!((b.sensitivity.unwrap() - a.sensitivity.unwrap()).abs() < 1e-12);
        prop_assert_eq!(b.ambiguity_rate, a.ambiguity_rate);
        let ([alo, ahi], [blo, bhi]) = (a.faithfulness.ci.unwrap(), b.faithfulness.ci.unwrap());
        prop_assert!((blo + ahi).abs() < 1e-12 && (bhi + alo).abs() < 1e-12);
    }

    /// The same chunk under both memories (equal progress and values): S = 0, F = U1 = 0.
    #[test]
    fn identical_actions_give_zero(n_pairs in 1usize..7, draws in acts(6 * 2)) {
        let pick = |p: usize, _m: MemoryLabel, k: i64| act(draws[p * 2 + usize::try_from(k).unwrap()]);
        let records = build(n_pairs, &SEEDS, pick);
        let a = analyze(&records, &plan(200)).unwrap();
        prop_assert_eq!(a.sensitivity, Some(0.0));
        prop_assert_eq!(a.action_change_rate, Some(0.0));
        prop_assert_eq!(a.faithfulness.value, Some(0.0));
        prop_assert_eq!(a.u1.value, Some(0.0));
        prop_assert_eq!(a.reliable_pairs.bidirectional, 0);
    }

    /// Row order does not matter.
    #[test]
    fn row_order_is_irrelevant(n_pairs in 1usize..5, draws in acts(4 * 2 * 2), rotate in 0usize..100) {
        let pick = |p: usize, m: MemoryLabel, k: i64| {
            act(draws[(p * 2 + usize::try_from(k).unwrap()) * 2 + m.index()])
        };
        let records = build(n_pairs, &SEEDS, pick);
        let mut shuffled = records.clone();
        shuffled.reverse();
        let len = shuffled.len();
        shuffled.rotate_left(rotate % len);
        let p = plan(100);
        prop_assert_eq!(analyze(&records, &p).unwrap(), analyze(&shuffled, &p).unwrap());
    }
}
