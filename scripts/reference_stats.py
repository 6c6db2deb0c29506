#!/usr/bin/env python3
"""Reference values for the roboaudit-stats crate (SPEC.md §0, §3).

Pinned versions: numpy 2.2.6, scipy 1.15.3, scikit-learn 1.6.1 (Python 3.11).
Writes crates/roboaudit-stats/tests/data/reference_stats.json, read by
crates/roboaudit-stats/tests/reference.rs (CI does not run Python; the JSON is checked in).

Inputs are rounded to a few decimals so that they parse exactly in Rust and so that ties occur.
Bootstrap intervals are computed by scipy.stats.bootstrap on explicit resample index matrices
(stored in the JSON, `bootstrap_result=` with `n_resamples=0`), so Rust can reproduce them on the
very same resamples. Statistics are summed left to right in plain Python, in the order of the
drawn indices, exactly as the Rust test does, so that replicate values are bit-identical.

Usage: python3 scripts/reference_stats.py
"""

import json
import math
import pathlib
import types
import warnings

import numpy as np
import scipy
import scipy.special
import scipy.stats
import sklearn
from sklearn.metrics import roc_auc_score

assert np.__version__ == "2.2.6", np.__version__
assert scipy.__version__ == "1.15.3", scipy.__version__
assert sklearn.__version__ == "1.6.1", sklearn.__version__

OUT = pathlib.Path(__file__).resolve().parent.parent / "crates/roboaudit-stats/tests/data/reference_stats.json"
rng = np.random.default_rng(20261129)
warnings.simplefilter("ignore")


def rounded(a, decimals):
    return [round(float(v), decimals) for v in a]


def finite_or_none(v):
    v = float(v)
    return v if math.isfinite(v) else None


# ---------------------------------------------------------------- AUROC
def sk_auroc(scores, labels, weights):
    if len(set(labels)) < 2:
        return None  # scikit-learn raises: one class
    return finite_or_none(roc_auc_score(labels, scores, sample_weight=weights))


def auroc_cases():
    cases = []
    sizes = [1, 2, 3, 4, 5, 8, 13, 20, 50, 100, 300, 1000] * 6 + [5000, 5000]
    for k, n in enumerate(sizes):
        decimals = [0, 1, 2, 3][k % 4]  # 0 decimals: heavy ties
        scale = [3, 5, 1, 10][k % 4]
        scores = rounded(rng.normal(0, scale, n), decimals)
        p = rng.uniform(0.05, 0.95)
        labels = [bool(v) for v in rng.random(n) < p]
        if k % 11 == 0:
            labels = [True] * n  # one class
        weights = None
        if k % 2 == 1:
            weights = rounded(rng.uniform(0, 3, n), 2)
            if k % 13 == 1:
                weights = [0.0 if lab else w for lab, w in zip(labels, weights)]  # positives weigh 0
        cases.append({"scores": scores, "labels": labels, "weights": weights,
                      "expected": sk_auroc(scores, labels, weights)})
    return cases


def grouped_cases():
    cases = []
    for k in range(30):
        n = int(rng.integers(1, 120))
        n_groups = int(rng.integers(1, 9))
        group_labels = rng.choice(np.arange(0, 1000, 7), size=n_groups, replace=False)
        groups = [int(g) for g in rng.choice(group_labels, size=n)]
        scores = rounded(rng.normal(0, 2, n), k % 3)
        labels = [bool(v) for v in rng.random(n) < rng.uniform(0.1, 0.9)]
        # force one single-class group now and then
        if k % 4 == 0 and n > 0:
            g0 = groups[0]
            labels = [False if g == g0 else lab for g, lab in zip(groups, labels)]
        weights = rounded(rng.uniform(0, 2, n), 2) if k % 3 == 2 else None
        out = []
        for g in sorted(set(groups)):
            idx = [i for i in range(n) if groups[i] == g]
            s = [scores[i] for i in idx]
            lab = [labels[i] for i in idx]
            w = None if weights is None else [weights[i] for i in idx]
            out.append({"group": g, "n": len(idx), "n_positive": sum(lab), "auroc": sk_auroc(s, lab, w)})
        eligible = [o["auroc"] for o in out if o["auroc"] is not None]
        cases.append({"scores": scores, "labels": labels, "groups": groups, "weights": weights,
                      "expected": {"groups": out, "n_eligible": len(eligible),
                                   "mean": float(np.mean(eligible)) if eligible else None}})
    return cases


