"""The FQE collection: LeRobot v3.0 layout and types, policy-actions files, ground truth,
determinism."""

from __future__ import annotations

import io
import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from PIL import Image

from roboaudit_metaworld.behaviour import mixture_counts, standard_targets
from roboaudit_metaworld.fqe import SCHEMA, FqeConfig, collect_fqe, plan_dataset

from conftest import TINY_FQE


def test_data_file_schema_and_episode_bookkeeping(fqe_run):
    out, cfg = fqe_run
    data = pq.read_table(out / "dataset/data/chunk-000/file-000.parquet")
    s = data.schema
    assert s.field("observation.state").type == pa.list_(pa.float32(), 39)
    assert s.field("action").type == pa.list_(pa.float32(), 4)
    assert s.field("observation.images.scene").type == pa.struct(
        [("bytes", pa.binary()), ("path", pa.string())]
    )
    for c in ("frame_index", "episode_index", "index", "task_index"):
        assert s.field(c).type == pa.int64()
    n = data.num_rows
    assert data.column("index").to_pylist() == list(range(n))
    meta = pq.read_table(out / "dataset/meta/episodes/chunk-000/file-000.parquet").to_pylist()
    assert len(meta) == cfg.episodes
    ep = data.column("episode_index").to_pylist()
    succ = data.column("next.success").to_pylist()
    done = data.column("next.done").to_pylist()
    for m in meta:
        rows = list(range(m["dataset_from_index"], m["dataset_to_index"]))
        assert len(rows) == m["length"] and all(ep[r] == m["episode_index"] for r in rows)
        # "ever succeeded": success ends the episode, so only its last frame may hold it.
        assert not any(succ[r] for r in rows[:-1])
        assert succ[rows[-1]] == m["success"]
        assert done[rows[-1]] and not any(done[r] for r in rows[:-1])
        assert m["success"] or m["length"] == cfg.horizon
    assert sum(m["length"] for m in meta) == n
    png = data.column("observation.images.scene")[0].as_py()["bytes"]
    img = Image.open(io.BytesIO(png))
    assert img.size == (cfg.image_size, cfg.image_size) and img.mode == "RGB"


def test_meta_files(fqe_run):
    out, cfg = fqe_run
    info = json.loads((out / "dataset/meta/info.json").read_text())
    assert info["codebase_version"] == "v3.0"
    assert info["fps"] == 80.0  # Meta-World: 5 substeps of 2.5 ms per action
    assert info["features"]["observation.images.scene"]["shape"] == [cfg.image_size, cfg.image_size, 3]
    tasks = pq.read_table(out / "dataset/meta/tasks.parquet").to_pylist()
    assert [t["task"] for t in tasks] == [
        "push the puck to the goal",
        "pick up the puck and place it at the goal",
    ]
    assert json.loads(pq.read_schema(out / "dataset/meta/tasks.parquet").metadata[b"pandas"])[
        "index_columns"
    ] == ["task"]


def test_policy_actions_files_align_with_frames(fqe_run):
    out, cfg = fqe_run
    data = pq.read_table(out / "dataset/data/chunk-000/file-000.parquet")
    actions = np.array(data.column("action").to_pylist(), dtype=np.float32)
    n = data.num_rows
    plan = plan_dataset(cfg)
    ep = data.column("episode_index").to_numpy()
    expert_rows = np.isin(ep, [p.index for p in plan if p.behaviour == "expert"])
    for t in standard_targets(cfg.sigmas):
        tab = pq.read_table(out / f"policies/{t.name}.parquet")
        m = cfg.samples if t.stochastic else 1
        assert tab.num_rows == n * m
        idx = tab.column("index").to_numpy()
        smp = tab.column("sample").to_numpy()
        assert (idx == np.repeat(np.arange(n), m)).all() and (smp == np.tile(np.arange(m), n)).all()
        acts = np.array(tab.column("action").to_pylist(), dtype=np.float32).reshape(n, m, 4)
        assert np.all(np.abs(acts) <= 1.0)
        if not t.stochastic:
            # The clean expert's file equals what the "expert" behaviour did at its frames.
            assert expert_rows.any()
            np.testing.assert_array_equal(acts[expert_rows, 0], actions[expert_rows])
        else:
            assert acts[:, 0].std() > 0 and not np.array_equal(acts[:, 0], acts[:, 1])


def test_ground_truth_schema(fqe_run):
    out, cfg = fqe_run
    gt = json.loads((out / "ground_truth.json").read_text())
    assert gt["schema"] == SCHEMA and gt["gamma"] == cfg.gamma
    assert [p["policy"] for p in gt["policies"]] == [t.name for t in standard_targets(cfg.sigmas)]
    for p in gt["policies"]:
        assert (out / p["actions_file"]).is_file()
        assert [t["task_index"] for t in p["tasks"]] == [0, 1]
        for t in p["tasks"]:
            assert 0.0 <= t["v_pi"] <= t["success_rate"] <= 1.0 and t["n_episodes"] == cfg.rollouts
            # V = mean γ^(T−1)·success: with every success at T ≤ mean_steps, V ≥ SR·γ^(H−1).
            assert t["v_pi"] >= t["success_rate"] * cfg.gamma ** (cfg.horizon - 1) - 1e-12
    assert sum(b["episodes"] for b in gt["behaviour"]) == cfg.episodes


def test_same_seed_same_bytes_whatever_the_workers(fqe_run, tmp_path):
    out, _ = fqe_run
    again = tmp_path / "again"
    collect_fqe(FqeConfig(**TINY_FQE, workers=2), again, log=lambda *_: None)
    for rel in (
        "dataset/data/chunk-000/file-000.parquet",
        "dataset/meta/episodes/chunk-000/file-000.parquet",
        "dataset/meta/info.json",
        "policies/expert_sigma050.parquet",
        "ground_truth.json",
    ):
        assert (out / rel).read_bytes() == (again / rel).read_bytes(), rel


def test_mixture_counts_sum_and_round():
    c = dict(mixture_counts(10))
    assert sum(c.values()) == 10
    # 0.15·10 = 1.5 → the four 15 % kinds take the largest remainders first.
    assert c["expert"] == 2 and c["random_walk"] == 1
    assert sum(dict(mixture_counts(7)).values()) == 7
