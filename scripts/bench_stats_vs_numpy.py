#!/usr/bin/env python3
"""Rust (roboaudit-stats) vs vectorized NumPy: a 10,000-resample scene-cluster bootstrap of the
oracle-minus-random gap over a 50 x 40 success matrix (50 experiences x 40 scenes, scenes are the
clusters), plus pooled AUROC over 10^6 samples (Rust vs scikit-learn).

Pinned versions: numpy 2.2.6, scikit-learn 1.6.1 (Python 3.11).
Usage (from the workspace root; BLAS tuning variables unset for NumPy):
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python3 scripts/bench_stats_vs_numpy.py

Two forms of the statistic are timed on both sides:
- generic: every resample recomputes max over experiences and the mean from the drawn columns
  (what a statistic that is not separable per scene, e.g. one that recomputes selection
  frequencies, has to do);
- separable: the per-scene gap is precomputed once and each resample averages 40 numbers.
The Rust side runs `cargo run --example bench_bootstrap -p roboaudit-stats` (dev profile,
opt-level 2), which prints its own timings (median and minimum of 15 runs after a warm-up) as
JSON. Ratios are reported for medians and for minima (the minima are the better estimate of a
quiet machine when other jobs share the cores).
"""

import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

E, S, B, REPEATS = 50, 40, 10_000, 15
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def timed(fn):
    fn()  # warm-up
    secs = []
    out = None
    for _ in range(REPEATS):
        t = time.perf_counter()
        out = fn()
        secs.append(time.perf_counter() - t)
    return statistics.median(secs), min(secs), out


def main():
    e, s = np.meshgrid(np.arange(E), np.arange(S), indexing="ij")
    P = ((e * 7 + s * 13) % 11) / 10.0  # P[e, s], the same matrix as the Rust example
    estimate = P.max(axis=0).mean() - P.mean()

    PT = np.ascontiguousarray(P.T)  # scene-major, as the Rust side: reductions run along the last axis

    def generic():
        rng = np.random.default_rng(0)
        idx = rng.integers(0, S, (B, S))
        sub = PT[idx]  # (B, S, E); the fastest of the layouts tried (P[:, idx] was ~10-20 % slower)
        gap = sub.max(axis=2).mean(axis=1) - sub.sum(axis=2).mean(axis=1) / E
        return np.percentile(gap, [2.5, 97.5]), np.std(gap, ddof=1)

    per_scene = P.max(axis=0) - P.mean(axis=0)

    def separable():
        rng = np.random.default_rng(0)
        idx = rng.integers(0, S, (B, S))
        gap = per_scene[idx].mean(axis=1)
        return np.percentile(gap, [2.5, 97.5]), np.std(gap, ddof=1)

    np_generic, np_generic_min, (ci, _) = timed(generic)
    np_separable, np_separable_min, _ = timed(separable)

    rng = np.random.default_rng(7)
    labels = rng.random(1_000_000) < 0.3
    scores = np.round((rng.random(1_000_000) + 0.2 * labels) * 1000) / 1000
    from sklearn.metrics import roc_auc_score
    sk_auroc, sk_auroc_min, _ = timed(lambda: roc_auc_score(labels, scores))

    cmd = ["cargo", "run", "-q", "--example", "bench_bootstrap", "-p", "roboaudit-stats"]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        sys.exit(f"cargo failed:\n{proc.stderr}")
    rust = json.loads(proc.stdout.strip().splitlines()[-1])
    assert abs(rust["estimate"] - estimate) < 1e-12, (rust["estimate"], estimate)

    report = {
        "numpy": {"generic_median_s": np_generic, "generic_min_s": np_generic_min,
                  "separable_median_s": np_separable, "separable_min_s": np_separable_min,
                  "estimate": estimate, "percentile_ci": ci.tolist(),
                  "sklearn_auroc_1e6_median_s": sk_auroc, "sklearn_auroc_1e6_min_s": sk_auroc_min},
        "rust": rust,
        "speedup_generic": np_generic / rust["generic_median_s"],
        "speedup_separable": np_separable / rust["separable_median_s"],
        "speedup_auroc_vs_sklearn": sk_auroc / rust["auroc_median_s"],
        # best-of-15 on both sides: closer to a quiet machine when others share the cores
        "speedup_generic_min": np_generic_min / rust["generic_min_s"],
        "speedup_separable_min": np_separable_min / rust["separable_min_s"],
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