# ---------------------------------------------------------------- correlations, ranks, quantiles
def correlation_cases():
    cases = []
    sizes = [2, 2, 3, 3, 4, 5, 7, 10, 20, 50, 100, 400] * 5 + [5000]
    for k, n in enumerate(sizes):
        decimals = [0, 1, 3][k % 3]
        x = rng.normal(0, 4, n)
        y = 0.6 * x + rng.normal(0, 4, n) if k % 2 else rng.normal(0, 1, n)
        x, y = rounded(x, decimals), rounded(y, decimals)
        if k % 9 == 4:
            y = [1.5] * n  # constant
        if k % 9 == 7:
            x = [-2.0] * n
        pr = scipy.stats.pearsonr(x, y).statistic
        sr = scipy.stats.spearmanr(x, y).statistic
        kt = scipy.stats.kendalltau(x, y, variant="b").statistic
        cases.append({"x": x, "y": y, "pearson": finite_or_none(pr), "spearman": finite_or_none(sr),
                      "kendall": finite_or_none(kt),
                      "ranks_x": [float(r) for r in scipy.stats.rankdata(x, method="average")]})
    return cases


def quantile_cases():
    cases = []
    for k in range(25):
        n = int(rng.integers(1, 60)) if k < 22 else 2000
        data = rounded(rng.standard_t(3, n) * 10, k % 3)
        qs = [0.0, 1.0, 0.5, 0.025, 0.975, 0.05, 0.95, 0.1, 0.9, 0.25, 0.75, 0.333, 0.001, 0.999]
        qs += rounded(rng.random(4), 6)
        cases.append({"data": data, "qs": qs, "expected": [float(v) for v in np.quantile(data, qs)]})
    return cases


def normal_cases():
    xs = [-30.0, -8.0, -5.0, -1.96, -1.0, -0.5, -1e-8, 0.0, 0.3, 0.7071, 1.0, 1.5, 2.5, 6.0]
    ps = [1e-300, 1e-20, 1e-8, 1e-3, 0.01, 0.025, 0.05, 0.2, 0.4999, 0.5, 0.6, 0.9, 0.975, 0.99, 0.999999]
    return {"cdf": [[x, float(scipy.special.ndtr(x))] for x in xs],
            "quantile": [[p, float(scipy.special.ndtri(p))] for p in ps]}


# ---------------------------------------------------------------- bootstrap on explicit resamples
def cluster_stat(kind, values, counts):
    """Statistic of a list of cluster indices, summed left to right (bit-identical with Rust)."""
    def stat(idx):
        if kind == "mean":
            s = 0.0
            for i in idx:
                s += values[int(i)]
            return s / len(idx)
        s, c = 0.0, 0.0
        for i in idx:
            s += values[int(i)]
            c += counts[int(i)]
        return s / c if c > 0 else None  # "ratio": pooled mean of observations; undefined if none
    return stat


def draw_rows(n, b, strata):
    if strata is None:
        return rng.integers(0, n, (b, n)).tolist()
    pools = {s: [i for i in range(n) if strata[i] == s] for s in set(strata)}
    return [[pools[strata[i]][int(rng.integers(0, len(pools[strata[i]])))] for i in range(n)]
            for _ in range(b)]


