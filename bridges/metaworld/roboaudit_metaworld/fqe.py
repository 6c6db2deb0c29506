"""FQE ground truth on Meta-World (SPEC.md §3): a LeRobot v3.0 dataset of mixed-behaviour
episodes, a policy-actions file per target policy, and rollout ground truth, in the layout of
`roboaudit fqe collect` (`dataset/`, `policies/<name>.parquet`, `ground_truth.json`), so that
`roboaudit fqe fit --run DIR` reads it unchanged.

Success definition: "ever succeeded". An episode ends at the first step whose Meta-World
`info["success"]` is true (that frame holds `next.success = true`, the terminal label) or after
`horizon` actions (failure). `V^π = mean γ^(T−1)·success` with `T` the number of actions, as in
roboaudit's collector. With `last_step = True` the rollouts also continue to the horizon to
report "succeeded at the last step" beside it (a diagnostic; V and SR stay first-success).
"""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from .behaviour import BehaviourPolicy, TargetPolicy, mixture_counts, standard_targets
from .envs import task_spec
from .lerobot import (
    ACTION_KEY,
    IMAGE_KEY,
    STATE_KEY,
    SUCCESS_KEY,
    Episode,
    encode_png,
    write_lerobot_v3,
)
from .parallel import ordered_map, task_env
from .rng import derived_seed, generator, key_int

#: Schema tag of `ground_truth.json` (read by `roboaudit fqe fit/evaluate`).
SCHEMA = "roboaudit.fqe.ground_truth.v1"


@dataclass
class FqeConfig:
    """What `collect_fqe` collects."""

    #: Dataset episodes (tasks alternate).
    episodes: int = 160
    #: Ground-truth rollouts per policy and task.
    rollouts: int = 100
    #: Tasks (names of `envs.TASKS`).
    tasks: tuple[str, ...] = ("push", "pick-place")
    #: Most actions per episode.
    horizon: int = 150
    #: Side of the rendered square images (pixels).
    image_size: int = 64
    #: Action samples per frame in the policy-actions file of a stochastic policy.
    samples: int = 8
    #: Discount per action.
    gamma: float = 0.99
    #: Master seed.
    seed: int = 0
    #: Noise levels σ of the target policies.
    sigmas: tuple[float, ...] = (0.0, 0.25, 0.5, 0.75, 1.0)
    #: Worker processes.
    workers: int = 1
    #: Also run rollouts to the horizon to report success at the last step.
    last_step: bool = False

    def check(self) -> FqeConfig:
        """Raises `ValueError` for a setting out of range; returns self."""
        for t in self.tasks:
            task_spec(t)
        if self.episodes < len(self.tasks):
            raise ValueError(f"--episodes {self.episodes}: need at least one per task")
        if self.rollouts < 1 or self.horizon < 1 or self.samples < 1:
            raise ValueError("--rollouts, --horizon and --samples must be at least 1")
        if not 0.0 <= self.gamma <= 1.0:
            raise ValueError(f"--gamma {self.gamma} not in [0, 1]")
        if self.image_size < 8:
            raise ValueError(f"--image-size {self.image_size}: at least 8")
        if len(set(self.sigmas)) != len(self.sigmas) or any(s < 0 for s in self.sigmas):
            raise ValueError("--sigmas must be distinct and non-negative")
        return self


@dataclass
class PlannedEpisode:
    """One dataset episode to record."""

    index: int
    task: str
    behaviour: str
    placement_seed: int


def plan_dataset(cfg: FqeConfig) -> list[PlannedEpisode]:
    """Behaviour kinds in the mixture's counts, shuffled with the seed; tasks round-robin."""
    kinds = [k for k, c in mixture_counts(cfg.episodes) for _ in range(c)]
    generator(cfg.seed, "plan").shuffle(kinds)
    return [
        PlannedEpisode(i, cfg.tasks[i % len(cfg.tasks)], k, derived_seed(cfg.seed, "dataset", i))
        for i, k in enumerate(kinds)
    ]


@dataclass
class RecordedEpisode:
    """A recorded episode plus the float64 observations the target policies read."""

    plan: PlannedEpisode
    episode: Episode
    obs: list[np.ndarray] = field(default_factory=list)


def _record(job: tuple[FqeConfig, PlannedEpisode]) -> RecordedEpisode:
    cfg, p = job
    env = task_env(p.task, cfg.horizon, cfg.image_size)
    obs = env.reset_seeded(p.placement_seed)
    env.set_appearance(0, cfg.seed)
    policy = BehaviourPolicy(p.behaviour, cfg.seed, p.index)
    ep = Episode(task=env.spec.instruction, seed=p.placement_seed, scene_id=f"{p.task}:{p.index}")
    rec = RecordedEpisode(p, ep)
    for _ in range(cfg.horizon):
        a = policy.act(env, obs)
        rec.obs.append(obs.copy())
        ep.states.append(obs.astype(np.float32))
        ep.pngs.append(encode_png(env.render()))
        ep.actions.append(a.astype(np.float32))
        obs, success = env.step(a)
        ep.successes.append(success)
        if success:
            break
    return rec


