//! Tests of the shared draws and the replicates of all rules computed from them.

use super::*;
use crate::metrics::gap_on;
use roboaudit_stats::{ResampleMatrix, resample_counts};

fn setup() -> (Transfer, ResampleMatrix, Vec<u32>, Vec<usize>) {
    let inputs = crate::synthetic::generate(&crate::synthetic::SyntheticSpec {
        experiences: 7,
        scenes: 13,
        seeds: 3,
        representations: 0,
        dim: 1,
        seed: 5,
    });
    let t = Transfer::build(&inputs).unwrap();
    let design = ResampleDesign {
        n_clusters: 13,
        strata: None,
    };
    let m = ResampleMatrix::generate(&design, 300, 3).unwrap();
    let counts = resample_counts(&design, 300, 3).unwrap();
    let picks = (0..13).map(|s| (s * 5 + 1) % 7).collect();
    (t, m, counts, picks)
}

fn perm_rows(d: &SharedDraws) -> Vec<Vec<usize>> {
    let n = d.n;
    match &d.perms {
        Perms::Bytes(p) => p
            .chunks_exact(n)
            .map(|r| r.iter().map(|&v| usize::from(v)).collect())
            .collect(),
        Perms::Words(p) => p
            .chunks_exact(n)
            .map(|r| r.iter().map(|&v| v as usize).collect())
            .collect(),
    }
}

/// Every replicate is the statistic on its own resample or permutation (to rounding), for
/// a resample and permutation count that leave partial blocks: gaps against `gap_on` on the
/// resample's scene list, within-query means against the mean over the drawn defined scenes
/// (with the shared two-outcome pattern and another one), shuffled success against the
/// permuted selections.
#[test]
fn replicates_equal_the_statistic_on_each_row() {
    let (t, m, counts, picks) = setup();
    let lib: Vec<usize> = (0..7).collect();
    let d = SharedDraws::from_counts(&t, counts, 1_000, 1).unwrap();
    let per_scene: Vec<Option<f64>> = (0..13)
        .map(|s| (s % 3 == 0).then(|| s as f64 / 13.0))
        .collect();
    let shared: Vec<Option<f64>> = (0..13)
        .map(|s| d.two_class[s].then(|| (s * s) as f64 / 169.0))
        .collect();
    assert!(d.two_class.iter().any(|&b| b));
    assert!((0..13).any(|s| per_scene[s].is_some() != d.two_class[s]));
    let rules = [
        RuleDraws {
            picks: &picks,
            per_scene: Some(&per_scene),
        },
        RuleDraws {
            picks: &picks,
            per_scene: Some(&shared),
        },
    ];
    let reps: Vec<Replicates> = d.replicates_many(&t, &rules, true).unwrap();
    for (rep, values) in reps.iter().zip([&per_scene, &shared]) {
        for (b, row) in m.rows().iter().enumerate() {
            let g = gap_on(&t, &lib, &picks, row).unwrap();
            assert!(
                (rep.gaps[b] - g).abs() < 1e-12,
                "{b}: {} vs {g}",
                rep.gaps[b]
            );
            let vals: Vec<f64> = row.iter().filter_map(|&s| values[s]).collect();
            let want = (!vals.is_empty()).then(|| vals.iter().sum::<f64>() / vals.len() as f64);
            match ((!rep.within[b].is_nan()).then_some(rep.within[b]), want) {
                (Some(a), Some(w)) => assert!((a - w).abs() < 1e-12),
                (a, w) => assert_eq!(a, w),
            }
        }
        // Every cell has 3 executions: the successes are whole numbers over 13·3, counted.
        let mut want = vec![0u64; 13 * 3 + 1];
        for row in perm_rows(&d) {
            let wins: usize = (0..13)
                .map(|s| {
                    t.cells[picks[row[s]] * 13 + s]
                        .iter()
                        .filter(|&&y| y)
                        .count()
                })
                .sum();
            want[wins] += 1;
        }
        assert_eq!(
            rep.shuffled,
            ShuffleNull::Counts {
                counts: want,
                denominator: 39
            }
        );
        assert_eq!(rep.gaps.len(), 300);
    }
}

/// All rules at once give each rule's single-rule replicates, bit for bit, with and without
/// gaps, for more rules than one shuffle stack holds.
#[test]
fn replicates_of_many_rules_equal_one_rule_at_a_time() {
    let (t, _, counts, picks) = setup();
    let d = SharedDraws::from_counts(&t, counts, 700, 4).unwrap();
    let rules_picks: Vec<Vec<usize>> = (0..37)
        .map(|r| (0..13).map(|s| (s * (r + 1) + r) % 7).collect())
        .chain([picks, vec![2; 13]])
        .collect();
    let per_scene: Vec<Option<f64>> = (0..13).map(|s| d.two_class[s].then_some(0.25)).collect();
    let rules: Vec<RuleDraws<'_>> = rules_picks
        .iter()
        .enumerate()
        .map(|(i, p)| RuleDraws {
            picks: p,
            per_scene: (i % 2 == 0).then_some(per_scene.as_slice()),
        })
        .collect();
    for gaps in [true, false] {
        let many = d.replicates_many(&t, &rules, gaps).unwrap();
        for (r, rule) in rules.iter().enumerate() {
            let rep = &many[r];
            let one = [d
                .replicates_many(
                    &t,
                    &[RuleDraws {
                        picks: rule.picks,
                        per_scene: rule.per_scene,
                    }],
                    gaps,
                )
                .unwrap()
                .remove(0)];
            assert_eq!(rep.shuffled, one[0].shuffled);
            assert_eq!(rep.gaps, one[0].gaps);
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&rep.within), bits(&one[0].within));
            assert_eq!(rep.gaps.is_empty(), !gaps);
            assert_eq!(rep.within.is_empty(), rule.per_scene.is_none());
        }
    }
}

