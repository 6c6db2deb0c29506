"""Retrieval-audit run folder on Meta-World (SPEC.md §1, seed 000): an experience library of
expert demonstrations recorded at different object positions, reused by replay with
retargeting in every query scene, in the layout `roboaudit retrieval audit --run DIR` reads:
`collect.json`, `scenes.csv`, `experiences.csv`, `embeddings.parquet`, `executions/part-*.parquet`.

- Library: candidate `c` is the scripted expert (action noise σ_c ~ U(0, `demo_noise`)) recorded
  in its own base scene `b{c:02}` (a seeded object and goal placement, canonical appearance);
  recordings that fail there are rejected and counted. Library order = acceptance order.
- Replay with retargeting: the recorded commanded end-effector (mocap) path is shifted in x, y by
  the object's displacement between the experience's base scene and the query scene and tracked
  open loop (action = path step / action scale), gripper commands as recorded, for the recorded
  length plus `replay_margin` steps; success = Meta-World's `info["success"]` at any step
  ("ever succeeded"). Execution seed `k` adds N(0, `exec_noise`²) to the xyz actions from a
  stream keyed by (scene, k): every experience meets the same noise in a scene.
- Query scenes (`q00`, …): 40 % appearance-perturbed (base layouts `b00`–`b09`, new table,
  floor, puck colours and light), 40 % layout-perturbed (a base layout with object and goal each
  moved by up to 2 / 4 / 8 cm at levels 1 / 2 / 3), the rest fresh (new placement and appearance;
  `layout_level` 3). Executions in an experience's own base scene are logged too (recognised
  through `experiences.csv`'s `base_scene_id`).
- Embeddings: `pixels32` (the first corner-camera frame, 64×64 average-pooled to 32×32×3 in
  [0, 1]; an experience's is its recording's first frame) and `structural` (object x, y and goal
  x, y, z of the initial state).
"""

from __future__ import annotations

import csv
import json
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from .envs import MIN_OBJECT_GOAL_XY, TaskEnv, task_spec
from .parallel import ordered_map, task_env
from .rng import generator

MANIFEST_SCHEMA = "roboaudit.metaworld.retrieval.v1"
#: Appearance-perturbed queries are drawn on at most this many base layouts.
QUERY_BASES = 10
#: Largest object and goal displacement of a layout-perturbed query, by level (m).
LAYOUT_SHIFT = {1: 0.02, 2: 0.04, 3: 0.08}
#: Rendered side before 2×2 pooling.
RENDER_SIDE = 64


@dataclass
class RetrievalConfig:
    """What `collect_retrieval` collects."""

    task: str = "push"
    #: Pool size K: accepted experiences.
    library: int = 12
    #: Query scenes.
    scenes: int = 24
    #: Execution seeds per (experience, scene) cell.
    seeds: int = 2
    #: Master seed.
    seed: int = 0
    #: Most actions of a demonstration.
    horizon: int = 150
    #: Largest demonstrator action-noise σ.
    demo_noise: float = 0.2
    #: Execution noise σ on replayed xyz actions.
    exec_noise: float = 0.1
    #: Replay steps beyond the recorded length.
    replay_margin: int = 30
    #: Worker processes.
    workers: int = 1
    #: Executions per part file.
    chunk: int = 500

    def check(self) -> RetrievalConfig:
        """Raises `ValueError` for a setting out of range; returns self."""
        task_spec(self.task)
        if not 1 <= self.library <= 500:
            raise ValueError(f"--library {self.library} not in 1..500")
        if not 3 <= self.scenes <= 400:
            raise ValueError(f"--scenes {self.scenes} not in 3..400")
        if not 1 <= self.seeds <= 100:
            raise ValueError(f"--seeds {self.seeds} not in 1..100")
        if self.horizon < 1 or self.chunk < 1:
            raise ValueError("--horizon and chunk must be at least 1")
        return self

    def split(self) -> tuple[int, int, int]:
        """Appearance, layout and fresh query counts (40 % / 40 % / rest)."""
        a = round(0.4 * self.scenes)
        l_ = round(0.4 * self.scenes)
        return a, l_, self.scenes - a - l_


@dataclass
class Scene:
    """A scene: placement (object xyz, goal xyz), appearance draw and audit attributes."""

    scene_id: str
    placement: list[float]
    perturbation: str  # base | appearance | layout | fresh
    layout_level: int
    appearance_draw: int
    base_scene_id: str = ""


@dataclass
class Experience:
    """An accepted demonstration."""

    experience_id: str
    base: Scene
    candidate: int
    demo_sigma: float
    #: Commanded end-effector path after each action (m), steps × 3.
    path: list[list[float]] = field(default_factory=list)
    #: Gripper command of each action.
    grip: list[float] = field(default_factory=list)


def draw_placement(env: TaskEnv, g: np.random.Generator) -> np.ndarray:
    """A placement uniform in the task's reset box with object and goal far enough apart."""
    low, high = env.reset_space
    while True:
        p = g.uniform(low, high)
        if np.linalg.norm(p[:2] - p[3:5]) >= MIN_OBJECT_GOAL_XY:
            return p


