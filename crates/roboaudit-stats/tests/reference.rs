//! Every estimator against SciPy / scikit-learn / NumPy reference values produced by
//! `scripts/reference_stats.py` (checked in as `tests/data/reference_stats.json`), to 1e-12.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use roboaudit_stats::{
    IntervalMethod, ResampleMatrix, absolute_relative_error, auroc, average_ranks,
    bootstrap_with_matrix, grouped_auroc, kendall_tau_b, mmrv, normal_cdf, normal_quantile,
    normalized_regret_at_k, pearson, quantiles, spearman,
};
use serde::Deserialize;
use std::sync::OnceLock;

#[derive(Deserialize)]
struct Reference {
    auroc: Vec<AurocCase>,
    grouped_auroc: Vec<GroupedCase>,
    correlation: Vec<CorrelationCase>,
    quantiles: Vec<QuantileCase>,
    normal: NormalCases,
    bootstrap: Vec<BootstrapCase>,
    evaluator: EvaluatorCases,
}

#[derive(Deserialize)]
struct AurocCase {
    scores: Vec<f64>,
    labels: Vec<bool>,
    weights: Option<Vec<f64>>,
    expected: Option<f64>,
}

#[derive(Deserialize)]
struct GroupedCase {
    scores: Vec<f64>,
    labels: Vec<bool>,
    groups: Vec<usize>,
    weights: Option<Vec<f64>>,
    expected: GroupedExpected,
}

#[derive(Deserialize)]
struct GroupedExpected {
    groups: Vec<GroupExpected>,
    n_eligible: usize,
    mean: Option<f64>,
}

#[derive(Deserialize)]
struct GroupExpected {
    group: usize,
    n: usize,
    n_positive: usize,
    auroc: Option<f64>,
}

#[derive(Deserialize)]
struct CorrelationCase {
    x: Vec<f64>,
    y: Vec<f64>,
    pearson: Option<f64>,
    spearman: Option<f64>,
    kendall: Option<f64>,
    ranks_x: Vec<f64>,
}

#[derive(Deserialize)]
struct QuantileCase {
    data: Vec<f64>,
    qs: Vec<f64>,
    expected: Vec<f64>,
}

#[derive(Deserialize)]
struct NormalCases {
    cdf: Vec<(f64, f64)>,
    quantile: Vec<(f64, f64)>,
}

#[derive(Deserialize)]
struct BootstrapCase {
    kind: String,
    values: Vec<f64>,
    counts: Option<Vec<f64>>,
    strata: Option<Vec<usize>>,
    rows: Vec<Vec<usize>>,
    level: f64,
    method: String,
    estimate: f64,
    lo: Option<f64>,
    hi: Option<f64>,
    standard_error: f64,
    undefined_resamples: usize,
}

#[derive(Deserialize)]
struct EvaluatorCases {
    are: Vec<AreCase>,
    ranking: Vec<RankingCase>,
}

#[derive(Deserialize)]
struct AreCase {
    estimate: f64,
    truth: f64,
    expected: Option<f64>,
}

#[derive(Deserialize)]
struct RankingCase {
    estimates: Vec<f64>,
    truths: Vec<f64>,
    mmrv: f64,
    regret: Vec<Option<f64>>,
}

fn reference() -> &'static Reference {
    static DATA: OnceLock<Reference> = OnceLock::new();
    DATA.get_or_init(|| {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/reference_stats.json"
        );
        serde_json::from_str(&std::fs::read_to_string(path).expect("reference JSON"))
            .expect("parse JSON")
    })
}

/// Relative-or-absolute agreement to 1e-12.
fn close(actual: f64, expected: f64) -> bool {
    (actual - expected).abs() <= 1e-12 * expected.abs().max(1.0)
}

fn assert_opt(actual: Option<f64>, expected: Option<f64>, what: &str) {
    match (actual, expected) {
        (Some(a), Some(e)) => assert!(close(a, e), "{what}: got {a}, expected {e}"),
        (None, None) => {}
        _ => panic!("{what}: got {actual:?}, expected {expected:?}"),
    }
}

#[test]
fn auroc_matches_sklearn() {
    let cases = &reference().auroc;
    assert!(cases.len() >= 70);
    for (k, c) in cases.iter().enumerate() {
        let got = auroc(&c.scores, &c.labels, c.weights.as_deref()).unwrap();
        assert_opt(
            got,
            c.expected,
            &format!("auroc case {k} (n = {})", c.scores.len()),
        );
    }
}

#[test]
fn grouped_auroc_matches_sklearn_per_group() {
    for (k, c) in reference().grouped_auroc.iter().enumerate() {
        let got = grouped_auroc(&c.scores, &c.labels, &c.groups, c.weights.as_deref()).unwrap();
        assert_eq!(got.groups.len(), c.expected.groups.len(), "case {k}");
        for (g, e) in got.groups.iter().zip(&c.expected.groups) {
            assert_eq!(
                (g.group, g.n, g.n_positive),
                (e.group, e.n, e.n_positive),
                "case {k}"
            );
            assert_opt(
                g.auroc,
                e.auroc,
                &format!("grouped case {k} group {}", e.group),
            );
        }
        assert_eq!(got.n_eligible, c.expected.n_eligible, "case {k}");
        assert_opt(got.mean, c.expected.mean, &format!("grouped case {k} mean"));
    }
}

