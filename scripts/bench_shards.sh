#!/usr/bin/env bash
# Scaling of a sharded retrieval collection on this machine: one shard (the unsharded run) with one
# thread, against 2 shards as separate processes with one thread each, on the same configuration
# (throughput ratio = one-shard wall time / two-shard wall time, median of three alternated
# pairs with the hypervisor's steal time beside it; the target is >= 1.8 on 2 free cores); per-shard overhead (a shard that writes no part: start-up, library recording, model
# compilation, embeddings, manifests); the merge; and the per-execution cost that the README's
# cluster estimate uses. Appends the figures to BENCHMARKS.md (machine and date).
# Parts are the unit a shard owns (part p belongs to shard p mod N), so the default chunk of 10
# gives 42 parts, 21 per shard: an odd part count (21 parts of 20) splits 11/10 and caps two
# shards at 2·21/22 = 1.91x before any overhead, which measures the split, not the sharding.
# Usage: scripts/bench_shards.sh path/to/roboaudit [LIBRARY SCENES SEEDS CHUNK]
set -euo pipefail
cd "$(dirname "$0")/.."
roboaudit=$(realpath "${1:?usage: scripts/bench_shards.sh path/to/roboaudit [LIBRARY SCENES SEEDS CHUNK]}")
library=${2:-10}
scenes=${3:-20}
seeds=${4:-2}
chunk=${5:-10}
args="--task stack --library $library --scenes $scenes --seeds $seeds --chunk $chunk"
executions=$((library * (scenes + 1) * seeds))
parts=$(( (executions + chunk - 1) / chunk ))
work=$(mktemp -d /tmp/roboaudit-bench-shards.XXXXXX)
trap 'rm -rf "$work"' EXIT
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
export RAYON_NUM_THREADS=1

# Overhead: a shard that owns no part (everything but executions: start-up, model compilation,
# the library's recording, the scenes' images and embeddings, manifests), three times; the
# median. One part for the whole run (--chunk = every execution): shard 1/2 owns none of it.
# The same for the smallest collection (2 experiences, 3 scenes) is the fixed start-up part.
no_part() { # LIBRARY SCENES SEEDS OUT
  "$roboaudit" retrieval collect --task stack --library "$1" --scenes "$2" --seeds "$3" \
    --chunk $(($1 * ($2 + 1) * $3)) --shard 1/2 --out "$4" >/dev/null
}
overheads=(); startups=()
for k in 1 2 3; do
  t0=$(now)
  no_part "$library" "$scenes" "$seeds" "$work/o$k"
  overheads+=("$(secs "$t0" "$(now)")")
  t0=$(now)
  no_part 2 3 1 "$work/m$k"
  startups+=("$(secs "$t0" "$(now)")")
done
overhead=$(printf '%s\n' "${overheads[@]}" | sort -n | sed -n 2p)
startup=$(printf '%s\n' "${startups[@]}" | sort -n | sed -n 2p)

# Steal: CPU time the hypervisor gave to other guests (the `steal` column of /proc/stat), in
# clock ticks, over a run; a "free" second core that is stolen cannot give 2x.
steal() { awk '/^cpu / { print $9 }' /proc/stat; }

# One shard and two shards, alternated three times: the median ratio (a VM's cores are not
# always free, so one pair of runs can mislead either way).
ones=(); twos=(); ratios=(); steals=()
for k in 1 2 3; do
  rm -rf "$work/whole" "$work/s0" "$work/s1"
  t0=$(now)
  # shellcheck disable=SC2086
  "$roboaudit" retrieval collect $args --out "$work/whole" >/dev/null
  one=$(secs "$t0" "$(now)")
  s0=$(steal)
  t0=$(now)
  for i in 0 1; do
    # shellcheck disable=SC2086
    "$roboaudit" retrieval collect $args --shard "$i/2" --out "$work/s$i" >/dev/null &
  done
  wait
  two=$(secs "$t0" "$(now)")
  ticks=$(( $(steal) - s0 ))
  ones+=("$one"); twos+=("$two")
  ratios+=("$(awk -v a="$one" -v b="$two" 'BEGIN { printf "%.2f", a / b }')")
  # Stolen share of the two cores during the two-shard run (100 ticks per second per core).
  steals+=("$(awk -v t="$ticks" -v w="$two" 'BEGIN { printf "%.0f", t / (2 * 100 * w) * 100 }')")
done
median() { printf '%s\n' "$@" | sort -n | sed -n 2p; }

# The machine's own ceiling, in the same minutes: a CPU-bound loop that shares nothing (awk, no
# I/O, a few KB of memory), one copy against two copies at once. Its ratio is what two processes
# on these cores can give at best; the shards' ratio is judged against it.
spin() { awk 'BEGIN { s = 0; for (i = 0; i < 4e7; i++) s += i % 7; print s }' >/dev/null; }
spin_ratios=()
for k in 1 2 3; do
  t0=$(now); spin; alone=$(secs "$t0" "$(now)")
  t0=$(now); spin & spin & wait; both=$(secs "$t0" "$(now)")
  spin_ratios+=("$(awk -v a="$alone" -v b="$both" 'BEGIN { printf "%.2f", 2 * a / b }')")
done
spin_ratio=$(median "${spin_ratios[@]}")
ratio=$(median "${ratios[@]}")
one=$(median "${ones[@]}")
two=$(median "${twos[@]}")

t0=$(now)
"$roboaudit" merge "$work/s0" "$work/s1" --out "$work/merged" >/dev/null
merge=$(secs "$t0" "$(now)")
identical=yes
while IFS= read -r f; do
  cmp -s "$work/whole/$f" "$work/merged/$f" || identical=no
done < <(cd "$work/whole" && find . -type f)

per_exec=$(awk -v a="$one" -v o="$overhead" -v n="$executions" 'BEGIN { printf "%.1f", (a - o) / n * 1000 }')
host="$(hostname -s) ($(nproc) cores)"
day=$(date -u +%Y-%m-%d)
echo "one shard ${ones[*]} s, two shards ${twos[*]} s: throughput ratios ${ratios[*]}, median ${ratio}x (target >= 1.8); steal during two shards ${steals[*]} %"
echo "machine ceiling (a CPU-bound loop sharing nothing, 2 copies vs 1): ${spin_ratios[*]}, median ${spin_ratio}x"
echo "per-shard overhead ${overhead} s (runs: ${overheads[*]}), of which fixed start-up ${startup} s (runs: ${startups[*]}); per execution ${per_exec} ms; merge ${merge} s; merged = unsharded: ${identical}"
{
  echo "| $day | $host | retrieval collect, 2 shards as 2 processes vs 1 ($args, $executions executions in $parts parts, 1 thread each) | 2 shards ${two} s (median of 3) | 1 shard ${one} s | throughput ${ratio}x (runs ${ratios[*]}; hypervisor steal ${steals[*]} %; the machine's ceiling, a CPU-bound loop 2 copies vs 1: ${spin_ratio}x, runs ${spin_ratios[*]}) |"
  echo "| $day | $host | per-shard overhead (a shard that owns no part, median of 3; fixed start-up: the same for 2 experiences and 3 scenes) | ${overhead} s, fixed start-up ${startup} s | per execution ${per_exec} ms | merge ${merge} s, byte-identical: ${identical} |"
} >> BENCHMARKS.md
[ "$identical" = yes ]