def _shifted(env: TaskEnv, base: np.ndarray, level: int, g: np.random.Generator) -> np.ndarray:
    low, high = env.reset_space
    r = LAYOUT_SHIFT[level]
    while True:
        p = base.copy()
        for i in (0, 3):
            ang, rad = g.uniform(0, 2 * np.pi), r * np.sqrt(g.uniform(0.25, 1.0))
            p[i : i + 2] += rad * np.array([np.cos(ang), np.sin(ang)])
        p = np.clip(p, low, high)
        if np.linalg.norm(p[:2] - p[3:5]) >= MIN_OBJECT_GOAL_XY:
            return p


def record_library(cfg: RetrievalConfig, env: TaskEnv, log=print) -> tuple[list[Experience], int]:
    """Records candidates until `library` are accepted; returns them and the attempts made.
    Raises `ValueError` after `4·library + 10` attempts."""
    items: list[Experience] = []
    c = 0
    while len(items) < cfg.library:
        if c >= 4 * cfg.library + 10:
            raise ValueError(f"only {len(items)} of {c} demonstrations succeeded")
        base = Scene(f"b{c:02d}", draw_placement(env, generator(cfg.seed, "base", c)).tolist(), "base", 0, 0)
        sigma = float(generator(cfg.seed, "demo-sigma", c).uniform(0.0, cfg.demo_noise))
        noise = generator(cfg.seed, "demo-noise", c)
        obs = env.reset_placed(np.array(base.placement))
        exp = Experience(f"e{len(items):02d}", base, c, sigma)
        success = False
        for _ in range(cfg.horizon):
            a = np.clip(env.expert_action(obs) + sigma * noise.standard_normal(4), -1, 1)
            obs, success = env.step(a)
            exp.path.append(env.mocap_pos.tolist())
            exp.grip.append(float(a[3]))
            if success:
                break
        if success:
            items.append(exp)
        c += 1
    log(f"library: {len(items)} accepted of {c} recorded")
    return items, c


def query_scenes(cfg: RetrievalConfig, env: TaskEnv, library: list[Experience]) -> list[Scene]:
    """The query scenes `q00`, …: appearance, layout, fresh, in that order."""
    n_app, n_lay, n_fresh = cfg.split()
    nb = min(QUERY_BASES, len(library))
    out: list[Scene] = []
    for i in range(n_app):
        b = library[i % nb].base
        out.append(Scene(f"q{len(out):02d}", list(b.placement), "appearance", 0, i + 1, b.scene_id))
    for i in range(n_lay):
        b = library[i % nb].base
        level = 1 + i % 3
        p = _shifted(env, np.array(b.placement), level, generator(cfg.seed, "layout", i))
        out.append(Scene(f"q{len(out):02d}", p.tolist(), "layout", level, 0, b.scene_id))
    for i in range(n_fresh):
        p = draw_placement(env, generator(cfg.seed, "fresh", i))
        out.append(Scene(f"q{len(out):02d}", p.tolist(), "fresh", 3, 1000 + i))
    return out


def _replay(job: tuple[RetrievalConfig, Experience, Scene, int]) -> bool:
    cfg, exp, scene, k = job
    env = task_env(cfg.task, cfg.horizon + cfg.replay_margin, RENDER_SIDE)
    env.reset_placed(np.array(scene.placement))
    d = np.zeros(3)
    d[:2] = np.array(scene.placement[:2]) - np.array(exp.base.placement[:2])
    noise = generator(cfg.seed, "exec", scene.scene_id, k)
    path, n = np.array(exp.path), len(exp.path)
    for t in range(n + cfg.replay_margin):
        target = path[min(t, n - 1)] + d
        xyz = (target - env.mocap_pos) / env.action_scale + cfg.exec_noise * noise.standard_normal(3)
        _, success = env.step(np.append(xyz, exp.grip[min(t, n - 1)]))
        if success:
            return True
    return False