def policy_seed(seed: int, name: str) -> int:
    """Noise seed of a target policy: its name with the collection seed (adding a policy does
    not change the others' noise)."""
    return key_int(derived_seed(seed, "policy", name))


def policy_actions(
    cfg: FqeConfig, target: TargetPolicy, records: list[RecordedEpisode], expert: list[np.ndarray]
) -> tuple[np.ndarray, int]:
    """The target's actions at every dataset frame (`frames × M × 4`, global index order) and M.
    Frame `g` sample `s` uses the `s`-th draw of stream `(policy seed, "dataset", g)`."""
    m = cfg.samples if target.stochastic else 1
    out = np.empty((len(expert), m, 4), dtype=np.float32)
    ps = policy_seed(cfg.seed, target.name)
    for g, e in enumerate(expert):
        noise = generator(ps, "dataset", g).standard_normal((m, 4)) if target.stochastic else np.zeros((1, 4))
        out[g] = target.act(e[None, :], noise)
    return out, m


def write_actions_parquet(path: Path, actions: np.ndarray) -> None:
    """Writes `frames × M × A` actions as columns `index` (int64), `sample` (int64), `action`
    (list<float32>), frame-major (read by `roboaudit_data::lerobot::read_policy_actions`)."""
    n, m, a = actions.shape
    flat = pa.array(actions.reshape(-1), pa.float32())
    offsets = pa.array(np.arange(0, n * m * a + 1, a, dtype=np.int32))
    table = pa.table(
        {
            "index": pa.array(np.repeat(np.arange(n, dtype=np.int64), m)),
            "sample": pa.array(np.tile(np.arange(m, dtype=np.int64), n)),
            "action": pa.ListArray.from_arrays(offsets, flat),
        }
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)


@dataclass
class Outcome:
    """One rollout: first success (if any), its step count, success at the last step."""

    success: bool
    steps: int
    success_last_step: bool | None


def _rollout(job: tuple[FqeConfig, TargetPolicy, str, int]) -> Outcome:
    cfg, target, task, r = job
    env = task_env(task, cfg.horizon, cfg.image_size)
    obs = env.reset_seeded(derived_seed(cfg.seed, "rollout", task, r))
    noise = generator(policy_seed(cfg.seed, target.name), "rollout", task, r)
    first: int | None = None
    success = False
    for t in range(cfg.horizon):
        a = target.act(env.expert_action(obs), noise.standard_normal(4))
        obs, success = env.step(a)
        if success and first is None:
            first = t + 1
            if not cfg.last_step:
                break
    return Outcome(
        first is not None,
        first if first is not None else cfg.horizon,
        success if cfg.last_step else None,
    )


def _task_truth(cfg: FqeConfig, task: str, k: int, outs: list[Outcome]) -> dict:
    v = np.array([cfg.gamma ** (o.steps - 1) if o.success else 0.0 for o in outs])
    n = len(outs)
    row = {
        "task": task_spec(task).instruction,
        "task_index": k,
        "task_name": task_spec(task).env_name,
        "v_pi": float(v.mean()),
        "success_rate": float(np.mean([o.success for o in outs])),
        "v_pi_se": float(v.std(ddof=1) / np.sqrt(n)) if n > 1 else 0.0,
        "mean_steps": float(np.mean([o.steps for o in outs])),
        "n_episodes": n,
    }
    if cfg.last_step:
        row["success_rate_last_step"] = float(np.mean([bool(o.success_last_step) for o in outs]))
    return row


def ground_truth(cfg: FqeConfig, targets: list[TargetPolicy], log=print) -> list[dict]:
    """Rollouts of every target on every task from the dataset's placement distribution (common
    placements across policies); one `PolicyTruth` dict per target."""
    jobs = [(cfg, t, task, r) for t in targets for task in cfg.tasks for r in range(cfg.rollouts)]
    outs = list(ordered_map(_rollout, jobs, cfg.workers))
    result = []
    for pi, t in enumerate(targets):
        tasks = []
        for k, task in enumerate(cfg.tasks):
            start = (pi * len(cfg.tasks) + k) * cfg.rollouts
            tasks.append(_task_truth(cfg, task, k, outs[start : start + cfg.rollouts]))
        nt = len(tasks)
        result.append(
            {
                "policy": t.name,
                "description": f"Meta-World scripted expert with N(0, {t.sigma}^2) action noise",
                "actions_file": f"policies/{t.name}.parquet",
                "samples": cfg.samples if t.stochastic else 1,
                "stochastic": t.stochastic,
                "params": {"sigma": t.sigma},
                "suite_v_pi": sum(x["v_pi"] for x in tasks) / nt,
                "suite_success_rate": sum(x["success_rate"] for x in tasks) / nt,
                "tasks": tasks,
            }
        )
        log(f"  {t.name}: V {result[-1]['suite_v_pi']:.3f}, SR {result[-1]['suite_success_rate']:.3f}")
    return result


