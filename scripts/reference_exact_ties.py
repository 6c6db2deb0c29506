#!/usr/bin/env python3
"""Exact reference values for a retrieval library full of tied qualities (issue 21).

Pinned versions: Python 3.11, numpy 2.2.6, scipy 1.15.3.

    python scripts/reference_exact_ties.py [OUT_DIR]

OUT_DIR defaults to crates/roboaudit-retrieval/tests/data/exact_ties. The script writes the four
input CSVs of a retrieval audit (50 experiences x 40 query scenes, 5 executions per cell, 10 in a
quarter of the cells with the same rate) and expected.json, computed with Python's `fractions`:

* every quality q(e), R, O, BF and the best-fixed experience, T_O (tied maxima split
  fractionally), the quality-equalized libraries of the sizes in expected["library_sizes"];
* the own-base Spearman rho: scipy.stats.spearmanr fed the exact values (as whole numbers over one
  common denominator, so that equal fractions are equal numbers), checked against Pearson's r of
  average ranks computed here from the Fractions;
* for the record, the rho that float means summed in scene order give (the defect of issue 21:
  equal rates stop tying).

Floats in expected.json are `float(Fraction)`, the correctly rounded value of each fraction, so the
Rust engine's exact arithmetic must reproduce them bit for bit. Deterministic: rerunning rewrites
the same bytes.

How the ties are built: 10 profiles (multisets of 40 success counts out of 5); every profile is
given to 5 experiences, each with the scenes in another order, so the 5 rows have equal q(e) as
fractions while a float sum in scene order makes them differ in the last bits. Own-base success:
experiences 0-19 have their base scene among the query scenes (own-base = P there, q computed
without that scene), 20-34 have own-base executions in a scene of their own, 35-49 a recorded
own_base_success (a decimal, compared exactly as the binary fraction it parses to).
"""

from __future__ import annotations

import csv
import json
import math
import random
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
from scipy import stats

K, N, SEEDS = 50, 40, 5
GROUP = 5
SIZES = [5, 12, 30]
SEED = 21


