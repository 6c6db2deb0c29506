#!/usr/bin/env bash
# roboaudit FQE beside d3rlpy's FQE on a Meta-World bridge collection (benchmark, not CI).
# d3rlpy pulls a CUDA build of torch (~3 GB) and pins gymnasium 1.0.0 (conflicts with metaworld):
# it gets its own virtual environment (default /tmp/d3rlpy-venv, reused when present).
# Usage: scripts/d3rlpy_side_by_side.sh RUN_DIR OUT_DIR [--steps N] [--seed S]
set -euo pipefail
cd "$(dirname "$0")/.."
run=$1 out=$2; shift 2
venv=${D3RLPY_VENV:-/tmp/d3rlpy-venv}
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import d3rlpy" 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q d3rlpy==2.8.1 pyarrow scipy
fi
"$venv/bin/python" scripts/d3rlpy_side_by_side.py --run "$run" --out "$out" \
  --roboaudit "${ROBOAUDIT:-target/debug/roboaudit}" "$@"
