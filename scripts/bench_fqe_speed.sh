#!/usr/bin/env bash
# Neural FQE speed (benchmark, not CI): ms per gradient step pinned to one core with 1 and 8
# target-action samples, and the throughput of two fits on two threads over one, at the
# Meta-World bridge's shape (see crates/roboaudit-fqe/examples/neural_speed.rs). Dev profile,
# which this workspace optimizes (Cargo.toml). Appends the figures to BENCHMARKS.md.
# Usage: scripts/bench_fqe_speed.sh [STEPS]   (default 500)
set -euo pipefail
cd "$(dirname "$0")/.."
steps=${1:-500}
# --workspace: the features the tests build with, so the build reuses their artifacts.
CARGO_INCREMENTAL=0 cargo build --locked -q --workspace --example neural_speed
bin=target/debug/examples/neural_speed
one=$(taskset -c 0 "$bin" "$steps" one)
two=$("$bin" "$steps" two)
echo "$one"
echo "$two"
machine="$(hostname -s 2>/dev/null || echo vm) ($(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg))"
m1=$(sed -E -n 's/.*M=1 ([0-9.]+) ms\/step.*/\1/p' <<<"$one")
m8=$(sed -E -n 's/.*M=8 ([0-9.]+) ms\/step.*/\1/p' <<<"$one")
r8=$(sed -E -n 's/.*, ratio ([0-9.]+).*/\1/p' <<<"$one")
bound=$(sed -E -n 's/.*cannot take less than ([0-9.]+) ms \(M=1\).*/\1/p' <<<"$one")
peak=$(sed -E -n 's/.*1024\^3 product: ([0-9.]+) GFLOP.*/\1/p' <<<"$one")
got=$(sed -E -n 's/.*achieved ([0-9.]+) \/ ([0-9.]+) GFLOP.*/\1 (M=1), \2 (M=8)/p' <<<"$one")
rt=$(sed -E 's/.*throughput ratio ([0-9.]+).*/\1/' <<<"$two")
echo "| $(date -u +%F) | $machine | neural FQE ms per gradient step, Meta-World shape, batch 256, hidden 256, $steps steps, taskset -c 0 (examples/neural_speed) | M=1 $m1 ms, M=8 $m8 ms | 8 samples over 1: $r8 (target <= 2) | 2 threads over 1: ${rt}x (target >= 1.8) |" >>BENCHMARKS.md
echo "| $(date -u +%F) | $machine | neural FQE floor per gradient step: the step's products (M=1) at the gemm crate's own f32 rate on this core (1024^3 product, CPU time; examples/neural_speed) | floor $bound ms at $peak GFLOP/s | achieved GFLOP/s of CPU time: $got | - |" >>BENCHMARKS.md
