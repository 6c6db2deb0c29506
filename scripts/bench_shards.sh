#!/usr/bin/env bash
# Scaling of a sharded retrieval collection on this machine: one shard (the unsharded run) with one
# thread, against 2 shards as separate processes with one thread each, on the same configuration
# (throughput ratio = one-shard wall time / two-shard wall time; the target is >= 1.8 on 2 free
# cores); per-shard overhead (a shard that writes no part: start-up, library recording, model
# compilation, embeddings, manifests); the merge; and the per-execution cost that the README's
# cluster estimate uses. Appends the figures to crates/roboaudit-shard/BENCHMARKS.md.
# Usage: scripts/bench_shards.sh path/to/roboaudit [LIBRARY SCENES SEEDS]
set -euo pipefail
cd "$(dirname "$0")/.."
roboaudit=$(realpath "${1:?usage: scripts/bench_shards.sh path/to/roboaudit [LIBRARY SCENES SEEDS]}")
library=${2:-10}
scenes=${3:-20}
seeds=${4:-2}
args="--task stack --library $library --scenes $scenes --seeds $seeds --chunk 20"
executions=$((library * (scenes + 1) * seeds))
work=$(mktemp -d /tmp/roboaudit-bench-shards.XXXXXX)
trap 'rm -rf "$work"' EXIT
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
export RAYON_NUM_THREADS=1

# Overhead: shard 0/2 stopped before its first part, three times; the median.
overheads=()
for k in 1 2 3; do
  t0=$(now)
  # shellcheck disable=SC2086
  "$roboaudit" retrieval collect $args --shard 0/2 --max-chunks 0 --out "$work/o$k" >/dev/null
  overheads+=("$(secs "$t0" "$(now)")")
done
overhead=$(printf '%s\n' "${overheads[@]}" | sort -n | sed -n 2p)

t0=$(now)
# shellcheck disable=SC2086
"$roboaudit" retrieval collect $args --out "$work/whole" >/dev/null
one=$(secs "$t0" "$(now)")

t0=$(now)
for i in 0 1; do
  # shellcheck disable=SC2086
  "$roboaudit" retrieval collect $args --shard "$i/2" --out "$work/s$i" >/dev/null &
done
wait
two=$(secs "$t0" "$(now)")

t0=$(now)
"$roboaudit" merge "$work/s0" "$work/s1" --out "$work/merged" >/dev/null
merge=$(secs "$t0" "$(now)")
identical=yes
while IFS= read -r f; do
  cmp -s "$work/whole/$f" "$work/merged/$f" || identical=no
done < <(cd "$work/whole" && find . -type f)

ratio=$(awk -v a="$one" -v b="$two" 'BEGIN { printf "%.2f", a / b }')
per_exec=$(awk -v a="$one" -v o="$overhead" -v n="$executions" 'BEGIN { printf "%.1f", (a - o) / n * 1000 }')
load=$(cut -d' ' -f1-3 /proc/loadavg)
report="$(date -u +%Y-%m-%d) $(nproc) cores, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1), load average before the run's end: $load
- configuration: $args ($executions executions), one rayon thread per process
- one shard (unsharded run): ${one} s; two shards as two processes: ${two} s; throughput ratio ${ratio}x (target >= 1.8 on 2 free cores)
- per-shard overhead (shard started and stopped before its first part; median of 3: ${overheads[*]}): ${overhead} s
- per-execution cost on one core (one-shard time minus overhead, / executions): ${per_exec} ms
- merge of the 2 shards: ${merge} s; merged = unsharded byte for byte: ${identical}"
echo "$report"
{
  echo
  echo "## scripts/bench_shards.sh $(date -u +%Y-%m-%dT%H:%MZ)"
  echo
  echo "$report"
} >> crates/roboaudit-shard/BENCHMARKS.md
[ "$identical" = yes ]
