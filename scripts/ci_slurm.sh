#!/usr/bin/env bash
# A real Slurm: installs Debian's slurm-wlm and munge, starts a one-node cluster on localhost,
# submits the repository's job array (slurm/submit.sh: 3 shards of a small retrieval collection)
# with the merge as a dependent job, waits (bounded), and checks that the merged run equals the
# unsharded run file by file (cmp). Needs root (CI runs as root). Usage: scripts/ci_slurm.sh ROBOAUDIT
set -euo pipefail
cd "$(dirname "$0")/.."
roboaudit=$(realpath "${1:?usage: scripts/ci_slurm.sh path/to/roboaudit}")
args="--task door --library 4 --scenes 6 --seeds 2 --chunk 5"
start=$SECONDS

if ! dpkg -s slurm-wlm munge >/dev/null 2>&1; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null
fi

work=$(mktemp -d /tmp/roboaudit-slurm.XXXXXX)
chmod 755 "$work"
# Removing the work folder is tidiness, never the check's verdict: a daemon slow to exit must not
# turn a passed check into a failure.
cleanup() {
  scripts/slurm_local_cluster.sh stop "$work/cluster" || true
  rm -rf "$work" 2>/dev/null || { sleep 2; rm -rf "$work" 2>/dev/null || echo "note: could not remove $work" >&2; }
}
trap cleanup EXIT
eval "$(scripts/slurm_local_cluster.sh "$work/cluster")"
echo "cluster up after $((SECONDS - start)) s"

# shellcheck disable=SC2086
"$roboaudit" retrieval collect $args --out "$work/whole" >/dev/null

SHARDS=3 RUN_DIR="$work/run" ROBOAUDIT="$roboaudit" COLLECT_ARGS="$args" slurm/submit.sh \
  --cpus-per-task=1
read -r array merge < "$work/run/slurm-jobs.txt"

state=
for _ in $(seq 300); do
  state=$(scontrol show job "$merge" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
  case "$state" in COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY) break ;; esac
  sleep 1
done
echo "merge job $merge: ${state:-unknown} after $((SECONDS - start)) s"
if [ "$state" != COMPLETED ]; then
  scontrol show job "$array" || true
  tail -n 30 "$work"/run/*.out "$work"/cluster/*.log || true
  exit 1
fi
cat "$work/run/roboaudit-merge-$merge.out"

# Same file list, and every file equal byte for byte.
diff <(cd "$work/whole" && find . -type f | sort) <(cd "$work/run/merged" && find . -type f | sort)
files=0
while IFS= read -r f; do
  cmp "$work/whole/$f" "$work/run/merged/$f"
  files=$((files + 1))
done < <(cd "$work/whole" && find . -type f | sort)
echo "merged run of 3 Slurm array tasks = unsharded run: $files files identical (cmp); $((SECONDS - start)) s"
rm -rf "$work/whole" "$work/run"
