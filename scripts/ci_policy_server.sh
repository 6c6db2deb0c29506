#!/usr/bin/env bash
# The policy-server bridge check (bridges/policy_server): a fresh virtual environment with the
# pinned dependencies from PyPI (openpi-client 0.1.2 pins numpy<2, hence its own venv), the
# bridge's wire tests against openpi's own client, then the roboaudit binary against served
# policies: fqe actions (exact actions, action seeds, plain server, NaN, wrong width, server
# exception, silence, a server dying mid-run and the resumed rerun) and the served memory audit.
# Usage: scripts/ci_policy_server.sh [path/to/roboaudit]   (default target/debug/roboaudit)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-target/debug/roboaudit}")
[ -x "$bin" ] || { echo "no roboaudit binary at $bin (build it first)" >&2; exit 1; }
python=${PYTHON:-python3}
work=$(mktemp -d /tmp/roboaudit-ps-ci.XXXXXX)
trap 'rm -rf "$work"' EXIT
export PYTHONDONTWRITEBYTECODE=1 MUJOCO_GL=egl

echo "== policy-server venv ($("$python" --version)) with pinned dependencies"
"$python" -m venv "$work/venv"
(cd bridges/policy_server && "$work/venv/bin/pip" install -q --disable-pip-version-check -r requirements.txt)

echo "== bridge tests and roboaudit against served policies"
(cd bridges/policy_server && ROBOAUDIT_BIN="$bin" "$work/venv/bin/python" -m pytest -q -p no:cacheprovider \
  --basetemp "$work/pytest" tests)
echo "policy server bridge: ok"