#[test]
fn permutations_are_permutations_and_reproducible() {
    let (t, _, counts, _) = setup();
    let d = SharedDraws::from_counts(&t, counts.clone(), 200, 9).unwrap();
    let rows = perm_rows(&d);
    for row in &rows {
        let mut sorted = row.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..13).collect::<Vec<usize>>());
    }
    assert!(rows.iter().any(|r| *r != rows[0]));
    let again = SharedDraws::from_counts(&t, counts, 200, 9).unwrap();
    assert_eq!(rows, perm_rows(&again));
}

/// A log whose common denominator is too large for exact `u16` sums (cells of 3 executions and
/// one of 2,503: 13 · 7,509 > 65,535) takes the value path: each permutation's success is the
/// mean of its cells' rates, to rounding.
#[test]
fn uneven_cells_give_shuffled_values() {
    let (mut t, _, counts, picks) = setup();
    let cell = picks[0] * 13;
    t.cells[cell].extend((0..2_500).map(|i| i % 3 == 0));
    t.recount().unwrap();
    assert_eq!(t.common_denominator().map(|(_, d)| d), Some(7_509));
    let d = SharedDraws::from_counts(&t, counts, 500, 2).unwrap();
    let rule = RuleDraws {
        picks: &picks,
        per_scene: None,
    };
    let rep = d.replicates_many(&t, &[rule], false).unwrap().remove(0);
    let ShuffleNull::Values(values) = &rep.shuffled else {
        panic!("uneven cells must give values: {:?}", rep.shuffled);
    };
    assert_eq!(values.len(), 500);
    for (r, row) in perm_rows(&d).iter().enumerate() {
        let want: f64 = (0..13).map(|s| t.at(picks[row[s]], s)).sum::<f64>() / 13.0;
        assert!((values[r] - want).abs() < 1e-12);
    }
}

/// On even cells the exact counts hold the successes the value path computes (to rounding),
/// and both give the same envelope to rounding.
#[test]
fn exact_counts_agree_with_shuffled_values() {
    let (t, _, counts, picks) = setup();
    let d = SharedDraws::from_counts(&t, counts, 2_000, 6).unwrap();
    let other: Vec<usize> = (0..13).map(|s| (s * 3) % 7).collect();
    let rules = [
        RuleDraws {
            picks: &picks,
            per_scene: None,
        },
        RuleDraws {
            picks: &other,
            per_scene: None,
        },
    ];
    let exact = d.shuffled_all(&t, &rules);
    let values = d.shuffled_values(&t, &rules);
    for (null, values) in exact.into_iter().zip(values) {
        assert!(matches!(null, ShuffleNull::Counts { .. }));
        let mut sorted = values.clone();
        sorted.sort_by(f64::total_cmp);
        let got = null.values();
        assert_eq!(got.len(), sorted.len());
        assert!(got.iter().zip(&sorted).all(|(a, b)| (a - b).abs() < 1e-12));
        let levels = [0.025, 0.5, 0.975];
        let a = null.quantiles(&levels).unwrap();
        let b = ShuffleNull::Values(values).quantiles(&levels).unwrap();
        assert!(
            a.iter().zip(&b).all(|(x, y)| (x - y).abs() < 1e-12),
            "{a:?} {b:?}"
        );
    }
}

/// The gaps are exact fractions: a rule that picks one experience everywhere (best-fixed) has a
/// gap of exactly 0 on every resample, with even cells and with cells of 3 and 4 executions
/// (common denominator 12).
#[test]
fn constant_rule_gaps_are_exactly_zero() {
    let (mut t, _, counts, _) = setup();
    let fixed = vec![4usize; 13];
    for uneven in [false, true] {
        if uneven {
            for s in (0..13).step_by(2) {
                t.cells[4 * 13 + s].push(s % 4 == 0);
            }
            t.recount().unwrap();
            assert_eq!(t.common_denominator().map(|(_, d)| d), Some(12));
        }
        let d = SharedDraws::from_counts(&t, counts.clone(), 100, 1).unwrap();
        let rule = RuleDraws {
            picks: &fixed,
            per_scene: None,
        };
        let rep = d.replicates_many(&t, &[rule], true).unwrap().remove(0);
        assert_eq!(rep.gaps.len(), 300);
        assert!(
            rep.gaps.iter().all(|&g| g.to_bits() == 0),
            "uneven: {uneven}"
        );
    }
}
