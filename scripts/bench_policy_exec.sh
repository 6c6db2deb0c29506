#!/usr/bin/env bash
# Closed-loop learned-policy execution in `retrieval collect` (issue 24: render + policy forward at
# every step, target >= 20 executions/s on 2 cores for Stack) and training time per experience,
# beside two references run in the same script: Replay executions of the same collection (no
# camera, no network) and the Policy run with llvmpipe's own rasterizer threads
# (LP_NUM_THREADS=2, Mesa's default on 2 cores; the CLI sets 0 unless told otherwise).
# Execution rate: a run whose policies are already trained is timed twice, stopped after its first
# part (--max-chunks 1) and to the end; the difference is the executions after the first part, so
# start-up, the library's recording, loading the checkpoints, the own-base checks and the
# embeddings cancel out. Training: the first (training) run's wall time minus the full rerun's,
# per policy trained. Appends the figures to BENCHMARKS.md (machine and date).
# Usage: scripts/bench_policy_exec.sh path/to/roboaudit [MECHANISM LIBRARY SCENES SEEDS CHUNK]
set -euo pipefail
cd "$(dirname "$0")/.."
roboaudit=$(realpath "${1:?usage: scripts/bench_policy_exec.sh path/to/roboaudit [MECHANISM LIBRARY SCENES SEEDS CHUNK]}")
mechanism=${2:-policy}
library=${3:-3}
scenes=${4:-30}
seeds=${5:-2}
chunk=${6:-20}
args="--task stack --library $library --scenes $scenes --seeds $seeds --chunk $chunk"
executions=$((library * (scenes + 1) * seeds))
work=$(mktemp -d /tmp/roboaudit-bench-policy.XXXXXX)
trap 'rm -rf "$work"' EXIT
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# Seconds of a run of `args` into $1 with mechanism $2 (extra arguments after).
timed() {
    local out=$1 m=$2
    shift 2
    local t0
    t0=$(now)
    "$roboaudit" retrieval collect $args --mechanism "$m" --out "$out" "$@" >"$work/log" 2>&1 ||
        { cat "$work/log"; exit 1; }
    secs "$t0" "$(now)"
}

# Executions per second after the first part of a run in $1 whose library is ready.
rate() {
    local dir=$1 m=$2 first full
    rm -rf "$dir/executions"
    first=$(timed "$dir" "$m" --max-chunks 1)
    rm -rf "$dir/executions"
    full=$(timed "$dir" "$m")
    awk -v n=$((executions - chunk)) -v a="$first" -v b="$full" 'BEGIN { printf "%.1f", n / (b - a) }'
}

train=$(timed "$work/run" "$mechanism")
policies=$(grep -o '"weights_sha256"' "$work/run/collect.json" | wc -l)
rm -rf "$work/run/executions"
full=$(timed "$work/run" "$mechanism")
per_policy=$(awk -v a="$full" -v b="$train" -v n="$policies" 'BEGIN { printf "%.1f", (b - a) / n }')
ours=$(rate "$work/run" "$mechanism")
threads=$(LP_NUM_THREADS=2 rate "$work/run" "$mechanism")
timed "$work/replay" replay >/dev/null
replay=$(rate "$work/replay" replay)
speedup=$(awk -v a="$ours" -v b="$threads" 'BEGIN { printf "%.2f", a / b }')
share=$(awk -v a="$ours" -v b="$replay" 'BEGIN { printf "%.2f", a / b }')
echo "$mechanism: $ours executions/s (llvmpipe threads: $threads/s, ratio $speedup; Replay $replay/s, ratio $share); training $per_policy s per policy ($policies trained, first run $train s)"
machine="$(hostname -s 2>/dev/null || echo vm) ($(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg))"
echo "| $(date -u +%F) | $machine | retrieval collect --mechanism $mechanism, Stack, $args ($executions executions; scripts/bench_policy_exec.sh) | $ours executions/s after the first part (target >= 20); training $per_policy s per policy ($policies trained; target < 30 s) | llvmpipe rasterizer threads (LP_NUM_THREADS=2): $threads/s; Replay: $replay/s | ours over llvmpipe threads: ${speedup}x; over Replay: ${share}x |" >>BENCHMARKS.md
