"""Command line: `python -m roboaudit_metaworld fqe --out DIR ...` and
`python -m roboaudit_metaworld retrieval --out DIR ...`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _floats(text: str) -> tuple[float, ...]:
    return tuple(float(x) for x in text.split(",") if x.strip())


def _names(text: str) -> tuple[str, ...]:
    return tuple(x.strip() for x in text.split(",") if x.strip())


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m roboaudit_metaworld", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)

    f = sub.add_parser("fqe", help="LeRobot dataset, policy-actions files and ground truth")
    f.add_argument("--out", type=Path, required=True, help="output folder (must not exist)")
    f.add_argument("--episodes", type=int, default=160)
    f.add_argument("--rollouts", type=int, default=100, help="per policy and task")
    f.add_argument("--tasks", type=_names, default=("push", "pick-place"))
    f.add_argument("--horizon", type=int, default=150)
    f.add_argument("--image-size", type=int, default=64)
    f.add_argument("--samples", type=int, default=8)
    f.add_argument("--gamma", type=float, default=0.99)
    f.add_argument("--seed", type=int, default=0)
    f.add_argument("--sigmas", type=_floats, default=(0.0, 0.25, 0.5, 0.75, 1.0))
    f.add_argument("--workers", type=int, default=1)
    f.add_argument("--last-step", action="store_true", help="also report success at the last step")
    f.add_argument("--small", action="store_true", help="8 episodes, 2 rollouts, 32-px images, horizon 100")

    r = sub.add_parser("retrieval", help="retrieval-audit run folder (replay with retargeting)")
    r.add_argument("--out", type=Path, required=True, help="output folder (must not exist)")
    r.add_argument("--task", default="push")
    r.add_argument("--library", type=int, default=12, help="pool size K (accepted experiences)")
    r.add_argument("--scenes", type=int, default=24, help="query scenes (40%% appearance, 40%% layout, rest fresh)")
    r.add_argument("--seeds", type=int, default=2, help="execution seeds per experience x scene cell")
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--horizon", type=int, default=150)
    r.add_argument("--workers", type=int, default=1)
    r.add_argument("--small", action="store_true", help="4 experiences, 5 scenes, 1 seed")

    a = p.parse_args(argv)
    try:
        if a.command == "fqe":
            from .fqe import FqeConfig, collect_fqe

            cfg = FqeConfig(
                episodes=a.episodes, rollouts=a.rollouts, tasks=a.tasks, horizon=a.horizon,
                image_size=a.image_size, samples=a.samples, gamma=a.gamma, seed=a.seed,
                sigmas=a.sigmas, workers=a.workers, last_step=a.last_step,
            )
            if a.small:
                cfg.episodes, cfg.rollouts, cfg.image_size, cfg.horizon = 8, 2, 32, 100
            collect_fqe(cfg, a.out)
        else:
            from .retrieval import RetrievalConfig, collect_retrieval

            cfg = RetrievalConfig(
                task=a.task, library=a.library, scenes=a.scenes, seeds=a.seeds, seed=a.seed,
                horizon=a.horizon, workers=a.workers,
            )
            if a.small:
                cfg.library, cfg.scenes, cfg.seeds = 4, 5, 1
            collect_retrieval(cfg, a.out)
    except (ValueError, FileExistsError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
