"""Policies: the scripted experts with Gaussian action noise (target policies of graded quality)
and the behaviour mixture of the offline dataset.

A target policy's action at an observation is `clip(expert(obs) + σ·ε, −1, 1)` with ε ~ N(0, I₄)
on all four action values (dx, dy, dz, gripper). Its noise is drawn from a stream keyed by the
policy's name and the place it acts (a rollout step, or a dataset frame and sample), so its
action at a dataset frame is a draw from exactly the distribution it has when driving.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .envs import TaskEnv
from .rng import generator

#: Noise levels σ of the standard target policies (action units; the action box is [-1, 1]).
STANDARD_SIGMAS: tuple[float, ...] = (0.0, 0.25, 0.5, 0.75, 1.0)


@dataclass(frozen=True)
class TargetPolicy:
    """The scripted expert with action noise σ."""

    #: Name, also the policy-actions file stem.
    name: str
    #: Standard deviation of the Gaussian action noise.
    sigma: float

    @property
    def stochastic(self) -> bool:
        """Whether the policy draws noise."""
        return self.sigma > 0.0

    def act(self, expert_action: np.ndarray, noise: np.ndarray) -> np.ndarray:
        """The action given the expert's action and a standard-normal draw of the same shape."""
        return np.clip(expert_action + self.sigma * noise, -1.0, 1.0)


def target_name(sigma: float) -> str:
    """`expert_sigma000`, `expert_sigma025`, …: σ in hundredths."""
    return f"expert_sigma{round(sigma * 100):03d}"


def standard_targets(sigmas: tuple[float, ...] = STANDARD_SIGMAS) -> list[TargetPolicy]:
    """One target policy per σ, best (σ = 0) first."""
    return [TargetPolicy(target_name(s), float(s)) for s in sigmas]


#: Behaviour kinds of the offline dataset with their shares (sum 1).
MIXTURE: tuple[tuple[str, float], ...] = (
    ("expert", 0.15),
    ("expert_noise_0.3", 0.15),
    ("expert_noise_0.6", 0.15),
    ("expert_noise_1.0", 0.15),
    ("expert_noise_1.5", 0.10),
    ("slow_expert", 0.10),
    ("wrong_goal_expert", 0.10),
    ("random_walk", 0.10),
)


def mixture_counts(n: int) -> list[tuple[str, int]]:
    """Episodes per behaviour kind for `n` episodes (largest remainder, ties to the earlier kind)."""
    raw = [(k, w * n) for k, w in MIXTURE]
    counts = [int(np.floor(x)) for _, x in raw]
    rest = n - sum(counts)
    order = sorted(range(len(raw)), key=lambda i: (-(raw[i][1] - counts[i]), i))
    for i in order[:rest]:
        counts[i] += 1
    return [(k, c) for (k, _), c in zip(raw, counts)]


class BehaviourPolicy:
    """One episode's behaviour policy; its draws come from `(seed, "behaviour", episode)`.

    Kinds: `expert`; `expert_noise_<σ>` (expert plus N(0, σ²) noise); `slow_expert` (expert
    actions scaled by 0.3 plus σ = 0.1 noise: late successes); `wrong_goal_expert` (the expert
    aiming at the goal mirrored through the object: purposeful motion that fails);
    `random_walk` (an Ornstein–Uhlenbeck process in the action box).
    """

    def __init__(self, kind: str, seed: int, episode: int) -> None:
        if kind not in dict(MIXTURE):
            raise ValueError(f"unknown behaviour kind {kind!r}")
        self.kind = kind
        self.rng = generator(seed, "behaviour", episode)
        self.walk = np.zeros(4)

    def act(self, env: TaskEnv, obs: np.ndarray) -> np.ndarray:
        """The action at `obs` (clipped to [-1, 1]^4)."""
        k = self.kind
        noise = self.rng.standard_normal(4)
        if k == "expert":
            a = env.expert_action(obs)
        elif k.startswith("expert_noise_"):
            a = env.expert_action(obs) + float(k.rsplit("_", 1)[1]) * noise
        elif k == "slow_expert":
            a = 0.3 * env.expert_action(obs) + 0.1 * noise
        elif k == "wrong_goal_expert":
            o = obs.copy()
            o[-3:-1] = 2.0 * obs[4:6] - obs[-3:-1]
            a = env.expert_action(o)
        else:  # random_walk
            self.walk = 0.8 * self.walk + 0.5 * noise
            a = self.walk
        return np.clip(a, -1.0, 1.0)
