"""The memory audit's faithful and blind calibrators, re-implemented from
``roboaudit-memory-harness/src/builtin.rs`` so that their known answers (F = 1, F = 0) can come
back through the wire.

Observation keys (what roboaudit's memory harness sends, see the policy-client README):
``observation/state`` the perception vector (float32: 16 proprioception values, then per block
x, y, z, yaw, per tray x, y, per pad x, y), ``roboaudit/layout`` ``[n_blocks, n_trays, n_pads]``,
``roboaudit/branch_candidates`` (the candidate trays at an audited present, empty during a
history). Every observation is folded into the memory (the first since ``reset`` becomes the
anchor), as a deployed policy folds what it sees; the answer is a ``(horizon, 7)`` chunk.
"""

from __future__ import annotations

import zlib

import numpy as np

STEP = 0.014
TRANSPORT_Z = 0.2
PLACE_Z = 0.034
PLACE_RADIUS = 0.002
PROPRIO = 16


class Layout:
    def __init__(self, n_blocks: int, n_trays: int, n_pads: int) -> None:
        self.n_blocks, self.n_trays, self.n_pads = n_blocks, n_trays, n_pads

    def block(self, b: int) -> int:
        return PROPRIO + 4 * b

    def tray(self, t: int) -> int:
        return PROPRIO + 4 * self.n_blocks + 2 * t


def held_block(f: np.ndarray, l: Layout) -> int:
    best = 0
    for b in range(l.n_blocks):
        if f[l.block(b) + 2] > f[l.block(best) + 2]:
            best = b
    return best


def nearest_tray(block_from: np.ndarray, trays_from: np.ndarray, l: Layout, b: int) -> int:
    bx, by = float(block_from[l.block(b)]), float(block_from[l.block(b) + 1])

    def d(t: int) -> float:
        o = l.tray(t)
        return float(np.hypot(float(trays_from[o]) - bx, float(trays_from[o + 1]) - by))

    best = 0
    for t in range(l.n_trays):
        if d(t) < d(best):
            best = t
    return best


def transport_chunk(f: np.ndarray, l: Layout, tray: int, n: int, std: float, seed: int | None) -> np.ndarray:
    """``builtin::transport_chunk``: toward ``tray`` at transport height, place, release, lift."""
    target = [float(f[l.tray(tray)]), float(f[l.tray(tray) + 1]), TRANSPORT_Z]
    pos = [float(f[7]), float(f[8]), float(f[9])]
    grip = 1.0 if float(f[PROPRIO - 1]) > 0.0 else -1.0
    rng = None
    if seed is not None and std > 0:
        # Common randomness: a function of the seed and the present only.
        rng = np.random.default_rng([seed & ((1 << 63) - 1), zlib.crc32(f.tobytes())])
    out = np.zeros((n, 7), np.float32)
    for k in range(n):
        planar = float(np.hypot(target[0] - pos[0], target[1] - pos[1]))
        if grip < 0.0:
            goal = [pos[0], pos[1], TRANSPORT_Z]
        elif planar > PLACE_RADIUS:
            goal = target
        elif pos[2] > PLACE_Z + 0.003:
            goal = [target[0], target[1], PLACE_Z]
        else:
            grip = -1.0
            goal = list(pos)
        d = [0.0, 0.0, 0.0]
        for i in range(3):
            d[i] = min(max(goal[i] - pos[i], -STEP), STEP)
            pos[i] += d[i]
        if rng is not None:
            d = [v + std * rng.standard_normal() for v in d]
        out[k, :3] = d
        out[k, 6] = grip
    return out


class Calibrator:
    """``faithful`` heads for the tray the anchor remembers (F = 1); ``blind`` for the first
    branch candidate, memory unread (F = 0). ``seed`` (the action_seed extension) keys the noise."""

    def __init__(self, kind: str, horizon: int = 12, noise_std: float = 0.002) -> None:
        if kind not in ("faithful", "blind"):
            raise ValueError(kind)
        self.kind = kind
        self.horizon = horizon
        self.noise_std = noise_std
        self.anchor: np.ndarray | None = None
        self.action_seed: int | None = None

    def reset(self) -> None:
        self.anchor = None

    def seed(self, s: int) -> None:
        self.action_seed = s

    def get_memory(self) -> dict:
        a = np.zeros(1024, np.float32)
        if self.anchor is not None:
            a[: len(self.anchor)] = self.anchor
        return {"anchor": a, "anchor_set": np.array([1.0 if self.anchor is not None else 0.0], np.float32)}

    def set_memory(self, mem: dict) -> None:
        self.anchor = np.array(mem["anchor"], np.float32) if float(mem["anchor_set"][0]) > 0 else None

    def _recalled(self, f: np.ndarray, l: Layout, cands: list[int]) -> int | None:
        if self.anchor is None:
            return None
        held = held_block(f, l)
        own = nearest_tray(self.anchor, f, l, held)
        if not cands or own in cands:
            return own
        for b in range(l.n_blocks):
            if b != held:
                t = nearest_tray(self.anchor, f, l, b)
                if t in cands:
                    return t
        return own

    def infer(self, obs: dict) -> dict:
        f = np.asarray(obs["observation/state"], np.float32)
        l = Layout(*[int(x) for x in obs["roboaudit/layout"]])
        cands = [int(c) for c in obs.get("roboaudit/branch_candidates", [])]
        first = cands[0] if cands else 0
        if self.kind == "faithful":
            r = self._recalled(f, l, cands)
            tray = first if r is None else r
        else:
            tray = first
        if self.anchor is None:
            self.anchor = f.copy()
        seed, self.action_seed = self.action_seed, None
        return {"actions": transport_chunk(f, l, tray, self.horizon, self.noise_std, seed)}
