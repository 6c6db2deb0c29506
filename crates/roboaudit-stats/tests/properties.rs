//! Property tests (proptest) of invariants the reference values cannot cover exhaustively.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use roboaudit_stats::{
    BootstrapConfig, IntervalMethod, ResampleDesign, ResampleMatrix, auroc, auroc_tallies,
    bootstrap, grouped_auroc, grouped_auroc_tallies, kendall_tau_b,
    pooled_and_grouped_auroc_tallies, quantiles, quantiles_of_histogram,
};

/// Scores drawn from a small grid so that ties are common.
fn scored_labels() -> impl Strategy<Value = (Vec<f64>, Vec<bool>, Vec<f64>)> {
    (1usize..60).prop_flat_map(|n| {
        (
            prop::collection::vec((-8i32..8).prop_map(|v| f64::from(v) / 4.0), n),
            prop::collection::vec(any::<bool>(), n),
            prop::collection::vec((0u32..5).prop_map(|v| f64::from(v) / 2.0), n),
        )
    })
}

/// Mann–Whitney by explicit pairs, O(n²): the definition itself.
fn auroc_by_pairs(s: &[f64], y: &[bool], w: &[f64]) -> Option<f64> {
    let (mut num, mut den) = (0.0, 0.0);
    for i in (0..s.len()).filter(|&i| y[i]) {
        for j in (0..s.len()).filter(|&j| !y[j]) {
            let pair = w[i] * w[j];
            den += pair;
            num += pair
                * if s[i] > s[j] {
                    1.0
                } else if s[i] == s[j] {
                    0.5
                } else {
                    0.0
                };
        }
    }
    (den > 0.0).then(|| num / den)
}

/// Kendall tau-b by explicit pairs, O(n²).
fn tau_b_by_pairs(x: &[f64], y: &[f64]) -> Option<f64> {
    let (mut s, mut nx, mut ny) = (0.0, 0.0, 0.0);
    for i in 0..x.len() {
        for j in i + 1..x.len() {
            let (dx, dy) = (
                (x[i] - x[j]).signum() * f64::from(u8::from(x[i] != x[j])),
                (y[i] - y[j]).signum() * f64::from(u8::from(y[i] != y[j])),
            );
            s += dx * dy;
            nx += dx.abs();
            ny += dy.abs();
        }
    }
    (nx > 0.0 && ny > 0.0).then(|| s / (nx * ny).sqrt())
}

fn close(a: Option<f64>, b: Option<f64>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => (a - b).abs() <= 1e-12,
        (None, None) => true,
        _ => false,
    }
}

