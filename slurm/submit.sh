#!/bin/bash
# Submits a sharded roboaudit collection: a job array of $SHARDS shards, then the merge as a job
# that starts only when every array task has succeeded (--dependency=afterok).
#
#   SHARDS=20 RUN_DIR=$PWD/runs/stack ROBOAUDIT=$PWD/target/debug/roboaudit \
#     COLLECT_ARGS="--task stack --library 50 --scenes 40 --seeds 5 --chunk 50" \
#     slurm/submit.sh [extra sbatch options, e.g. --partition=cpu --account=mylab]
#
# Progress of a running array: roboaudit status "$RUN_DIR"/shard-*
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${SHARDS:?set SHARDS=N, the number of shards}"
: "${RUN_DIR:?set RUN_DIR, the folder for shard-I/ and merged/}"
mkdir -p "$RUN_DIR"
# The jobs run in $RUN_DIR: make the paths absolute.
RUN_DIR=$(realpath "$RUN_DIR")
case "${ROBOAUDIT:-roboaudit}" in */*) ROBOAUDIT=$(realpath "$ROBOAUDIT") ;; esac
export SHARDS RUN_DIR ${ROBOAUDIT:+ROBOAUDIT}
array=$(sbatch --parsable --array="0-$((SHARDS - 1))" --chdir="$RUN_DIR" --export=ALL "$@" \
  "$here/collect_array.sbatch")
array=${array%%;*}
merge=$(sbatch --parsable --dependency="afterok:$array" --kill-on-invalid-dep=yes \
  --chdir="$RUN_DIR" --export=ALL "$@" "$here/merge.sbatch")
merge=${merge%%;*}
echo "collect array job $array (shards 0-$((SHARDS - 1))), merge job $merge"
echo "$array $merge" > "$RUN_DIR/slurm-jobs.txt"