#[test]
fn correlations_match_scipy() {
    for (k, c) in reference().correlation.iter().enumerate() {
        assert_opt(
            pearson(&c.x, &c.y).unwrap(),
            c.pearson,
            &format!("pearson case {k}"),
        );
        assert_opt(
            spearman(&c.x, &c.y).unwrap(),
            c.spearman,
            &format!("spearman case {k}"),
        );
        assert_opt(
            kendall_tau_b(&c.x, &c.y).unwrap(),
            c.kendall,
            &format!("kendall case {k}"),
        );
        assert_eq!(average_ranks(&c.x).unwrap(), c.ranks_x, "ranks case {k}");
    }
}

#[test]
fn quantiles_match_numpy() {
    for (k, c) in reference().quantiles.iter().enumerate() {
        let got = quantiles(&c.data, &c.qs).unwrap();
        for ((g, e), q) in got.iter().zip(&c.expected).zip(&c.qs) {
            assert!(
                close(*g, *e),
                "quantile case {k} q {q}: got {g}, expected {e}"
            );
        }
    }
}

#[test]
fn normal_cdf_and_quantile_match_scipy_special() {
    let n = &reference().normal;
    for &(x, e) in &n.cdf {
        let g = normal_cdf(x);
        // relative error grows like x²·ε in the far tail; |x| <= 3 is what BCa uses
        let tol = if x.abs() <= 3.0 { 2e-15 } else { 2e-13 };
        assert!((g - e).abs() <= tol * e, "ndtr({x}): {g} vs {e}");
    }
    for &(p, e) in &n.quantile {
        let g = normal_quantile(p);
        assert!(
            (g - e).abs() <= 1e-14 * e.abs().max(1.0),
            "ndtri({p}): {g} vs {e}"
        );
    }
}

/// The statistic the reference script uses, summed in the same order.
fn cluster_statistic<'a>(c: &'a BootstrapCase) -> impl Fn(&[usize]) -> Option<f64> + Sync + 'a {
    move |idx: &[usize]| match c.kind.as_str() {
        "mean" => Some(idx.iter().fold(0.0, |s, &i| s + c.values[i]) / idx.len() as f64),
        _ => {
            let counts = c.counts.as_ref().unwrap();
            let (s, n) = idx
                .iter()
                .fold((0.0, 0.0), |(s, n), &i| (s + c.values[i], n + counts[i]));
            (n > 0.0).then(|| s / n)
        }
    }
}

#[test]
fn bootstrap_intervals_match_scipy_on_the_same_resamples() {
    let cases = &reference().bootstrap;
    assert!(
        cases.iter().any(|c| c.strata.is_some()) && cases.iter().any(|c| c.undefined_resamples > 0)
    );
    for (k, c) in cases.iter().enumerate() {
        let n = c.values.len();
        if let Some(strata) = &c.strata {
            // the stored stratified rows really keep every stratum inside itself
            assert!(
                c.rows
                    .iter()
                    .all(|r| r.iter().enumerate().all(|(i, &j)| strata[i] == strata[j]))
            );
        }
        let matrix = ResampleMatrix::from_rows(c.rows.clone(), n).unwrap();
        let method = if c.method == "bca" {
            IntervalMethod::Bca
        } else {
            IntervalMethod::Percentile
        };
        let got = bootstrap_with_matrix(&matrix, c.level, method, cluster_statistic(c)).unwrap();
        let what = format!("bootstrap case {k} ({} {}, n = {n})", c.kind, c.method);
        assert!(close(got.estimate, c.estimate), "{what}: estimate");
        assert_eq!(got.undefined_resamples, c.undefined_resamples, "{what}");
        assert_eq!(got.resamples, c.rows.len(), "{what}");
        let interval = got.interval.expect("interval");
        assert_opt(Some(interval.lo), c.lo, &format!("{what} lo"));
        assert_opt(Some(interval.hi), c.hi, &format!("{what} hi"));
        assert_opt(
            got.standard_error,
            Some(c.standard_error),
            &format!("{what} standard error"),
        );
    }
}

#[test]
fn evaluator_metrics_known_answers() {
    let e = &reference().evaluator;
    for c in &e.are {
        assert_opt(
            absolute_relative_error(c.estimate, c.truth).unwrap(),
            c.expected,
            "ARE",
        );
    }
    for (k, c) in e.ranking.iter().enumerate() {
        let got = mmrv(&c.estimates, &c.truths).unwrap();
        assert!(close(got, c.mmrv), "mmrv case {k}: {got} vs {}", c.mmrv);
        for (i, expected) in c.regret.iter().enumerate() {
            let got = normalized_regret_at_k(&c.estimates, &c.truths, i + 1).unwrap();
            assert_opt(got, *expected, &format!("regret@{} case {k}", i + 1));
        }
    }
}
