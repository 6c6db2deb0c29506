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
Appends the figures to BENCHMARKS.md as two rows of its table (date and machine in each).
"""

from __future__ import annotations

import argparse
import datetime
import io
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
BRIDGE = ROOT / "bridges" / "policy_server"
OPENPI_CLIENT = version("openpi-client")


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
            p.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    date = datetime.date.today()
    machine = f"{platform.node()} ({os.cpu_count()} cores)"
    rows = [
        f"| {date} | {machine} | served policy round trip on loopback, 64x64 image + state "
        f"({lat['queries']} queries, median) | roboaudit client {lat['median_ms']:.3f} ms, server infer_ms "
        f"{lat['server_infer_median_ms']:.3f} ms: overhead {rust_overhead:.3f} ms (target < 1 ms) | "
        f"openpi-client {OPENPI_CLIENT} overhead {py_overhead:.3f} ms | ratio {rust_overhead / py_overhead:.2f} |",
        f"| {date} | {machine} | memory collect faithful, {args.pairs} pairs x 3 seeds, wall time "
        f"(served: {m['queries']} queries, median {m['median_ms']:.3f} ms) | served from Python {served:.2f} s | "
        f"built-in {builtin:.2f} s | ratio {served / builtin:.2f} (target <= 2) |",
    ]
    print("\n".join(rows))
    path = ROOT / "BENCHMARKS.md"
    if not path.exists():
        path.write_text("# Benchmarks\n\n| date | machine | what | roboaudit | reference | ratio |\n"
                        "|---|---|---|---|---|---|\n")
    with path.open("a") as f:
        f.write("\n".join(rows) + "\n")

if __name__ == "__main__":
    main()
