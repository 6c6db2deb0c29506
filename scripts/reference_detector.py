#!/usr/bin/env python3
"""Reference values for the success detector of roboaudit-fqe (SPEC.md §3, seed 003 §3).

Pinned versions: numpy 2.2.6, scipy 1.15.3, scikit-learn 1.6.1 (Python 3.11).
Writes crates/roboaudit-fqe/tests/data/reference_detector.json, read by
crates/roboaudit-fqe/tests/detector_reference.rs (CI does not run Python; the JSON is checked in).

- `logistic`: L2-regularized logistic regression, scikit-learn
  `LogisticRegression(C=C, penalty="l2", fit_intercept=True)`, which minimizes
  `0.5 * ||w||^2 + C * sum_i log-loss_i` (the intercept is not penalized). The solver is
  "newton-cholesky" with tol=1e-12 so that the reference is the optimum to round-off, not the
  default lbfgs stopping point (tol=1e-4); the script asserts that the gradient of the objective
  at the reference is below 1e-8. Cases: overlapping classes, strong and weak regularization, a
  nearly separable set, an imbalanced set (8% positives), more features than half the rows, one
  feature. Probabilities are `predict_proba[:, 1]` on the training rows and on fresh rows.
- `metrics`: the detector's held-out scores against scikit-learn `accuracy_score`,
  `balanced_accuracy_score`, `precision_score`, `recall_score`, `confusion_matrix` and
  `roc_auc_score`, and the Wilson score interval of the accuracy from SciPy
  `binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")`. A metric whose
  denominator is zero is `null` (scikit-learn warns and returns 0; roboaudit reports undefined).

Inputs are rounded to 6 decimals so that they parse exactly in Rust.

Usage: python3 scripts/reference_detector.py
"""

import json
import pathlib
import warnings

import numpy as np
import scipy
import scipy.stats
import sklearn
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import (
    accuracy_score,
    balanced_accuracy_score,
    confusion_matrix,
    precision_score,
    recall_score,
    roc_auc_score,
)

assert np.__version__ == "2.2.6", np.__version__
assert scipy.__version__ == "1.15.3", scipy.__version__
assert sklearn.__version__ == "1.6.1", sklearn.__version__

OUT = pathlib.Path(__file__).resolve().parent.parent / "crates/roboaudit-fqe/tests/data/reference_detector.json"
rng = np.random.default_rng(20261201)
warnings.simplefilter("ignore")


def r6(a):
    return np.round(np.asarray(a, dtype=float), 6)


def two_gaussians(n, p, shift, positive_rate):
    y = (rng.random(n) < positive_rate).astype(int)
    # Guarantee both classes.
    y[0], y[1] = 1, 0
    x = rng.normal(size=(n, p)) + np.outer(y, shift)
    return r6(x), y


def gradient(x, y, c, coef, intercept):
    z = x @ coef + intercept
    p = 1.0 / (1.0 + np.exp(-z))
    g_w = coef + c * x.T @ (p - y)
    g_b = c * np.sum(p - y)
    return max(np.max(np.abs(g_w)), abs(g_b))


def logistic_case(name, x, y, c, x_new):
    model = LogisticRegression(C=c, penalty="l2", fit_intercept=True, solver="newton-cholesky", tol=1e-12, max_iter=1000)
    model.fit(x, y)
    coef, intercept = model.coef_[0], float(model.intercept_[0])
    g = gradient(x, y, c, coef, intercept)
    assert g < 1e-8, (name, g)
    return {
        "name": name,
        "c": c,
        "x": x.tolist(),
        "y": [int(v) for v in y],
        "coef": coef.tolist(),
        "intercept": intercept,
        "probability": model.predict_proba(x)[:, 1].tolist(),
        "x_new": x_new.tolist(),
        "probability_new": model.predict_proba(x_new)[:, 1].tolist(),
    }


def logistic_cases():
    cases = []
    x, y = two_gaussians(60, 3, np.array([1.0, -0.5, 0.0]), 0.5)
    x_new = r6(rng.normal(size=(8, 3)))
    cases.append(logistic_case("overlapping", x, y, 1.0, x_new))
    cases.append(logistic_case("strong_regularization", x, y, 0.01, x_new))
    cases.append(logistic_case("weak_regularization", x, y, 1000.0, x_new))
    x, y = two_gaussians(40, 2, np.array([4.0, 4.0]), 0.5)
    cases.append(logistic_case("nearly_separable", x, y, 10.0, r6(rng.normal(size=(6, 2)) * 2)))
    x, y = two_gaussians(100, 4, np.array([1.5, 0.5, 0.0, -1.0]), 0.08)
    cases.append(logistic_case("imbalanced", x, y, 1.0, r6(rng.normal(size=(6, 4)))))
    x, y = two_gaussians(30, 20, np.full(20, 0.3), 0.5)
    cases.append(logistic_case("wide", x, y, 0.5, r6(rng.normal(size=(4, 20)))))
    x, y = two_gaussians(10, 1, np.array([1.0]), 0.5)
    cases.append(logistic_case("one_feature", x, y, 100.0, r6(np.array([[-1.0], [0.0], [2.5]]))))
    return cases


def metric_case(name, y, score):
    y = np.asarray(y, dtype=int)
    score = r6(score)
    pred = (score >= 0.5).astype(int)
    tn, fp, fn, tp = confusion_matrix(y, pred, labels=[0, 1]).ravel()
    n, k = len(y), int(tp + tn)
    ci = scipy.stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    both = len(set(y.tolist())) == 2
    return {
        "name": name,
        "y": y.tolist(),
        "probability": score.tolist(),
        "accuracy": accuracy_score(y, pred),
        "accuracy_interval": [float(ci.low), float(ci.high)],
        "balanced_accuracy": balanced_accuracy_score(y, pred) if both else None,
        "precision": precision_score(y, pred) if tp + fp > 0 else None,
        "recall": recall_score(y, pred) if tp + fn > 0 else None,
        "auroc": roc_auc_score(y, score) if both else None,
        "confusion": {"true_positive": int(tp), "false_positive": int(fp), "true_negative": int(tn), "false_negative": int(fn)},
    }


def metric_cases():
    y = (rng.random(40) < 0.4).astype(int)
    y[0], y[1] = 1, 0
    score = np.clip(0.5 + 0.35 * (2 * y - 1) + rng.normal(scale=0.25, size=40), 0.0, 1.0)
    return [
        metric_case("noisy", y, score),
        # Ties at the threshold (0.5 counts as success) and in the scores.
        metric_case("ties", [1, 0, 1, 0, 1, 1], [0.5, 0.5, 0.2, 0.9, 0.7, 0.7]),
        # Nothing predicted positive: precision undefined.
        metric_case("no_predicted_success", [1, 0, 0, 1, 0], [0.1, 0.2, 0.3, 0.4, 0.05]),
        # One class only: balanced accuracy and AUROC undefined; recall undefined too.
        metric_case("one_class", [0, 0, 0, 0], [0.1, 0.6, 0.2, 0.3]),
        metric_case("perfect", [1, 1, 0, 0, 1], [0.9, 0.8, 0.1, 0.3, 0.55]),
    ]


def main():
    out = {
        "versions": {"numpy": np.__version__, "scipy": scipy.__version__, "sklearn": sklearn.__version__},
        "logistic": logistic_cases(),
        "metrics": metric_cases(),
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
