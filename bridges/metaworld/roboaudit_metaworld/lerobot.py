"""LeRobot v3.0 writer (pyarrow), the same layout as roboaudit's testbed writer
(`roboaudit_testbed::write_lerobot_v3`): `meta/info.json`, `meta/stats.json`,
`meta/tasks.parquet`, `meta/episodes/chunk-000/file-000.parquet` and
`data/chunk-000/file-000.parquet`, images stored as PNG bytes in a struct column `{bytes, path}`
(Hugging Face `datasets.Image`)."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from PIL import Image

#: The image feature (PNG in Parquet).
IMAGE_KEY = "observation.images.scene"
#: Meta-World's 39-value observation: hand xyz, gripper opening, object pos + quat (padded to
#: 14), the same 18 values of the previous frame, goal xyz.
STATE_KEY = "observation.state"
#: Actions: dx, dy, dz (mocap motion in cm per step), gripper effort; all in [-1, 1].
ACTION_KEY = "action"
#: Terminal success label (true on the frame whose action reached success; that frame ends the
#: episode).
SUCCESS_KEY = "next.success"

STATE_NAMES = (
    ["hand_x", "hand_y", "hand_z", "gripper"]
    + [f"obj_{i}" for i in range(14)]
    + ["prev_hand_x", "prev_hand_y", "prev_hand_z", "prev_gripper"]
    + [f"prev_obj_{i}" for i in range(14)]
    + ["goal_x", "goal_y", "goal_z"]
)
ACTION_NAMES = ["dx", "dy", "dz", "gripper"]


@dataclass
class Episode:
    """One recorded episode: per frame the observation before the action, the action, the PNG of
    that observation, and the success flag after the action."""

    task: str
    seed: int
    scene_id: str
    states: list[np.ndarray] = field(default_factory=list)
    actions: list[np.ndarray] = field(default_factory=list)
    pngs: list[bytes] = field(default_factory=list)
    successes: list[bool] = field(default_factory=list)

    @property
    def success(self) -> bool:
        """Whether any frame reached success (the episode ends at the first one)."""
        return any(self.successes)

    def __len__(self) -> int:
        return len(self.actions)


def encode_png(rgb: np.ndarray) -> bytes:
    """PNG bytes of an RGB uint8 image (fixed compression level: same pixels → same bytes)."""
    buf = io.BytesIO()
    Image.fromarray(rgb, mode="RGB").save(buf, format="PNG", compress_level=6)
    return buf.getvalue()


def _fixed_list(rows: np.ndarray) -> pa.Array:
    rows = np.asarray(rows, dtype=np.float32)
    flat = pa.array(rows.reshape(-1), type=pa.float32())
    return pa.FixedSizeListArray.from_arrays(flat, rows.shape[1])


def _image_column(pngs: list[bytes]) -> pa.Array:
    return pa.StructArray.from_arrays(
        [pa.array(pngs, type=pa.binary()), pa.array([None] * len(pngs), type=pa.string())],
        names=["bytes", "path"],
    )


def _stats(rows: np.ndarray) -> dict:
    x = np.asarray(rows, dtype=np.float64)
    return {
        "mean": x.mean(0).tolist(),
        "std": x.std(0).tolist(),
        "min": x.min(0).tolist(),
        "max": x.max(0).tolist(),
        "count": [int(x.shape[0])],
    }


def _write(table: pa.Table, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)


def write_lerobot_v3(
    root: Path, episodes: list[Episode], fps: float, robot_type: str = "sawyer"
) -> dict:
    """Writes `episodes` under `root`; returns `{"episodes", "frames", "tasks"}`.

    Raises `ValueError` when there are no frames."""
    frames = [(e, i) for e, ep in enumerate(episodes) for i in range(len(ep))]
    if not frames:
        raise ValueError("no frames to write")
    tasks: list[str] = []
    for ep in episodes:
        if ep.task not in tasks:
            tasks.append(ep.task)
    task_index = {t: k for k, t in enumerate(tasks)}
    states = np.stack([episodes[e].states[i] for e, i in frames]).astype(np.float32)
    actions = np.stack([episodes[e].actions[i] for e, i in frames]).astype(np.float32)
    success = [bool(episodes[e].successes[i]) for e, i in frames]
    done = [i == len(episodes[e]) - 1 for e, i in frames]
    n = len(frames)
    data = pa.table(
        {
            IMAGE_KEY: _image_column([episodes[e].pngs[i] for e, i in frames]),
            STATE_KEY: _fixed_list(states),
            ACTION_KEY: _fixed_list(actions),
            "next.reward": pa.array([1.0 if s else 0.0 for s in success], pa.float32()),
            SUCCESS_KEY: pa.array(success, pa.bool_()),
            "next.done": pa.array(done, pa.bool_()),
            "timestamp": pa.array([i / fps for _, i in frames], pa.float32()),
            "frame_index": pa.array([i for _, i in frames], pa.int64()),
            "episode_index": pa.array([e for e, _ in frames], pa.int64()),
            "index": pa.array(range(n), pa.int64()),
            "task_index": pa.array([task_index[episodes[e].task] for e, _ in frames], pa.int64()),
        }
    )
    _write(data, root / "data/chunk-000/file-000.parquet")

    # pandas reads `task` back as the index (LeRobot looks tasks up by it).
    pandas_meta = {
        "index_columns": ["task"],
        "column_indexes": [
            {"name": None, "field_name": None, "pandas_type": "unicode",
             "numpy_type": "object", "metadata": {"encoding": "UTF-8"}}
        ],
        "columns": [
            {"name": "task_index", "field_name": "task_index", "pandas_type": "int64",
             "numpy_type": "int64", "metadata": None},
            {"name": "task", "field_name": "task", "pandas_type": "unicode",
             "numpy_type": "object", "metadata": None},
        ],
        "creator": {"library": "pyarrow", "version": pa.__version__},
        "pandas_version": "2.2.3",
    }
    tasks_table = pa.table(
        {"task_index": pa.array(range(len(tasks)), pa.int64()), "task": pa.array(tasks, pa.string())}
    ).replace_schema_metadata({"pandas": json.dumps(pandas_meta)})
    _write(tasks_table, root / "meta/tasks.parquet")

    lengths = [len(ep) for ep in episodes]
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    zeros = pa.array([0] * len(episodes), pa.int64())
    meta = pa.table(
        {
            "episode_index": pa.array(range(len(episodes)), pa.int64()),
            "tasks": pa.array([[ep.task] for ep in episodes], pa.list_(pa.string())),
            "length": pa.array(lengths, pa.int64()),
            "data/chunk_index": zeros,
            "data/file_index": zeros,
            "dataset_from_index": pa.array(starts.tolist(), pa.int64()),
            "dataset_to_index": pa.array((starts + np.array(lengths)).tolist(), pa.int64()),
            "meta/episodes/chunk_index": zeros,
            "meta/episodes/file_index": zeros,
            "success": pa.array([ep.success for ep in episodes], pa.bool_()),
            "seed": pa.array([ep.seed for ep in episodes], pa.int64()),
            "scene_id": pa.array([ep.scene_id for ep in episodes], pa.string()),
        }
    )
    _write(meta, root / "meta/episodes/chunk-000/file-000.parquet")

    first = Image.open(io.BytesIO(episodes[frames[0][0]].pngs[frames[0][1]]))
    w, h = first.size
    scalar = lambda dtype: {"dtype": dtype, "shape": [1], "names": None}  # noqa: E731
    features = {
        IMAGE_KEY: {"dtype": "image", "shape": [h, w, 3], "names": ["height", "width", "channel"]},
        STATE_KEY: {"dtype": "float32", "shape": [states.shape[1]], "names": STATE_NAMES},
        ACTION_KEY: {"dtype": "float32", "shape": [actions.shape[1]], "names": ACTION_NAMES},
        "next.reward": scalar("float32"),
        SUCCESS_KEY: scalar("bool"),
        "next.done": scalar("bool"),
        "timestamp": scalar("float32"),
    }
    for k in ("frame_index", "episode_index", "index", "task_index"):
        features[k] = scalar("int64")
    info = {
        "codebase_version": "v3.0",
        "robot_type": robot_type,
        "total_episodes": len(episodes),
        "total_frames": n,
        "total_tasks": len(tasks),
        "chunks_size": 1000,
        "data_files_size_in_mb": 100,
        "video_files_size_in_mb": 200,
        "fps": fps,
        "splits": {"train": f"0:{len(episodes)}"},
        "data_path": "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet",
        "video_path": None,
        "features": features,
    }
    (root / "meta").mkdir(parents=True, exist_ok=True)
    (root / "meta/info.json").write_text(json.dumps(info, indent=2))
    stats = {STATE_KEY: _stats(states), ACTION_KEY: _stats(actions)}
    (root / "meta/stats.json").write_text(json.dumps(stats, indent=2))
    return {"episodes": len(episodes), "frames": n, "tasks": len(tasks)}
