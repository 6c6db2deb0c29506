"""Reference values for the LeRobot reader tests (crates/roboaudit-data/tests/lerobot_real.rs).

Reads the five real datasets in ../shared/datasets with pyarrow only (no LeRobot code) and writes
crates/roboaudit-data/tests/lerobot_reference.json.

Pinned: python 3, pyarrow 19.0.1.
Run from the repository root: python3 scripts/lerobot_reference.py
"""

import glob
import json
import os

import pyarrow.parquet as pq

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "datasets")
OUT = os.path.join(os.path.dirname(__file__), "..", "crates", "roboaudit-data", "tests", "lerobot_reference.json")
NAMES = ["so101_record_test", "pusht_v30", "piper_act_v30", "g1_inspire_v21", "lingzu_open50_v30"]


def data_rows(d):
    files = sorted(glob.glob(os.path.join(d, "data", "**", "*.parquet"), recursive=True))
    rows = []
    for f in files:
        rows.extend(pq.read_table(f).to_pylist())
    return rows


def main():
    out = {}
    for name in NAMES:
        d = os.path.join(ROOT, name)
        info = json.load(open(os.path.join(d, "meta", "info.json")))
        rows = data_rows(d)
        action_key = "actions" if "actions" in info["features"] else "action"
        by_ep = {}
        for r in rows:
            by_ep.setdefault(r["episode_index"], []).append(r)
        eps = sorted(by_ep)
        probe = eps[len(eps) // 2]
        ep_rows = sorted(by_ep[probe], key=lambda r: r["frame_index"])
        entry = {
            "version": info["codebase_version"],
            "robot_type": info["robot_type"],
            "fps": info["fps"],
            "episodes": len(eps),
            "frames": len(rows),
            "min_length": min(len(v) for v in by_ep.values()),
            "max_length": max(len(v) for v in by_ep.values()),
            "action_key": action_key,
            "action_dim": len(rows[0][action_key]),
            "probe_episode": probe,
            "probe_length": len(ep_rows),
            "probe_first_index": ep_rows[0]["index"],
            "probe_first_action": ep_rows[0][action_key],
            "probe_last_action": ep_rows[-1][action_key],
            "video_features": sorted(k for k, v in info["features"].items() if v["dtype"] == "video"),
        }
        if "next.success" in info["features"]:
            entry["success_episodes"] = sum(any(r["next.success"] for r in v) for v in by_ep.values())
            entry["done_frames"] = sum(bool(r["next.done"]) for r in rows)
            rewards = [r["next.reward"] for r in rows]
            entry["reward_min"] = min(rewards)
            entry["reward_max"] = max(rewards)
            entry["reward_mean"] = sum(rewards) / len(rewards)
            entry["reward_nonzero"] = sum(1 for x in rewards if x != 0)
            entry["reward_max_last"] = max(
                sorted(v, key=lambda r: r["frame_index"])[-1]["next.reward"] for v in by_ep.values()
            )
        out[name] = entry
    with open(OUT, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