def _pixels32(env: TaskEnv) -> list[float]:
    img = env.render().astype(np.float64)
    h, w = img.shape[0] // 2 * 2, img.shape[1] // 2 * 2
    pooled = img[:h, :w].reshape(h // 2, 2, w // 2, 2, 3).mean(axis=(1, 3)) / 255.0
    return pooled.astype(np.float32).reshape(-1).tolist()


def _structural(p: list[float]) -> list[float]:
    return [p[0], p[1], p[3], p[4], p[5]]


def embeddings(cfg: RetrievalConfig, env: TaskEnv, library: list[Experience], queries: list[Scene]) -> list[dict]:
    """`pixels32` and `structural` rows for every experience and query scene."""
    rows = []
    items = [("experience", e.experience_id, e.base) for e in library] + [
        ("scene", s.scene_id, s) for s in queries
    ]
    for kind, ident, scene in items:
        env.set_appearance(scene.appearance_draw, cfg.seed)
        env.reset_placed(np.array(scene.placement))
        rows.append({"representation": "pixels32", "kind": kind, "id": ident, "vector": _pixels32(env)})
    env.set_appearance(0, cfg.seed)
    for kind, ident, scene in items:
        rows.append({"representation": "structural", "kind": kind, "id": ident, "vector": _structural(scene.placement)})
    return rows


def _write_csv(path: Path, header: list[str], rows: list[list]) -> None:
    with path.open("w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)


def _write_executions(dir_: Path, rows: list[tuple[str, str, int, bool]], chunk: int) -> int:
    dir_.mkdir(parents=True, exist_ok=True)
    parts = 0
    for start in range(0, len(rows), chunk):
        part = rows[start : start + chunk]
        table = pa.table(
            {
                "experience_id": pa.array([r[0] for r in part], pa.string()),
                "scene_id": pa.array([r[1] for r in part], pa.string()),
                "seed": pa.array([r[2] for r in part], pa.int64()),
                "success": pa.array([r[3] for r in part], pa.bool_()),
            }
        )
        pq.write_table(table, dir_ / f"part-{parts:06d}.parquet")
        parts += 1
    return parts


def collect_retrieval(cfg: RetrievalConfig, out: Path, log=print) -> dict:
    """Collects the run folder into `out` (written as `out.partial`, renamed at the end; an
    existing `out` raises `FileExistsError`). Returns the manifest."""
    cfg.check()
    out = Path(out)
    if out.exists():
        raise FileExistsError(f"{out} exists; remove it or choose another --out")
    tmp = out.with_name(out.name + ".partial")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    t0 = time.time()
    env = task_env(cfg.task, cfg.horizon + cfg.replay_margin, RENDER_SIDE)
    library, attempts = record_library(cfg, env, log)
    queries = query_scenes(cfg, env, library)
    emb = embeddings(cfg, env, library, queries)
    jobs = [(cfg, e, s, k) for e in library for s in queries for k in range(cfg.seeds)]
    jobs += [(cfg, e, e.base, k) for e in library for k in range(cfg.seeds)]
    log(f"executing {len(jobs)} replays")
    results = list(ordered_map(_replay, jobs, cfg.workers))
    rows = [(e.experience_id, s.scene_id, k, ok) for (_, e, s, k), ok in zip(jobs, results)]
    parts = _write_executions(tmp / "executions", rows, cfg.chunk)
    _write_csv(
        tmp / "scenes.csv",
        ["scene_id", "perturbation", "layout_level", "appearance_draw", "base_scene_id",
         "obj_x", "obj_y", "goal_x", "goal_y", "goal_z"],
        [[s.scene_id, s.perturbation, s.layout_level, s.appearance_draw, s.base_scene_id,
          *(f"{v:.6f}" for v in _structural(s.placement))] for s in queries],
    )
    _write_csv(
        tmp / "experiences.csv",
        ["experience_id", "base_scene_id", "recorded_at"],
        [[e.experience_id, e.base.scene_id, i] for i, e in enumerate(library)],
    )
    pq.write_table(
        pa.table(
            {
                "representation": pa.array([r["representation"] for r in emb], pa.string()),
                "kind": pa.array([r["kind"] for r in emb], pa.string()),
                "id": pa.array([r["id"] for r in emb], pa.string()),
                "vector": pa.array([r["vector"] for r in emb], pa.list_(pa.float32())),
            }
        ),
        tmp / "embeddings.parquet",
    )
    own = {e.experience_id: [] for e in library}
    for (_, e, s, _k), ok in zip(jobs, results):
        if s.scene_id == e.base.scene_id:
            own[e.experience_id].append(ok)
    manifest = {
        "schema": MANIFEST_SCHEMA,
        "config": {k: v for k, v in asdict(cfg).items() if k != "workers"},
        "env_name": task_spec(cfg.task).env_name,
        "success_definition": "ever succeeded: Meta-World info['success'] at any replay step",
        "total_executions": len(rows),
        "execution_parts": parts,
        "success_rate": float(np.mean(results)),
        "library": {
            "pool": len(library),
            "attempts": attempts,
            "rejected": attempts - len(library),
            "rejection_rate": (attempts - len(library)) / attempts,
        },
        "experiences": [
            {
                "experience_id": e.experience_id,
                "base_scene_id": e.base.scene_id,
                "candidate": e.candidate,
                "demo_sigma": e.demo_sigma,
                "steps": len(e.path),
                "base_placement": e.base.placement,
                "own_base_success": float(np.mean(own[e.experience_id])),
            }
            for e in library
        ],
        "scenes": [asdict(s) for s in queries],
    }
    (tmp / "collect.json").write_text(json.dumps(manifest, indent=2))
    tmp.rename(out)
    log(f"wrote {len(rows)} executions to {out} in {time.time() - t0:.0f} s; "
        f"audit with: roboaudit retrieval audit --run {out} --structural structural --out {out}/audit")
    return manifest
