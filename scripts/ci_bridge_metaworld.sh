#!/usr/bin/env bash
# The Meta-World bridge check (bridges/metaworld): a fresh virtual environment with the pinned
# dependencies from PyPI, the bridge's tests, a small FQE and retrieval collection, then the built
# roboaudit binary on both outputs (fqe fit + evaluate, retrieval audit). Fails on any error.
# Needs Debian's EGL libraries (libegl1 libegl-mesa0 libgl1-mesa-dri) for headless rendering.
# Usage: scripts/ci_bridge_metaworld.sh [path/to/roboaudit]   (default target/debug/roboaudit)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
bin=$(realpath "${1:-target/debug/roboaudit}")
[ -x "$bin" ] || { echo "no roboaudit binary at $bin (build it first)" >&2; exit 1; }
python=${PYTHON:-python3}
work=$(mktemp -d /tmp/roboaudit-mw-ci.XXXXXX)
trap 'rm -rf "$work"' EXIT
export MUJOCO_GL=egl PYTHONDONTWRITEBYTECODE=1

echo "== bridge venv ($("$python" --version)) with pinned dependencies"
"$python" -m venv "$work/venv"
"$work/venv/bin/pip" install -q --disable-pip-version-check -r bridges/metaworld/requirements.txt
py="$work/venv/bin/python"

echo "== bridge tests"
(cd bridges/metaworld && "$py" -m pytest -q -p no:cacheprovider tests)

echo "== small collections"
(cd bridges/metaworld && "$py" -m roboaudit_metaworld fqe --small --out "$work/fqe")
(cd bridges/metaworld && "$py" -m roboaudit_metaworld retrieval --small --out "$work/retrieval")

echo "== roboaudit on the bridge's outputs"
"$bin" data inspect "$work/fqe/dataset" | tee "$work/inspect.txt"
grep -q "^problems: none" "$work/inspect.txt" || { echo "roboaudit data inspect found problems" >&2; exit 1; }
RAYON_NUM_THREADS=1 "$bin" fqe fit --run "$work/fqe" --out "$work/fqe-fit" \
  --steps 100 --batch-size 32 --seeds 0 --components 16
"$bin" fqe evaluate --run "$work/fqe" --out "$work/fqe-fit"
"$bin" retrieval audit --run "$work/retrieval" --structural structural --out "$work/audit" \
  --resamples 200 --permutations 200 --subsets 20
"$py" - "$work" <<'PY'
import json, sys
w = sys.argv[1]
fit = json.load(open(f"{w}/fqe-fit/fqe.json"))
est = {m["estimator"] for m in fit["metrics"]}
assert {"neural", "linear", "naive"} <= est, est
audit = json.load(open(f"{w}/audit/audit.json"))
assert audit, "empty audit.json"
print("bridge outputs accepted by roboaudit: fqe estimators", sorted(est))
PY
echo "meta-world bridge: ok"
