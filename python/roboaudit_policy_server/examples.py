"""Example policies: what the integration tests and the benchmark serve.

Each is a plain Python object of the kind a user would serve. ``StatePolicy`` and
``StochasticPolicy`` are functions of the observation that a test can recompute exactly; the
failure policies misbehave on purpose (NaN, wrong shape, an exception, a hang, a crash).
"""

from __future__ import annotations

import os
import time

import numpy as np

STATE = "observation/state"
IMAGE = "observation/image"


def state_action(obs: dict, action_dim: int) -> np.ndarray:
    """The deterministic action of :class:`StatePolicy`: ``tanh`` of a fixed mix of the state,
    plus the mean of the image's first row / 255 (float32, shape ``(action_dim,)``)."""
    state = np.asarray(obs.get(STATE, np.zeros(1, np.float32)), dtype=np.float32)
    k = np.arange(action_dim, dtype=np.float32)[:, None]
    j = np.arange(state.shape[0], dtype=np.float32)[None, :]
    w = np.cos(0.7 * k + 0.3 * j).astype(np.float32)
    img = obs.get(IMAGE)
    bright = np.float32(0.0) if img is None else np.float32(np.asarray(img)[0].mean() / 255.0)
    return np.tanh(w @ state + bright).astype(np.float32)


class StatePolicy:
    """Memoryless, deterministic: :func:`state_action`, repeated over a chunk of ``horizon``."""

    def __init__(self, action_dim: int, horizon: int = 4) -> None:
        self.action_dim = action_dim
        self.horizon = horizon

    def infer(self, obs: dict) -> dict:
        a = state_action(obs, self.action_dim)
        return {"actions": np.repeat(a[None, :], self.horizon, axis=0)}


class StochasticPolicy(StatePolicy):
    """:class:`StatePolicy` plus Gaussian noise (σ = ``scale``) drawn from a generator that
    ``seed(int)`` re-seeds (the ``action_seed`` extension), and a history: the action also adds
    0.001 × the number of observations since ``reset`` (so a missing reset shows)."""

    def __init__(self, action_dim: int, horizon: int = 4, scale: float = 0.1) -> None:
        super().__init__(action_dim, horizon)
        self.scale = scale
        self.rng = np.random.default_rng(0)
        self.steps = 0

    def seed(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def reset(self) -> None:
        self.steps = 0

    def infer(self, obs: dict) -> dict:
        noise = self.rng.normal(0.0, self.scale, size=(self.horizon, self.action_dim))
        a = state_action(obs, self.action_dim)[None, :] + noise + 0.001 * self.steps
        self.steps += 1
        return {"actions": a.astype(np.float32)}


def stochastic_action(obs: dict, action_dim: int, horizon: int, seed: int, steps: int, scale: float = 0.1) -> np.ndarray:
    """What :class:`StochasticPolicy` answers first at ``obs`` after ``seed(seed)`` and ``steps``
    earlier observations since its reset."""
    rng = np.random.default_rng(seed)
    noise = rng.normal(0.0, scale, size=(horizon, action_dim))
    return (state_action(obs, action_dim)[None, :] + noise + 0.001 * steps).astype(np.float32)[0]


class Faulty(StatePolicy):
    """Misbehaves at query ``after`` (0-based): ``nan``, ``wide`` (one extra dimension),
    ``raise``, ``hang`` or ``exit`` (the process dies: the connection drops mid-run)."""

    def __init__(self, action_dim: int, mode: str, after: int = 0, horizon: int = 4) -> None:
        super().__init__(action_dim, horizon)
        self.mode = mode
        self.after = after
        self.n = 0

    def infer(self, obs: dict) -> dict:
        n = self.n
        self.n += 1
        out = super().infer(obs)
        if n < self.after:
            return out
        if self.mode == "nan":
            out["actions"][0, 0] = np.nan
        elif self.mode == "wide":
            out["actions"] = np.zeros((self.horizon, self.action_dim + 1), np.float32)
        elif self.mode == "raise":
            raise RuntimeError("policy failed on purpose")
        elif self.mode == "hang":
            time.sleep(3600)
        elif self.mode == "exit":
            os._exit(3)
        return out