proptest! {
    #[test]
    fn auroc_flips_with_negated_scores((s, y, w) in scored_labels()) {
        let neg: Vec<f64> = s.iter().map(|v| -v).collect();
        let a = auroc(&s, &y, Some(&w)).unwrap();
        let b = auroc(&neg, &y, Some(&w)).unwrap();
        prop_assert!(close(a, b.map(|v| 1.0 - v)), "{a:?} vs 1 - {b:?}");
    }

    #[test]
    fn auroc_equals_pairwise_definition((s, y, w) in scored_labels()) {
        prop_assert!(close(auroc(&s, &y, Some(&w)).unwrap(), auroc_by_pairs(&s, &y, &w)));
        let ones = vec![1.0; s.len()];
        prop_assert!(close(auroc(&s, &y, None).unwrap(), auroc_by_pairs(&s, &y, &ones)));
    }

    #[test]
    fn weight_two_equals_a_duplicated_row((s, y, _w) in scored_labels(), pick in any::<prop::sample::Index>()) {
        let i = pick.index(s.len());
        let mut weights = vec![1.0; s.len()];
        weights[i] = 2.0;
        let (mut s2, mut y2) = (s.clone(), y.clone());
        s2.push(s[i]);
        y2.push(y[i]);
        prop_assert!(close(auroc(&s, &y, Some(&weights)).unwrap(), auroc(&s2, &y2, None).unwrap()));
    }

    #[test]
    fn tallies_equal_their_expanded_rows(
        items in prop::collection::vec(((-6i32..6), (0u32..4), (0u32..4), (0usize..3)), 1..40)
    ) {
        // Each item expands to `pos` positive and `neg` negative rows of its score; integer
        // tallies sum exactly, so both forms give the very same AUROCs.
        let scores: Vec<f64> = items.iter().map(|i| f64::from(i.0) / 2.0).collect();
        let positives: Vec<f64> = items.iter().map(|i| f64::from(i.1)).collect();
        let negatives: Vec<f64> = items.iter().map(|i| f64::from(i.2)).collect();
        let groups: Vec<usize> = items.iter().map(|i| i.3).collect();
        let (mut s, mut y, mut g) = (Vec::new(), Vec::new(), Vec::new());
        for item in &items {
            for (count, label) in [(item.1, true), (item.2, false)] {
                for _ in 0..count {
                    s.push(f64::from(item.0) / 2.0);
                    y.push(label);
                    g.push(item.3);
                }
            }
        }
        let tallied = auroc_tallies(&scores, &positives, &negatives).unwrap();
        let expanded = if s.is_empty() { None } else { auroc(&s, &y, None).unwrap() };
        prop_assert_eq!(tallied, expanded);
        let tallied = grouped_auroc_tallies(&scores, &positives, &negatives, &groups).unwrap();
        if !s.is_empty() {
            let expanded = grouped_auroc(&s, &y, &g, None).unwrap();
            prop_assert_eq!(tallied.mean, expanded.mean);
            prop_assert_eq!(tallied.n_eligible, expanded.n_eligible);
            let eligible = |r: &roboaudit_stats::GroupedAuroc| -> Vec<(usize, Option<f64>)> {
                r.groups.iter().filter(|x| x.auroc.is_some()).map(|x| (x.group, x.auroc)).collect()
            };
            prop_assert_eq!(eligible(&tallied), eligible(&expanded));
        }
    }

    #[test]
    fn pooled_and_grouped_tallies_equal_the_separate_calls(
        items in prop::collection::vec(((-6i32..6), (0u32..4), (0u32..4), (0usize..4)), 1..700),
        contiguous in any::<bool>(),
        spread in any::<bool>(),
    ) {
        // Whole-number tallies: the one-sort version gives the same bits as the two calls, for
        // groups in contiguous runs (the merged path) and in any order (the fallback), with few
        // distinct scores (many ties) or scores spread over signs and magnitudes (the radix
        // sort of 256 items and more passes over every byte).
        let mut items = items;
        if contiguous {
            items.sort_by_key(|i| i.3);
        }
        let scores: Vec<f64> = items
            .iter()
            .enumerate()
            .map(|(k, i)| {
                if spread {
                    f64::from(i.0) * (1.7f64).powi((k % 37) as i32 - 18) + 1e-3 * k as f64
                } else {
                    f64::from(i.0) / 3.0
                }
            })
            .collect();
        let positives: Vec<f64> = items.iter().map(|i| f64::from(i.1)).collect();
        let negatives: Vec<f64> = items.iter().map(|i| f64::from(i.2)).collect();
        let groups: Vec<usize> = items.iter().map(|i| i.3).collect();
        let (pooled, grouped) =
            pooled_and_grouped_auroc_tallies(&scores, &positives, &negatives, &groups).unwrap();
        prop_assert_eq!(
            pooled.map(f64::to_bits),
            auroc_tallies(&scores, &positives, &negatives).unwrap().map(f64::to_bits)
        );
        prop_assert_eq!(
            grouped,
            grouped_auroc_tallies(&scores, &positives, &negatives, &groups).unwrap()
        );
    }

    #[test]
    fn histogram_quantiles_equal_quantiles_of_the_expanded_data(
        counts in prop::collection::vec(0u64..40, 1..250),
        denominator in 1u32..400,
        qs in prop::collection::vec(0.0f64..=1.0, 1..4),
    ) {
        // Success-like values k / denominator with the counts of a histogram (many empty bins,
        // runs of one value), against the quantiles of the data written out.
        prop_assume!(counts.iter().any(|&c| c > 0));
        let values: Vec<f64> =
            (0..counts.len()).map(|k| k as f64 / f64::from(denominator)).collect();
        let expanded: Vec<f64> = values
            .iter()
            .zip(&counts)
            .flat_map(|(&v, &c)| std::iter::repeat_n(v, c as usize))
            .collect();
        let got = quantiles_of_histogram(&values, &counts, &qs).unwrap();
        let want = quantiles(&expanded, &qs).unwrap();
        prop_assert_eq!(
            got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            want.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
    }

    #[test]
    fn kendall_equals_pairwise_definition(
        xy in prop::collection::vec(((-5i32..5), (-5i32..5)), 2..80)
    ) {
        let x: Vec<f64> = xy.iter().map(|p| f64::from(p.0)).collect();
        let y: Vec<f64> = xy.iter().map(|p| f64::from(p.1)).collect();
        prop_assert!(close(kendall_tau_b(&x, &y).unwrap(), tau_b_by_pairs(&x, &y)));
    }

    #[test]
    fn stratified_resamples_keep_stratum_sizes(
        strata in prop::collection::vec(0usize..4, 1..30), seed in any::<u64>()
    ) {
        let design = ResampleDesign { n_clusters: strata.len(), strata: Some(strata.clone()) };
        let m = ResampleMatrix::generate(&design, 50, seed).unwrap();
        for row in m.rows() {
            // every position draws from its own stratum, hence each stratum keeps its size
            prop_assert!(row.iter().enumerate().all(|(i, &j)| strata[j] == strata[i]));
        }
    }

    #[test]
    fn bootstrap_is_identical_for_one_and_two_threads(
        values in prop::collection::vec(-100i32..100, 2..25), seed in any::<u64>(), bca in any::<bool>()
    ) {
        let values: Vec<f64> = values.into_iter().map(f64::from).collect();
        let design = ResampleDesign { n_clusters: values.len(), strata: None };
        let method = if bca { IntervalMethod::Bca } else { IntervalMethod::Percentile };
        let config = BootstrapConfig { resamples: 300, level: 0.9, method, seed };
        let stat = |idx: &[usize]| {
            let m = idx.iter().map(|&i| values[i]).sum::<f64>() / idx.len() as f64;
            // undefined on some resamples, to exercise the dropped-replicate path too
            (m != 0.0).then_some(m)
        };
        let run = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| bootstrap(&design, &config, stat))
        };
        let (one, two) = (run(1), run(2));
        prop_assert_eq!(format!("{one:?}"), format!("{two:?}"));
    }
}
