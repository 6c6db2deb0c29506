//! The success detector's statistics against scikit-learn and SciPy
//! (`scripts/reference_detector.py`, values in `tests/data/reference_detector.json`):
//! L2 logistic regression coefficients, intercept and probabilities to 1e-6, and the held-out
//! scores (accuracy, Wilson interval, balanced accuracy, precision, recall, AUROC, confusion).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use roboaudit_fqe::detector::logistic::{LogisticConfig, fit_logistic};
use roboaudit_fqe::detector::validation::score_predictions;
use serde_json::Value;

/// Coefficients and probabilities: the optimum is unique and both solvers reach it to
/// round-off (the script checks scikit-learn's gradient is below 1e-8), so 1e-6 leaves room only
/// for the conditioning of the weakly regularized cases.
const TOLERANCE: f64 = 1e-6;

fn reference() -> Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/reference_detector.json"
    ))
    .unwrap();
    serde_json::from_str(&text).unwrap()
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

fn matrix(v: &Value) -> (Vec<f64>, usize) {
    let rows = v.as_array().unwrap();
    let width = rows[0].as_array().unwrap().len();
    (rows.iter().flat_map(floats).collect(), width)
}

fn close(name: &str, what: &str, got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{name} {what}");
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= TOLERANCE,
            "{name} {what}[{k}]: {g} vs scikit-learn {w}"
        );
    }
}

#[test]
fn logistic_regression_matches_scikit_learn() {
    let r = reference();
    let cases = r["logistic"].as_array().unwrap();
    assert!(cases.len() >= 6);
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let (x, width) = matrix(&case["x"]);
        let y: Vec<bool> = case["y"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_i64() == Some(1))
            .collect();
        let config = LogisticConfig {
            c: case["c"].as_f64().unwrap(),
            ..LogisticConfig::default()
        };
        let model = fit_logistic(&x, &y, width, &config).unwrap();
        assert!(model.converged, "{name}: {model:?}");
        close(name, "coef", &model.coef, &floats(&case["coef"]));
        close(
            name,
            "intercept",
            &[model.intercept],
            &[case["intercept"].as_f64().unwrap()],
        );
        close(
            name,
            "probability",
            &model.predict_proba(&x),
            &floats(&case["probability"]),
        );
        let (x_new, _) = matrix(&case["x_new"]);
        close(
            name,
            "probability_new",
            &model.predict_proba(&x_new),
            &floats(&case["probability_new"]),
        );
    }
}

fn optional(v: &Value) -> Option<f64> {
    v.as_f64()
}

#[test]
fn held_out_scores_match_scikit_learn_and_scipy() {
    let r = reference();
    for case in r["metrics"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let y: Vec<bool> = case["y"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_i64() == Some(1))
            .collect();
        let p = floats(&case["probability"]);
        let s = score_predictions(&y, &p, 0.5).unwrap();
        let c = &case["confusion"];
        let count = |k: &str| usize::try_from(c[k].as_u64().unwrap()).unwrap();
        assert_eq!(
            (
                s.confusion.true_positive,
                s.confusion.false_positive,
                s.confusion.true_negative,
                s.confusion.false_negative
            ),
            (
                count("true_positive"),
                count("false_positive"),
                count("true_negative"),
                count("false_negative")
            ),
            "{name}"
        );
        for (what, got, want) in [
            ("accuracy", s.accuracy, optional(&case["accuracy"])),
            (
                "balanced_accuracy",
                s.balanced_accuracy,
                optional(&case["balanced_accuracy"]),
            ),
            ("precision", s.precision, optional(&case["precision"])),
            ("recall", s.recall, optional(&case["recall"])),
            ("auroc", s.auroc, optional(&case["auroc"])),
        ] {
            match (got, want) {
                (Some(g), Some(w)) => assert!((g - w).abs() < 1e-12, "{name} {what}: {g} vs {w}"),
                (None, None) => {}
                _ => panic!("{name} {what}: {got:?} vs reference {want:?}"),
            }
        }
        let ci = s.accuracy_interval.unwrap();
        let want = floats(&case["accuracy_interval"]);
        assert!(
            (ci.lo - want[0]).abs() < 1e-9 && (ci.hi - want[1]).abs() < 1e-9,
            "{name} Wilson interval: [{}, {}] vs SciPy {want:?}",
            ci.lo,
            ci.hi
        );
    }
}
