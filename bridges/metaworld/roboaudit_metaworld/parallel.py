"""Ordered parallel map over worker processes, each with its own cache of environments (one
MuJoCo model and GL context per task and process). Results come back in input order, so the
output does not depend on the number of workers."""

from __future__ import annotations

import multiprocessing as mp
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from .envs import TaskEnv

_ENVS: dict[tuple[str, int, int], TaskEnv] = {}


def task_env(task: str, horizon: int, image_size: int) -> TaskEnv:
    """This process's environment for `(task, horizon, image_size)`, made on first use."""
    key = (task, horizon, image_size)
    env = _ENVS.get(key)
    if env is None:
        env = _ENVS[key] = TaskEnv(task, horizon, image_size)
    return env


def ordered_map(
    fn: Callable[[Any], Any], items: Iterable[Any], workers: int
) -> Iterator[Any]:
    """`fn` over `items` in order; `workers` > 1 uses that many spawned processes (`fn` must be a
    module-level function)."""
    items = list(items)
    if workers <= 1 or len(items) <= 1:
        yield from map(fn, items)
        return
    with mp.get_context("spawn").Pool(processes=workers) as pool:
        yield from pool.imap(fn, items, chunksize=1)
