#!/usr/bin/env python3
"""Generate the example retrieval-audit log in examples/retrieval/ (README main job).

Pinned versions: Python 3.11, numpy 2.2.6. Deterministic: fixed seed, same bytes on every run.

    python scripts/make_example_retrieval.py [OUT_DIR]   # default examples/retrieval

A synthetic Replay-style benchmark (seed paper 000 §II) with a latent structure a reader can check:
* 12 stored experiences, each recorded in its own base scene (base_00..base_11), with a latent
  layout (object x, object y, obstacle height) and a latent appearance (light, colour, texture, camera).
* 24 query scenes: 8 appearance-perturbed (a base layout under a new appearance draw), 8
  layout-perturbed (a base scene with its objects displaced by layout_level 1-3), 8 fresh.
* Replay is camera-independent: success depends on the layout mismatch between the experience's base
  scene and the query scene, on the experience's robustness and on the scene's difficulty (higher
  layout_level = harder), never on appearance.
* exp_07 is broadly transferable (moderate quality everywhere, weak dependence on layout): it is
  the best-fixed experience, but other experiences are better near their own layouts, so the oracle
  spreads its picks. exp_03 was recorded under a neutral, average-looking appearance and is brittle
  away from home: its pixel embedding sits near the centre of the cloud, so raw-pixel nearest
  neighbour concentrates on it (a hub) although it almost never transfers.
* `pixels` (dim 48) is a linear image of a 32-dimensional appearance latent (strong) plus the layout
  latent (weak) plus a shared mean image and noise; `structural` (dim 6) is the layout latent with
  light noise.
* Scene difficulty grows with layout_level plus a random per-scene term.
* Every experience is replayed 3 times in its own base scene (own-base executions; own_base_success is
  left empty so the audit computes it); replay is accurate at home for brittle and robust experiences
  alike, so own-base success does not predict transfer.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import numpy as np

SEED = 20260929
K, N_APP, N_LAY, N_FRESH, SEEDS = 12, 8, 8, 8, 3
BROAD, HUB = 7, 3
APP_DIM = 32


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def fmt(v: np.ndarray) -> str:
    return " ".join(f"{x:.5f}" for x in v)


def generate(out: Path) -> None:
    rng = np.random.default_rng(SEED)
    out.mkdir(parents=True, exist_ok=True)

    # --- latent scene descriptions -------------------------------------------------------------
    base_layout = rng.uniform(-1.0, 1.0, size=(K, 3))
    base_app = rng.normal(0.0, 1.0, size=(K, APP_DIM))
    base_app[HUB] = rng.normal(0.0, 0.1, size=APP_DIM)  # neutral lighting, average colours

    scenes = []  # (id, perturbation, layout_level, appearance_draw, layout, appearance)
    draw = K  # appearance draws 0..K-1 are the base scenes' own
    for i in range(N_APP):
        b = [0, 2, 4, 5, 8, 9, 10, 11][i]
        scenes.append((f"scene_a{i:02d}", "appearance", 0, draw, base_layout[b].copy(),
                       rng.normal(0.0, 1.0, size=APP_DIM)))
        draw += 1
    for i in range(N_LAY):
        b = [1, 2, 3, 5, 6, 8, 10, 11][i]
        level = 1 + i % 3
        shift = rng.normal(0.0, 1.0, size=3)
        shift *= 0.35 * level / np.linalg.norm(shift)
        scenes.append((f"scene_l{i:02d}", "layout", level, b, base_layout[b] + shift,
                       base_app[b].copy()))
    for i in range(N_FRESH):
        scenes.append((f"scene_f{i:02d}", "fresh", int(1 + rng.integers(3)), draw,
                       rng.uniform(-1.0, 1.0, size=3), rng.normal(0.0, 1.0, size=APP_DIM)))
        draw += 1
    n = len(scenes)
    scene_layout = np.stack([s[4] for s in scenes])
    scene_app = np.stack([s[5] for s in scenes])
    scene_level = np.array([s[2] for s in scenes])

    # --- experiences: quality and robustness -----------------------------------------------------
    alpha = rng.normal(1.4, 0.4, size=K)  # intercept of transfer
    gamma = rng.uniform(2.5, 3.5, size=K)  # sensitivity to layout mismatch
    alpha[BROAD], gamma[BROAD] = 0.9, 0.4
    alpha[HUB], gamma[HUB] = 0.0, 4.0
    home = 2.5  # logit bonus of the exact recorded layout (replay is accurate at home)
    difficulty = 0.5 * scene_level + rng.normal(0.0, 0.9, size=n)

    dist = np.linalg.norm(base_layout[:, None, :] - scene_layout[None, :, :], axis=2)
    logit = alpha[:, None] - difficulty[None, :] - gamma[:, None] * dist
    logit += home * (dist < 1e-9)
    p = sigmoid(logit)

    with open(out / "executions.csv", "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["experience_id", "scene_id", "seed", "success"])
        for e in range(K):
            for seed in range(SEEDS):  # own-base executions: not part of the transfer matrix
                y = rng.random() < sigmoid(alpha[e] + home + 0.5)
                w.writerow([f"exp_{e:02d}", f"base_{e:02d}", seed, int(y)])
            for s in range(n):
                for seed in range(SEEDS):
                    w.writerow([f"exp_{e:02d}", scenes[s][0], seed, int(rng.random() < p[e, s])])

    with open(out / "scenes.csv", "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["scene_id", "perturbation", "layout_level", "appearance_draw"])
        for sid, kind, level, app, _, _ in scenes:
            w.writerow([sid, kind, level, app])

    recorded = 100 + np.arange(K) * 10 + rng.integers(0, 5, size=K)
    recorded[[4, 9]] = recorded[[9, 4]]  # library order is not recording order
    with open(out / "experiences.csv", "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["experience_id", "base_scene_id", "recorded_at", "own_base_success"])
        for e in range(K):
            w.writerow([f"exp_{e:02d}", f"base_{e:02d}", int(recorded[e]), ""])

    # --- embeddings ------------------------------------------------------------------------------
    A = rng.normal(0.0, 1.0, size=(48, APP_DIM))
    L = rng.normal(0.0, 1.0, size=(48, 3))
    mean_image = rng.uniform(0.5, 1.5, size=48)

    def pixels(app, lay):
        return mean_image + 0.3 * (A @ app) + 0.12 * (L @ lay) + rng.normal(0.0, 0.08, size=48)

    S = np.array([[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0], [0.7, 0.7, 0], [0.5, -0.5, 0.3],
                  [0.2, 0.1, -0.8]])

    def structural(lay):
        return S @ lay + rng.normal(0.0, 0.08, size=6)

    with open(out / "embeddings.csv", "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["representation", "kind", "id", "vector"])
        for e in range(K):
            w.writerow(["pixels", "experience", f"exp_{e:02d}", fmt(pixels(base_app[e], base_layout[e]))])
        for s in range(n):
            w.writerow(["pixels", "scene", scenes[s][0], fmt(pixels(scene_app[s], scene_layout[s]))])
        for e in range(K):
            w.writerow(["structural", "experience", f"exp_{e:02d}", fmt(structural(base_layout[e]))])
        for s in range(n):
            w.writerow(["structural", "scene", scenes[s][0], fmt(structural(scene_layout[s]))])


if __name__ == "__main__":
    default = Path(__file__).resolve().parents[1] / "examples" / "retrieval"
    generate(Path(sys.argv[1]) if len(sys.argv) > 1 else default)
