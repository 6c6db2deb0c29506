#!/usr/bin/env bash
# Runs `roboaudit data inspect` and `roboaudit fqe fit` on the five full real LeRobot datasets in
# ../shared/datasets (or $ROBOAUDIT_SHARED_DATASETS) and prints wall times and estimates. Not part
# of CI (minutes on 2 cores); the CI tests run on the trimmed copies in
# crates/roboaudit-cli/tests/fixtures/real.
#
# Labels: pusht from its peak coverage reward (`data labels --rule max --threshold 0.9`); the other
# four carry no outcome, so they get synthetic labels (episode i succeeds when i is even) that test
# the pipeline, not the robots. Target: the behaviour policy (the datasets' own actions, on-policy).
#
# Usage: scripts/real_datasets_fqe.sh [ROBOAUDIT_BINARY] [OUT_DIR] [extra fqe fit options...]
# e.g.   scripts/real_datasets_fqe.sh target/debug/roboaudit /tmp/real --steps 2000 --seeds 0
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BIN="${1:-$ROOT/target/debug/roboaudit}"
OUT="${2:-/tmp/roboaudit-real-datasets}"
shift $(( $# > 2 ? 2 : $# ))
DATA="${ROBOAUDIT_SHARED_DATASETS:-$ROOT/../shared/datasets}"
[ -f "$DATA/README.md" ] || { echo "no datasets in $DATA" >&2; exit 1; }
mkdir -p "$OUT"

now() { date +%s.%N; }
for name in pusht_v30 so101_record_test piper_act_v30 g1_inspire_v21 lingzu_open50_v30; do
  dir="$DATA/$name"
  labels="$OUT/$name-labels.csv"
  extra=()
  if [ "$name" = lingzu_open50_v30 ]; then
    extra=(--features state:state --state-feature none --action-feature actions)
  fi
  t0=$(now)
  "$BIN" data inspect "$dir" > "$OUT/$name-inspect.txt"
  t1=$(now)
  if [ "$name" = pusht_v30 ]; then
    "$BIN" data labels "$dir" --rule max --threshold 0.9 --out "$labels" > /dev/null
  else
    n=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['total_episodes'])" "$dir/meta/info.json")
    { echo "episode_index,success"; for ((i = 0; i < n; i++)); do echo "$i,$(( (i + 1) % 2 ))"; done; } > "$labels"
  fi
  t2=$(now)
  "$BIN" fqe fit --dataset "$dir" --labels "$labels" --out "$OUT/$name-fit" "${extra[@]}" "$@" \
    > "$OUT/$name-fit.txt" 2> "$OUT/$name-fit.err"
  t3=$(now)
  python3 - "$name" "$OUT/$name-fit/fqe.json" "$t0" "$t1" "$t2" "$t3" "$OUT/$name-inspect.txt" <<'EOF'
import json, sys
name, report, t0, t1, t2, t3, inspect = sys.argv[1:]
r = json.load(open(report))
cell = r["policies"][0]["tasks"][0]
neural = cell.get("neural") or {}
problems = sum(1 for line in open(inspect) if line.startswith("  - "))
load = r["inputs"]["load"]
print(f"{name:20s} inspect {float(t1)-float(t0):6.2f}s ({problems} problems)  fit {float(t3)-float(t2):7.1f}s  "
      f"episodes {load['episodes']} frames {load['frames']} successes {load['successes']}  "
      f"features {r['inputs']['parts']}  naive {cell['naive']:.3f}  linear {cell['linear']:.3f}  "
      f"neural {neural.get('mean', float('nan')):.3f}±{neural.get('sd', float('nan')) or 0:.3f}  "
      f"coverage {cell['coverage']['mean_distance']:.2f}")
EOF
done
