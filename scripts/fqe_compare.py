#!/usr/bin/env python3
"""Compare two `fqe.json` reports of the same policies and tasks, cell by cell.

Written for issue 23's check that the testbed push suite written with `--video` gives the
estimates of the PNG-written suite "within the codec's noise": the same collection (seed,
episodes, ground truth) in both, only the camera's storage differs, so every difference between
the two fits comes from the decoded pixels. The yardstick printed beside it is the spread the
estimator has anyway on one input: the standard deviation of the neural estimate over training
seeds, per cell.

Usage: scripts/fqe_compare.py A/fqe.json B/fqe.json
Prints, per estimator, the median and largest |A − B| over policy × task cells, the median
across-seed standard deviation of the neural estimate in A, and each report's suite metrics.
Standard library only.
"""

import json
import statistics
import sys


def cells(report):
    """{(policy, task): task entry} of a report."""
    return {
        (p["policy"], t["task"]): t for p in report["policies"] for t in p["tasks"]
    }


def fmt(v):
    """A metric to 3 decimals, `—` when undefined."""
    return "—" if v is None else f"{v:.3f}"


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    a_path, b_path = sys.argv[1], sys.argv[2]
    with open(a_path) as f:
        a = json.load(f)
    with open(b_path) as f:
        b = json.load(f)
    ca, cb = cells(a), cells(b)
    if ca.keys() != cb.keys():
        sys.exit(f"{a_path} and {b_path} hold different policy × task cells")
    print(f"A = {a_path}\nB = {b_path}\n{len(ca)} policy × task cells")
    for est in ("neural", "linear", "naive"):
        diffs = []
        for key, ta in ca.items():
            va, vb = ta[est], cb[key][est]
            if est == "neural":
                va, vb = va["mean"], vb["mean"]
            if va is not None and vb is not None:
                diffs.append(abs(va - vb))
        if diffs:
            worst = max(diffs)
            print(
                f"{est:7s} |A − B|: median {statistics.median(diffs):.4f}, "
                f"max {worst:.4f} over {len(diffs)} cells"
            )
    stds = [t["neural"]["std"] for t in ca.values() if t["neural"]["std"] is not None]
    if stds:
        print(
            f"neural seed-to-seed std in A ({len(a['seeds'])} seeds): "
            f"median {statistics.median(stds):.4f}, max {max(stds):.4f}"
        )
    for name, rep in (("A", a), ("B", b)):
        for m in rep.get("metrics", []):
            s = m["suite"]
            print(
                f"{name} {m['estimator']:7s} suite: median ARE {s['median_are']:.3f}, "
                f"Spearman V^π {fmt(s['spearman_v'])}, regret@1 {s['regret_at_1_v']:.3f}"
            )


if __name__ == "__main__":
    main()