def bootstrap_cases():
    cases = []
    specs = []
    for k in range(24):
        n = [5, 8, 12, 20, 30, 40][k % 6]
        kind = "ratio" if k % 3 == 2 else "mean"
        method = "bca" if k % 2 else "percentile"
        level = [0.95, 0.9, 0.8][k % 3]
        strata = [int(v) for v in rng.integers(0, 3, n)] if k % 4 == 3 else None
        specs.append((n, kind, method, level, strata, [300, 400, 500][k % 3]))
    # a case where some resamples are undefined: 3 of 5 clusters have no observations
    specs.append((5, "ratio", "percentile", 0.95, None, 400))
    specs.append((5, "ratio", "bca", 0.95, None, 400))
    for idx_case, (n, kind, method, level, strata, b) in enumerate(specs):
        if kind == "mean":
            values = rounded(rng.binomial(10, 0.3, n) / 10 if idx_case % 2 else rng.normal(0, 1, n), 3)
            counts = None
        else:
            counts = [int(c) for c in rng.integers(1, 6, n)]
            if idx_case >= 24:
                counts = [0, 0, 0, 3, 2]
            values = [float(sum(rng.integers(0, 2, c))) for c in counts]  # successes per cluster
        stat = cluster_stat(kind, values, counts)
        rows = draw_rows(n, b, strata)
        reps = [stat(r) for r in rows]
        defined = np.array([v for v in reps if v is not None])
        res = scipy.stats.bootstrap(
            (np.arange(n),), lambda idx: stat(idx), vectorized=False, n_resamples=0,
            bootstrap_result=types.SimpleNamespace(bootstrap_distribution=defined),
            confidence_level=level, method="BCa" if method == "bca" else "percentile")
        lo, hi = res.confidence_interval
        cases.append({"kind": kind, "values": values, "counts": counts, "strata": strata, "rows": rows,
                      "level": level, "method": method, "estimate": stat(np.arange(n)),
                      "lo": finite_or_none(lo), "hi": finite_or_none(hi),
                      "standard_error": float(res.standard_error),
                      "undefined_resamples": len(reps) - len(defined)})
    return cases


# ---------------------------------------------------------------- evaluator metrics (SPEC §3)
def regret_at_k(est, truth, k):
    order = sorted(range(len(est)), key=lambda i: (-est[i], i))
    best = max(truth)
    if best <= 0:
        return None
    return (best - max(truth[i] for i in order[:k])) / best


def mmrv(est, truth):
    total = 0.0
    for i in range(len(est)):
        worst = 0.0
        for j in range(len(est)):
            if (est[i] > est[j]) != (truth[i] > truth[j]):
                worst = max(worst, abs(truth[i] - truth[j]))
        total += worst
    return total / len(est)


def evaluator_cases():
    are = [{"estimate": e, "truth": t, "expected": (abs(e - t) / abs(t) if t != 0 else None)}
           for e, t in [(0.5, 0.4), (0.0, 0.3), (0.3, 0.0), (0.9, 0.9), (1.2, 0.6), (-0.1, 0.25)]]
    ranking = []
    for k in range(30):
        n = int(rng.integers(1, 12))
        est = rounded(rng.random(n), 1)  # one decimal: ties in the estimates
        truth = rounded(rng.random(n), 2 if k % 3 else 1)
        if k == 5:
            truth = [0.0] * n
        ranking.append({"estimates": est, "truths": truth, "mmrv": mmrv(est, truth),
                        "regret": [regret_at_k(est, truth, kk) for kk in range(1, n + 1)]})
    return {"are": are, "ranking": ranking}


def main():
    data = {
        "meta": {"numpy": np.__version__, "scipy": scipy.__version__, "sklearn": sklearn.__version__,
                 "generator": "scripts/reference_stats.py"},
        "auroc": auroc_cases(),
        "grouped_auroc": grouped_cases(),
        "correlation": correlation_cases(),
        "quantiles": quantile_cases(),
        "normal": normal_cases(),
        "bootstrap": bootstrap_cases(),
        "evaluator": evaluator_cases(),
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(data, separators=(",", ":")) + "\n")
    counts = {k: len(v) for k, v in data.items() if isinstance(v, list)}
    print(f"wrote {OUT} ({OUT.stat().st_size / 1e6:.2f} MB): {counts}")


if __name__ == "__main__":
    main()
