"""The retrieval run folder: every experience × query cell present, files in roboaudit's
columns and types, replay of an experience in its own base scene reproduces its success."""

from __future__ import annotations

import csv
import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from roboaudit_metaworld.envs import TaskEnv
from roboaudit_metaworld.retrieval import RetrievalConfig, _replay, record_library


def test_files_and_coverage(retrieval_run):
    out, cfg = retrieval_run
    scenes = list(csv.DictReader((out / "scenes.csv").open()))
    assert [s["perturbation"] for s in scenes] == ["appearance"] * 2 + ["layout"] * 2 + ["fresh"]
    exps = list(csv.DictReader((out / "experiences.csv").open()))
    assert len(exps) == cfg.library and [int(e["recorded_at"]) for e in exps] == list(range(cfg.library))
    tab = pq.read_table(out / "executions/part-000000.parquet")
    assert tab.schema.field("seed").type == pa.int64() and tab.schema.field("success").type == pa.bool_()
    rows = tab.to_pylist()
    cells = {(r["experience_id"], r["scene_id"]) for r in rows}
    for e in exps:
        for s in scenes:
            assert (e["experience_id"], s["scene_id"]) in cells
        assert (e["experience_id"], e["base_scene_id"]) in cells
    assert len(rows) == cfg.library * (cfg.scenes + 1) * cfg.seeds
    assert len({(r["experience_id"], r["scene_id"], r["seed"]) for r in rows}) == len(rows)
    emb = pq.read_table(out / "embeddings.parquet").to_pylist()
    dims = {r["representation"]: len(r["vector"]) for r in emb}
    assert dims == {"pixels32": 32 * 32 * 3, "structural": 5}
    assert len(emb) == 2 * (cfg.library + cfg.scenes)
    px = np.array([r["vector"] for r in emb if r["representation"] == "pixels32"])
    assert px.min() >= 0.0 and px.max() <= 1.0
    m = json.loads((out / "collect.json").read_text())
    assert m["total_executions"] == len(rows)


def test_appearance_queries_share_their_base_layout(retrieval_run):
    out, _ = retrieval_run
    m = json.loads((out / "collect.json").read_text())
    bases = {e["base_scene_id"]: e["base_placement"] for e in m["experiences"]}
    for s in m["scenes"]:
        if s["perturbation"] == "appearance":
            assert s["placement"] == bases[s["base_scene_id"]] and s["appearance_draw"] > 0
        if s["perturbation"] == "layout":
            assert s["placement"] != bases[s["base_scene_id"]] and s["appearance_draw"] == 0


def test_noiseless_replay_in_own_base_scene_succeeds():
    cfg = RetrievalConfig(library=2, exec_noise=0.0, seed=11)
    env = TaskEnv(cfg.task, cfg.horizon + cfg.replay_margin, 16)
    lib, _ = record_library(cfg, env, log=lambda *_: None)
    for e in lib:
        assert _replay((cfg, e, e.base, 0))


def test_same_seed_same_bytes(retrieval_run, tmp_path):
    from roboaudit_metaworld.retrieval import collect_retrieval

    from conftest import TINY_RETRIEVAL

    out, _ = retrieval_run
    again = tmp_path / "again"
    collect_retrieval(RetrievalConfig(**TINY_RETRIEVAL), again, log=lambda *_: None)
    for rel in ("executions/part-000000.parquet", "embeddings.parquet", "scenes.csv", "collect.json"):
        assert (out / rel).read_bytes() == (again / rel).read_bytes(), rel
