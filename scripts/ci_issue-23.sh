#!/usr/bin/env bash
# Video decoding on the real LeRobot recordings beside the repository (g1 AV1 episodes, lingzu
# MPEG-4 file): the #[ignore]d tests that read ROBOAUDIT_SHARED_DATASETS. Skipped, loudly, when
# the folder is absent (a user's clone); CI has it.
set -euo pipefail
cd "$(dirname "$0")/.."
export ROBOAUDIT_SHARED_DATASETS="${ROBOAUDIT_SHARED_DATASETS:-$(cd .. && pwd)/shared/datasets}"
if [ ! -d "$ROBOAUDIT_SHARED_DATASETS" ]; then
  echo "no shared datasets at $ROBOAUDIT_SHARED_DATASETS: video checks on real files skipped" >&2
  exit 0
fi
cargo test --locked -p roboaudit-video --test shared_datasets -- --ignored
cargo test --locked -p roboaudit-data --test lerobot_video -- --ignored
