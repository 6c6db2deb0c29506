#!/usr/bin/env bash
# Neural FQE speed (benchmark, not CI): ms per gradient step pinned to one core with 1 and 8
# target-action samples, and the throughput of two fits on two threads over one, at the
# Meta-World bridge's data, at d3rlpy's width and batch and at fqe fit's defaults (see
# crates/roboaudit-fqe/examples/neural_speed.rs). Dev profile, which this workspace optimizes
# (Cargo.toml). Appends the figures to BENCHMARKS.md.
# Usage: scripts/bench_fqe_speed.sh [STEPS]   (default 500)
set -euo pipefail
cd "$(dirname "$0")/.."
steps=${1:-500}
# --workspace: the features the tests build with, so the build reuses their artifacts.
CARGO_INCREMENTAL=0 cargo build --locked -q --workspace --example neural_speed
bin=target/debug/examples/neural_speed
machine="$(hostname -s 2>/dev/null || echo vm) ($(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg))"
# d3rlpy's shape (the side-by-side script's and the issue's), then `fqe fit`'s defaults.
for shape in d3rlpy defaults; do
    case $shape in
        d3rlpy) label="batch 256, hidden 256 (d3rlpy's FQE defaults)" ;;
        defaults) label="batch 512, hidden 128 (fqe fit's defaults)" ;;
    esac
    one=$(taskset -c 0 "$bin" "$steps" one $shape)
    two=$("$bin" "$steps" two $shape)
    echo "$shape: $one"
    echo "$shape: $two"
    m1=$(sed -E -n 's/.*M=1 ([0-9.]+) ms\/step.*/\1/p' <<<"$one")
    m8=$(sed -E -n 's/.*M=8 ([0-9.]+) ms\/step.*/\1/p' <<<"$one")
    r8=$(sed -E -n 's/.*, ratio ([0-9.]+).*/\1/p' <<<"$one")
    w8=$(sed -E -n 's/.*work per step: M=1 [0-9]+ MFLOP, M=8 [0-9]+ MFLOP \(ratio ([0-9.]+)\).*/\1/p' <<<"$one")
    bound=$(sed -E -n 's/.*cannot take less than ([0-9.]+) ms \(M=1\).*/\1/p' <<<"$one")
    peak=$(sed -E -n 's/.*1024\^3 product: ([0-9.]+) GFLOP.*/\1/p' <<<"$one")
    got=$(sed -E -n 's/.*achieved ([0-9.]+) \/ ([0-9.]+) GFLOP.*/\1 (M=1), \2 (M=8)/p' <<<"$one")
    rt=$(sed -E 's/.*throughput ratio ([0-9.]+).*/\1/' <<<"$two")
    echo "| $(date -u +%F) | $machine | neural FQE ms per gradient step, Meta-World shape, $label, $steps steps, taskset -c 0 (examples/neural_speed) | M=1 $m1 ms, M=8 $m8 ms | 8 samples over 1: $r8 (target <= 2; the products alone: $w8) | 2 threads over 1: ${rt}x (target >= 1.8) |" >>BENCHMARKS.md
    echo "| $(date -u +%F) | $machine | neural FQE floor per gradient step, $label: the step's products (M=1) at the gemm crate's own f32 rate on this core (1024^3 product, CPU time; examples/neural_speed) | floor $bound ms at $peak GFLOP/s | achieved GFLOP/s of CPU time: $got | - |" >>BENCHMARKS.md
done