def _behaviour_summary(records: list[RecordedEpisode]) -> list[dict]:
    kinds: dict[str, dict] = {}
    for r in records:
        s = kinds.setdefault(
            r.plan.behaviour,
            {"behaviour": r.plan.behaviour, "episodes": 0, "successes": 0, "frames": 0},
        )
        s["episodes"] += 1
        s["successes"] += int(r.episode.success)
        s["frames"] += len(r.episode)
    return sorted(kinds.values(), key=lambda s: s["behaviour"])


def collect_fqe(cfg: FqeConfig, out: Path, log=print) -> dict:
    """Collects everything into `out` (written as `out.partial`, renamed at the end; an existing
    `out` raises `FileExistsError`). Returns the ground-truth file's content."""
    cfg.check()
    out = Path(out)
    if out.exists():
        raise FileExistsError(f"{out} exists; remove it or choose another --out")
    tmp = out.with_name(out.name + ".partial")
    if tmp.exists():
        shutil.rmtree(tmp)
    t0 = time.time()
    plan = plan_dataset(cfg)
    log(f"recording {len(plan)} episodes")
    records = list(ordered_map(_record, [(cfg, p) for p in plan], cfg.workers))
    fps = 1.0 / float(task_env(cfg.tasks[0], cfg.horizon, cfg.image_size).env.dt)
    summary = write_lerobot_v3(tmp / "dataset", [r.episode for r in records], fps)
    log(f"  {summary['frames']} frames in {time.time() - t0:.0f} s")
    experts = [
        task_env(r.plan.task, cfg.horizon, cfg.image_size).expert_action(o)
        for r in records
        for o in r.obs
    ]
    targets = standard_targets(cfg.sigmas)
    for t in targets:
        acts, _ = policy_actions(cfg, t, records, experts)
        write_actions_parquet(tmp / "policies" / f"{t.name}.parquet", acts)
    log(f"ground truth: {cfg.rollouts} rollouts x {len(cfg.tasks)} tasks x {len(targets)} policies")
    truth = {
        "schema": SCHEMA,
        "gamma": cfg.gamma,
        "seed": cfg.seed,
        "dataset": "dataset",
        "image_key": IMAGE_KEY,
        "state_key": STATE_KEY,
        "action_key": ACTION_KEY,
        "success_key": SUCCESS_KEY,
        "success_definition": "ever succeeded: an episode ends at the first step whose Meta-World "
        "info['success'] is true (terminal label on that frame), else after `horizon` actions",
        "horizon": cfg.horizon,
        "n_dataset_episodes": summary["episodes"],
        "n_dataset_frames": summary["frames"],
        "behaviour": _behaviour_summary(records),
        "config": {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(cfg).items() if k != "workers"},
        "policies": ground_truth(cfg, targets, log),
    }
    (tmp / "ground_truth.json").write_text(json.dumps(truth, indent=2))
    (tmp / "README.md").write_text(_readme(truth))
    tmp.rename(out)
    log(f"wrote {out} in {time.time() - t0:.0f} s")
    return truth


def _readme(t: dict) -> str:
    lines = [
        "# FQE ground truth on Meta-World (roboaudit_metaworld fqe)",
        "",
        f"- `dataset/`: LeRobot v3.0, {t['n_dataset_episodes']} episodes, {t['n_dataset_frames']} frames; "
        f"images `{t['image_key']}`, Meta-World observation `{t['state_key']}` (39), actions `{t['action_key']}` (4), "
        f"terminal success `{t['success_key']}`.",
        f"- Success: {t['success_definition']}.",
        "- `policies/<name>.parquet`: per dataset frame (`index`), `sample` 0..M-1, `action`.",
        f"- `ground_truth.json` (`{SCHEMA}`): V = mean gamma^(T-1)·success, gamma = {t['gamma']}.",
        "",
        "| policy | V (suite) | SR (suite) | M |",
        "|---|---|---|---|",
    ]
    for p in t["policies"]:
        lines.append(f"| {p['policy']} | {p['suite_v_pi']:.3f} | {p['suite_success_rate']:.3f} | {p['samples']} |")
    return "\n".join(lines) + "\n"
