#!/usr/bin/env bash
# The wheel check: builds the `roboaudit` wheel with maturin from the test build's artifacts
# (same target dir and dev profile: only the final link of roboaudit-native when `cargo test
# --workspace` ran before), installs it with its `serve` and `pandas` extras and the bridge's
# test pins into ONE fresh venv (no system MuJoCo, no setup script: the launcher takes libmujoco
# from the mujoco wheel), then from that venv: the policy-server bridge's tests (openpi's own
# client, roboaudit against served policies), `roboaudit demo --scale small` with its report
# opened in headless Chromium, and the Python package's tests (launcher, load, writers, the
# write -> audit -> load round trip, which also loads the demo).
# Usage: scripts/ci_wheel.sh          (PYTHON=python3.11 by default; KEEP=1 keeps the work folder)
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
work=$(mktemp -d /tmp/roboaudit-wheel-ci.XXXXXX)
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$work"' EXIT
# CARGO_INCREMENTAL as in .ci/run: a different value recompiles every workspace crate.
export CARGO_INCREMENTAL=0 PYTHONDONTWRITEBYTECODE=1 MUJOCO_GL=egl PIP_DISABLE_PIP_VERSION_CHECK=1
start=$SECONDS
lap() { echo "   ($(( SECONDS - t0 )) s)"; t0=$SECONDS; }
t0=$SECONDS

echo "== maturin (a tool folder, not the test venv)"
"$python" -m pip install -q --target "$work/tools" maturin==1.16.0
lap

echo "== wheel: maturin build --profile dev (reuses target/ from cargo test --workspace)"
# `cargo test --workspace` builds roboaudit-retrieval with its `synthetic` feature (the report's
# and its own dev-dependencies ask for it); asking for it here too keeps the feature sets equal,
# so that roboaudit-retrieval, roboaudit-report and the CLI are not compiled a second time.
scripts/setup_mujoco.sh >/dev/null
PYTHONPATH="$work/tools" "$work/tools/bin/maturin" build --profile dev --locked \
  --features roboaudit-retrieval/synthetic --out "$work/dist"
wheel=$(ls "$work"/dist/roboaudit-*.whl)
echo "   $(basename "$wheel"), $(du -h "$wheel" | cut -f1)"
lap

echo "== one fresh venv ($("$python" --version)): the wheel with [serve,pandas] + test pins"
"$python" -m venv "$work/venv"
"$work/venv/bin/pip" install -q "${wheel}[serve,pandas]" -r bridges/policy_server/requirements.txt
bin="$work/venv/bin/roboaudit"
"$bin" --version
lap

echo "== policy-server bridge tests against the installed package"
(cd bridges/policy_server && ROBOAUDIT_BIN="$bin" "$work/venv/bin/python" -m pytest -q -p no:cacheprovider \
  --basetemp "$work/pytest-bridge" tests)
lap

echo "== roboaudit demo --scale small from the venv, its report in headless Chromium"
"$bin" demo --scale small --out "$work/demo" >"$work/demo.log" 2>&1 || { cat "$work/demo.log"; exit 1; }
tail -n 5 "$work/demo.log"
scripts/report_screenshot.sh "$work/demo" "$work/demo/screenshot.png"
lap

echo "== Python package tests (launcher, load, writers, round trip) against the installed package"
ROBOAUDIT_DEMO_DIR="$work/demo" "$work/venv/bin/python" -m pytest -q -p no:cacheprovider \
  --basetemp "$work/pytest-python" python/tests
lap
echo "wheel check: ok ($(( SECONDS - start )) s)"
