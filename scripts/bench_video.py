#!/usr/bin/env python3
"""Decode throughput of 480x640 AV1 frames into 32x32x3 features: roboaudit-video (the
`decode_features` example) against PyAV on the same files, in the same script.

Both sides decode every frame, convert it to RGB24 and box-average it to 32x32x3 (the raw-pixel
encoder's input size); both let the decoder pick its thread count. Prints frames per second of
each, the ratio roboaudit / PyAV, and appends the figures to BENCHMARKS.md (machine + date).

    /tmp/venv/bin/pip install av numpy
    cargo build --release -p roboaudit-video --example decode_features
    /tmp/venv/bin/python scripts/bench_video.py [BIN] [MP4 ...]

BIN defaults to target/release/examples/decode_features; the files to the two g1_inspire_v21
episodes in ../shared/datasets (AV1, 640x480, 221 and 277 frames).
"""

import datetime
import os
import platform
import subprocess
import sys
import time

import av
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
G1 = os.path.join(ROOT, "..", "shared", "datasets", "g1_inspire_v21", "videos", "chunk-000",
                  "observation.images.cam_high")
BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    ROOT, "target", "release", "examples", "decode_features")
FILES = sys.argv[2:] or [os.path.join(G1, f"episode_0000{e}.mp4") for e in (29, 30)]
REPEATS = 3


def pyav_features(path):
    n, total = 0, 0.0
    with av.open(path) as c:
        s = c.streams.video[0]
        s.thread_type = "AUTO"
        for frame in c.decode(s):
            rgb = frame.to_ndarray(format="rgb24")
            h, w, _ = rgb.shape
            cells = rgb.reshape(32, h // 32, 32, w // 32, 3).mean(axis=(1, 3)) / 255.0
            total += float(cells.sum())
            n += 1
    return n, total


def best(fn):
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return min(times), out


def main():
    py_s, parts = best(lambda: [pyav_features(f) for f in FILES])
    py_n = sum(p[0] for p in parts)
    py_sum = sum(p[1] for p in parts)
    rs_runs = []
    for _ in range(REPEATS):
        out = subprocess.run([BIN, *FILES], check=True, capture_output=True, text=True).stdout
        frames, secs, checksum = out.split()
        rs_runs.append((float(secs), int(frames), float(checksum)))
    rs_s, rs_n, rs_sum = min(rs_runs)
    assert rs_n == py_n, (rs_n, py_n)
    py_fps, rs_fps = py_n / py_s, rs_n / rs_s
    ratio = rs_fps / py_fps
    print(f"frames {py_n} in {len(FILES)} files; feature sums: roboaudit {rs_sum:.1f}, PyAV {py_sum:.1f}")
    print(f"PyAV {av.__version__}: {py_fps:.1f} frames/s; roboaudit-video: {rs_fps:.1f} frames/s")
    print(f"ratio roboaudit / PyAV: {ratio:.2f}")
    line = (f"| {datetime.date.today()} | {platform.node()} ({os.cpu_count()} cores) | video decode "
            f"480x640 AV1 -> 32x32x3 ({py_n} frames, best of {REPEATS}) | roboaudit-video "
            f"{rs_fps:.1f} fr/s | PyAV {av.__version__} {py_fps:.1f} fr/s | ratio {ratio:.2f} |\n")
    path = os.path.join(ROOT, "BENCHMARKS.md")
    if not os.path.exists(path):
        with open(path, "w") as f:
            f.write("# Benchmarks\n\n| date | machine | what | roboaudit | reference | ratio |\n"
                    "|---|---|---|---|---|---|\n")
    with open(path, "a") as f:
        f.write(line)


if __name__ == "__main__":
    main()