def build(rng: random.Random):
    profiles = []
    for g in range(K // GROUP):
        # Few distinct success counts per profile: qualities collide across profiles too.
        levels = [rng.choice([1, 2, 3, 4]) for _ in range(3)]
        profiles.append([levels[rng.randrange(3)] for _ in range(N)])
    succ = []  # succ[e][s] out of SEEDS
    for e in range(K):
        row = list(profiles[e // GROUP])
        rng.shuffle(row)
        succ.append(row)
    # A quarter of the cells run 10 seeds with doubled successes: the same rate.
    doubled = [[rng.random() < 0.25 for _ in range(N)] for _ in range(K)]
    return succ, doubled


def write_inputs(out: Path, succ, doubled, rng: random.Random):
    out.mkdir(parents=True, exist_ok=True)
    scene_ids = [f"s{s:02d}" for s in range(N)]
    exp_ids = [f"e{e:02d}" for e in range(K)]
    with open(out / "scenes.csv", "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["scene_id", "perturbation", "layout_level", "appearance_draw"])
        for s in range(N):
            kind = ["appearance", "layout", "fresh"][s % 3]
            w.writerow([scene_ids[s], kind, s % 4, s % 7])
    recorded = {}
    own_runs = {}
    base = {}
    rows = []
    for e in range(K):
        if e < 20:
            base[e] = ("query", (e * 7) % N)
            b, own = scene_ids[(e * 7) % N], ""
        elif e < 35:
            base[e] = ("own", None)
            b, own = f"home{e:02d}", ""
            own_runs[e] = rng.choice([1, 2, 3, 4])  # successes out of 5 own-base executions
        else:
            base[e] = ("recorded", None)
            b = f"home{e:02d}"
            own = rng.choice(["0.2", "0.4", "0.6", "0.8"])
            recorded[e] = own
        rows.append([exp_ids[e], b, e, own])
    with open(out / "experiences.csv", "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["experience_id", "base_scene_id", "recorded_at", "own_base_success"])
        w.writerows(rows)
    execs = []
    for e in range(K):
        for s in range(N):
            seeds = 2 * SEEDS if doubled[e][s] else SEEDS
            wins = succ[e][s] * (2 if doubled[e][s] else 1)
            for k in range(seeds):
                execs.append([exp_ids[e], scene_ids[s], 1000 + k, int(k < wins)])
        if e in own_runs:
            for k in range(SEEDS):
                execs.append([exp_ids[e], f"home{e:02d}", 1000 + k, int(k < own_runs[e])])
    rng.shuffle(execs)  # file order must not matter
    with open(out / "executions.csv", "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["experience_id", "scene_id", "seed", "success"])
        w.writerows(execs)
    with open(out / "embeddings.csv", "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["representation", "kind", "id", "vector"])
        for kind, ids in (("experience", exp_ids), ("scene", scene_ids)):
            for i in ids:
                vec = [rng.randrange(-1024, 1024) / 256 for _ in range(2)]
                w.writerow(["grid", kind, i, " ".join(repr(v) for v in vec)])
    return exp_ids, base, own_runs, recorded


def average_ranks(values):
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end < len(order) and values[order[end]] == values[order[start]]:
            end += 1
        for i in order[start:end]:
            ranks[i] = Fraction(start + end + 1, 2)
        start = end
    return ranks


def pearson(x, y):
    mx, my = sum(x) / len(x), sum(y) / len(y)
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    return float(sxy) / math.sqrt(float(sxx) * float(syy))


def whole_numbers(values):
    """Fractions as Python ints over their common denominator (exact, order-preserving)."""
    den = math.lcm(*(v.denominator for v in values))
    return np.array([int(v * den) for v in values], dtype=object)


def main(argv: list[str]) -> int:
    root = Path(__file__).resolve().parent.parent
    out = Path(argv[1]) if len(argv) > 1 else root / "crates/roboaudit-retrieval/tests/data/exact_ties"
    rng = random.Random(SEED)
    succ, doubled = build(rng)
    exp_ids, base, own_runs, recorded = write_inputs(out, succ, doubled, rng)
    P = [[Fraction(succ[e][s], SEEDS) for s in range(N)] for e in range(K)]
    q = [sum(row) / N for row in P]
    R = sum(q) / K
    O = sum(max(P[e][s] for e in range(K)) for s in range(N)) / N
    bf = max(range(K), key=lambda e: (q[e], -e))
    share = [Fraction(0)] * K
    for s in range(N):
        best = max(P[e][s] for e in range(K))
        tied = [e for e in range(K) if P[e][s] == best]
        for e in tied:
            share[e] += Fraction(1, len(tied))
    T_O = max(share) / N
    equalized = {}
    for size in SIZES:
        order = sorted(range(K), key=lambda e: (q[e], e))
        widths = [q[order[i + size - 1]] - q[order[i]] for i in range(K - size + 1)]
        start = widths.index(min(widths))  # first window among ties
        equalized[str(size)] = [exp_ids[e] for e in sorted(order[start:start + size])]

    own, qual, qual_float = [], [], []
    for e in range(K):
        kind, b = base[e]
        scenes = [s for s in range(N) if s != b]
        if kind == "query":
            own.append(P[e][b])
        elif kind == "own":
            own.append(Fraction(own_runs[e], SEEDS))
        else:
            own.append(Fraction(float(recorded[e])))
        qual.append(sum(P[e][s] for s in scenes) / len(scenes))
        # The float mean in scene order, as the engine used to compute it.
        acc = 0.0
        for s in scenes:
            acc += (succ[e][s] * (2 if doubled[e][s] else 1)) / (2 * SEEDS if doubled[e][s] else SEEDS)
        qual_float.append(acc / len(scenes))
    rho_scipy = float(stats.spearmanr(whole_numbers(own), whole_numbers(qual)).statistic)
    rho_exact = pearson(average_ranks(own), average_ranks(qual))
    assert abs(rho_scipy - rho_exact) < 1e-12, (rho_scipy, rho_exact)
    own_float = [float(v) for v in own]
    rho_float = float(stats.spearmanr(own_float, qual_float).statistic)

    expected = {
        "source": "scripts/reference_exact_ties.py (fractions; scipy 1.15.3 spearmanr on exact values)",
        "n_experiences": K,
        "n_scenes": N,
        "library_sizes": SIZES,
        "quality": {exp_ids[e]: float(q[e]) for e in range(K)},
        "quality_fraction": {exp_ids[e]: f"{q[e].numerator}/{q[e].denominator}" for e in range(K)},
        "distinct_qualities": len(set(q)),
        "random": float(R),
        "oracle": float(O),
        "best_fixed": float(q[bf]),
        "best_fixed_experience": exp_ids[bf],
        "headroom": float(O - q[bf]),
        "oracle_top_pick_share": float(T_O),
        "best_fixed_rule_concentration": float(Fraction(1) / T_O),
        "best_fixed_rule_margin": float(q[bf] - R),
        "quality_equalized": equalized,
        "quality_equalized_range": {
            str(size): float(max(q[exp_ids.index(x)] for x in lib) - min(q[exp_ids.index(x)] for x in lib))
            for size, lib in ((int(k), v) for k, v in equalized.items())
        },
        "own_base_n": K,
        "own_base_spearman": rho_scipy,
        "own_base_distinct_qualities": len(set(qual)),
        "own_base_spearman_float_sums": rho_float,
        "own_base_distinct_float_qualities": len(set(qual_float)),
    }
    with open(out / "expected.json", "w") as fh:
        json.dump(expected, fh, indent=1, sort_keys=True)
        fh.write("\n")
    print(json.dumps({k: expected[k] for k in ("own_base_spearman", "own_base_spearman_float_sums",
                                              "own_base_distinct_qualities",
                                              "own_base_distinct_float_qualities",
                                              "distinct_qualities", "best_fixed_experience")}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
