#!/usr/bin/env python3
"""Speed of served policies (a benchmark, not a test): run with the policy-server bridge's venv.

    python scripts/bench_policy_server.py [--bin target/debug/roboaudit] [--pairs 16] [--episodes 4]

1. Round trip on loopback with a 64x64 image: `roboaudit fqe actions` against the bridge's
   `state` policy on a push-suite dataset with 64x64 frames; the manifest's median round trip
   minus the server's own median `infer_ms` is the client's overhead (target: under 1 ms). The
   same observations through openpi's own Python client (`WebsocketClientPolicy`) are the
   reference run in this script: ratio Rust overhead / Python overhead.
2. Memory collection: `roboaudit memory collect --policy faithful` (built-in) against the same
   collection with the faithful calibrator served from Python (`--policy faithful=ws://…`);
   ratio served / built-in wall time (target: at most 2).
Writes the figures into BENCHMARKS.md (section "Served policies"), with machine and date.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
BRIDGE = ROOT / "bridges" / "policy_server"


def start_server(tmp: Path, *args: str) -> tuple[subprocess.Popen, str]:
    port_file = tmp / f"port-{time.monotonic_ns()}"
    p = subprocess.Popen([sys.executable, "-m", "roboaudit_policy_server", "--port", "0",
                          "--port-file", str(port_file), *args], cwd=BRIDGE)
    for _ in range(400):
        if port_file.exists():
            return p, f"ws://127.0.0.1:{port_file.read_text()}"
        time.sleep(0.05)
    p.kill()
    raise SystemExit("server did not start")


def timed(cmd: list[str]) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def python_reference(url: str, dataset: Path, n: int) -> tuple[float, float]:
    """Median round trip and median server infer_ms through openpi's client (ms)."""
    import pyarrow.parquet as pq
    from PIL import Image
    from openpi_client.websocket_client_policy import WebsocketClientPolicy

    rows = []
    for f in sorted((dataset / "data").rglob("*.parquet")):
        rows.extend(pq.read_table(f).to_pylist())
    c = WebsocketClientPolicy(url)
    rtt, srv = [], []
    for r in rows[:n]:
        obs = {"observation/image": np.asarray(Image.open(io.BytesIO(r["observation.images.scene"]["bytes"])).convert("RGB")),
               "observation/state": np.asarray(r["observation.state"], np.float32), "prompt": "push"}
        t = time.perf_counter()
        out = c.infer(obs)
        rtt.append((time.perf_counter() - t) * 1e3)
        srv.append(out["server_timing"]["infer_ms"])
    return statistics.median(rtt), statistics.median(srv)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=str(ROOT / "target" / "debug" / "roboaudit"))
    ap.add_argument("--pairs", type=int, default=16)
    ap.add_argument("--episodes", type=int, default=4)
    args = ap.parse_args()
    bin_ = str(Path(args.bin).resolve())
    tmp = Path(tempfile.mkdtemp(prefix="bench-ps-"))
    procs = []
    try:
        run = tmp / "run"
        subprocess.run([bin_, "fqe", "collect", "--small", "--image-size", "64", "--episodes", str(args.episodes),
                        "--out", str(run)], check=True, stdout=subprocess.DEVNULL)
        p, url = start_server(tmp, "--policy", "state", "--action-dim", "7")
        procs.append(p)
        out = tmp / "a.parquet"
        subprocess.run([bin_, "fqe", "actions", "--dataset", str(run / "dataset"), "--policy", f"s={url}",
                        "--out", str(out)], check=True, stdout=subprocess.DEVNULL)
        lat = json.loads((tmp / "a.manifest.json").read_text())["latency"]
        rust_overhead = lat["median_ms"] - lat["server_infer_median_ms"]
        py_rtt, py_srv = python_reference(url, run / "dataset", lat["queries"])
        py_overhead = py_rtt - py_srv

        p, url = start_server(tmp, "--policy", "faithful", "--horizon", "12")
        procs.append(p)
        common = ["memory", "collect", "--pairs", str(args.pairs), "--seeds", "3"]
        builtin = timed([bin_, *common, "--policy", "faithful", "--out", str(tmp / "m-builtin")])
        served = timed([bin_, *common, "--policy", f"faithful={url}", "--out", str(tmp / "m-served")])
        m = json.loads((tmp / "m-served" / "manifest.json").read_text())["served_policy"]["latency"]
    finally:
        for p in procs:
            p.kill()
    lines = [
        "## Served policies (`scripts/bench_policy_server.py`)",
        "",
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.machine()}, {os.cpu_count()} cores "
        f"(load average {os.getloadavg()[0]:.1f}), Python {platform.python_version()}, debug-profile binary "
        f"(optimized dev profile).",
        "",
        "| measure | value |",
        "|---|---|",
        f"| queries (64×64 image + 15-d state, loopback) | {lat['queries']} |",
        f"| roboaudit client: median round trip | {lat['median_ms']:.3f} ms (p95 {lat['p95_ms']:.3f} ms) |",
        f"| server's own infer_ms (median) | {lat['server_infer_median_ms']:.3f} ms |",
        f"| **roboaudit client overhead** (median − infer) | **{rust_overhead:.3f} ms** (target < 1 ms) |",
        f"| openpi Python client overhead, same server (reference) | {py_overhead:.3f} ms |",
        f"| ratio roboaudit / openpi client overhead | {rust_overhead / py_overhead:.2f} |",
        f"| memory collect faithful, {args.pairs} pairs × 3 seeds: built-in | {builtin:.2f} s |",
        f"| same, faithful calibrator served from Python | {served:.2f} s ({m['queries']} queries, median {m['median_ms']:.3f} ms) |",
        f"| **ratio served / built-in** | **{served / builtin:.2f}** (target ≤ 2) |",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    bench = ROOT / "BENCHMARKS.md"
    old = bench.read_text() if bench.exists() else "# Benchmarks\n\nFigures written by the benchmark scripts (machine and date in each section).\n\n"
    pattern = re.compile(r"## Served policies.*?(?=\n## |\Z)", re.S)
    new = pattern.sub(text, old) if pattern.search(old) else old.rstrip("\n") + "\n\n" + text
    bench.write_text(new)


if __name__ == "__main__":
    main()
