#!/usr/bin/env python3
"""Rust (roboaudit-stats) vs vectorized NumPy on the same input, in one invocation:
a 10,000-resample scene-cluster bootstrap over a 50 x 40 success matrix (50 experiences x 40
scenes, scenes are the clusters), plus pooled AUROC over 10^6 samples (Rust vs scikit-learn).

Pinned versions: numpy 2.2.6, scikit-learn 1.6.1 (Python 3.11); threadpoolctl, when installed,
reports which BLAS kernel NumPy runs.
Usage, from the workspace root:
    python3 scripts/bench_stats_vs_numpy.py [--rounds 3]
The NumPy side runs in a child process of this script with OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE
removed from its environment (OpenBLAS then picks its kernel for the actual CPU); the Rust side
runs `cargo run -q --example bench_bootstrap -p roboaudit-stats` in the caller's environment (dev
profile: opt-level 2; RUSTFLAGS / CARGO_TARGET_DIR are passed through, e.g. a target-cpu=native build).

Statistics (both sides compute the same numbers on the same matrix; estimates are checked to 1e-12):
- bf (headline): best-fixed success over the drawn scenes, BF = max_e mean_{s in draw} P[e, s];
  not separable per scene. NumPy: per-resample scene counts by one bincount (10,000 x 40), as
  float64 @ P.T (BLAS), max over experiences.
- gap: oracle minus random, mean_s max_e P[e, s] - mean_{e,s} P[e, s], recomputed from the drawn
  scenes' columns.
The report's bf.floor puts the 20x target next to the least work: the time 20x allows the
Rust side, NumPy's BLAS product alone (counts drawn beforehand), and the Rust sums-and-max kernel
alone on every thread (multiplicities drawn beforehand, no draws, no interval); numpy_best divided
by the latter bounds the ratio any engine can reach on this machine.
Each timed run includes drawing the resample indices, the statistic, the 95 % percentile interval
and the standard error. The Rust headline goes through `bootstrap_sums` (the engine draws each
resample's scene multiplicities and the library's weighted-sum kernel forms the 50 experience sums;
the statistic takes their maximum; same resamples and result as the index-list `bootstrap` and the
counts engine `bootstrap_counts`, which the example times too, as profile_min_s.bf_index_engine and
bf_counts_engine). Both sides: one warm-up, then 25 timed runs, best and median reported;
the two sides alternate for --rounds rounds and the best / median-of-medians over rounds is kept,
so both see the same machine load.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

E, S, B, REPEATS = 50, 40, 10_000, 25
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MASK = (1 << 64) - 1


def splitmix64(x):
    z = (x + 0x9E3779B97F4A7C15) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def np_splitmix64(x):
    """splitmix64 on a uint64 array (NumPy array arithmetic wraps modulo 2^64)."""
    import numpy as np

    z = x + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def timed(fn):
    out = fn()  # warm-up
    secs = []
    for _ in range(REPEATS):
        t = time.perf_counter()
        out = fn()
        secs.append(time.perf_counter() - t)
    return statistics.median(secs), min(secs), out


def numpy_side():
    """Child process: NumPy and scikit-learn timings as one JSON line."""
    import numpy as np

    # P[e, s], the same matrix as examples/bench_bootstrap.rs
    P = np.array([[(splitmix64(e * S + s) >> 11) * 2.0**-53 for s in range(S)] for e in range(E)])
    PT = np.ascontiguousarray(P.T)  # (S, E)
    offsets = (np.arange(B) * S)[:, None]

    def bf():
        idx = np.random.default_rng(0).integers(0, S, (B, S))
        counts = np.bincount((idx + offsets).ravel(), minlength=B * S).reshape(B, S)
        # float64 before the product: int64 @ float64 is twice as slow (no BLAS for the cast)
        reps = (counts.astype(np.float64) @ PT).max(axis=1) / S
        return np.percentile(reps, [2.5, 97.5]), np.std(reps, ddof=1)

    def gap():
        idx = np.random.default_rng(0).integers(0, S, (B, S))
        sub = PT[idx]  # (B, S, E)
        reps = sub.max(axis=2).mean(axis=1) - sub.sum(axis=2).mean(axis=1) / E
        return np.percentile(reps, [2.5, 97.5]), np.std(reps, ddof=1)

    bf_med, bf_min, (bf_ci, _) = timed(bf)
    # NumPy's own floor: the BLAS product of counts drawn beforehand, nothing else
    counts = np.bincount((np.random.default_rng(0).integers(0, S, (B, S)) + offsets).ravel(),
                         minlength=B * S).reshape(B, S).astype(np.float64)
    _, product_min, _ = timed(lambda: counts @ PT)
    gap_med, gap_min, (gap_ci, _) = timed(gap)

    # the same samples as the Rust example: u_k = splitmix64(k) >> 11 · 2^-53, label i is
    # u_{2i} < 0.3, score i is floor((u_{2i+1} + 0.2·label) · 1000) / 1000 (many ties)
    u = np_splitmix64(np.arange(2_000_000, dtype=np.uint64))
    u = (u >> np.uint64(11)).astype(np.float64) * 2.0**-53
    labels = u[0::2] < 0.3
    scores = np.floor((u[1::2] + 0.2 * labels) * 1000) / 1000
    from sklearn.metrics import roc_auc_score

    au_med, au_min, au = timed(lambda: roc_auc_score(labels, scores))
    try:
        from threadpoolctl import threadpool_info

        blas = [{k: d.get(k) for k in ("internal_api", "architecture", "num_threads", "version")}
                for d in threadpool_info()]
    except ImportError:
        blas = "threadpoolctl not installed"
    print(json.dumps({
        "bf_estimate": float(P.mean(axis=1).max()), "bf_ci": bf_ci.tolist(),
        "bf_median_s": bf_med, "bf_min_s": bf_min, "bf_product_only_min_s": product_min,
        "gap_estimate": float(P.max(axis=0).mean() - P.mean()), "gap_ci": gap_ci.tolist(),
        "gap_median_s": gap_med, "gap_min_s": gap_min,
        "auroc": float(au), "auroc_median_s": au_med, "auroc_min_s": au_min,
        "blas": blas, "numpy": np.__version__,
        "env": {k: os.environ.get(k) for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")},
    }))


def run_json(cmd, env):
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--numpy-side", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.numpy_side:
        numpy_side()
        return

    numpy_env = {k: v for k, v in os.environ.items()
                 if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
    numpy_cmd = [sys.executable, os.path.abspath(__file__), "--numpy-side"]
    rust_cmd = ["cargo", "run", "-q", "--example", "bench_bootstrap", "-p", "roboaudit-stats"]
    # build first, so that no round times the compiler
    subprocess.run(["cargo", "build", *rust_cmd[2:]], cwd=ROOT, check=True)
    rounds = []
    for _ in range(args.rounds):
        load = os.getloadavg()[0]
        rounds.append((run_json(numpy_cmd, numpy_env), run_json(rust_cmd, dict(os.environ)), load))
    np0, rs0 = rounds[0][0], rounds[0][1]
    for key in ("bf_estimate", "gap_estimate"):
        assert abs(np0[key] - rs0[key]) < 1e-12, (key, np0[key], rs0[key])
    assert abs(np0["auroc"] - rs0["auroc"]) < 1e-12, (np0["auroc"], rs0["auroc"])

    def best(side, key):
        return min(r[side][f"{key}_min_s"] for r in rounds)

    def med(side, key):
        return statistics.median(r[side][f"{key}_median_s"] for r in rounds)

    report = {"load_average_1min_per_round": [r[2] for r in rounds],
              "numpy_blas": np0["blas"], "numpy_env": np0["env"],
              "rust_threads": rs0["threads"], "rust_profile_min_s": rs0["profile_min_s"]}
    for key, what in (("bf", "best-fixed bootstrap 10k x 50x40"),
                      ("gap", "oracle-minus-random bootstrap 10k x 50x40"),
                      ("auroc", "pooled AUROC 1e6 (NumPy column = scikit-learn)")):
        n_best, r_best = best(0, key), best(1, key)
        n_med, r_med = med(0, key), med(1, key)
        report[key] = {"what": what,
                       "numpy_best_s": n_best, "rust_best_s": r_best, "ratio_best": n_best / r_best,
                       "numpy_median_s": n_med, "rust_median_s": r_med,
                       "ratio_median": n_med / r_med}
    report["bf"]["estimate"] = rs0["bf_estimate"]
    # What the 20x target asks of this machine, next to the least work any engine must do.
    numpy_best = report["bf"]["numpy_best_s"]
    floor = min(r[1]["profile_min_s"]["bf_sums_floor"] for r in rounds)
    report["bf"]["floor"] = {
        "rust_time_for_20x_s": numpy_best / 20,
        "numpy_blas_product_only_s": min(r[0]["bf_product_only_min_s"] for r in rounds),
        "rust_sums_kernel_only_s": floor,
        "ratio_ceiling": numpy_best / floor,
    }
    report["bf"]["ci_numpy"], report["bf"]["ci_rust"] = np0["bf_ci"], [rs0["bf_lo"], rs0["bf_hi"]]
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
