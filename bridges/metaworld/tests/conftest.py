"""Shared tiny collections (seconds each), made once per test session."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from roboaudit_metaworld.fqe import FqeConfig, collect_fqe  # noqa: E402
from roboaudit_metaworld.retrieval import RetrievalConfig, collect_retrieval  # noqa: E402

TINY_FQE = dict(episodes=6, rollouts=2, horizon=60, image_size=16, samples=3, sigmas=(0.0, 0.5, 1.0), seed=7)
TINY_RETRIEVAL = dict(library=3, scenes=5, seeds=2, seed=3)


@pytest.fixture(scope="session")
def fqe_run(tmp_path_factory) -> tuple[Path, FqeConfig]:
    cfg = FqeConfig(**TINY_FQE)
    out = tmp_path_factory.mktemp("fqe") / "run"
    collect_fqe(cfg, out, log=lambda *_: None)
    return out, cfg


@pytest.fixture(scope="session")
def retrieval_run(tmp_path_factory) -> tuple[Path, RetrievalConfig]:
    cfg = RetrievalConfig(**TINY_RETRIEVAL)
    out = tmp_path_factory.mktemp("retrieval") / "run"
    collect_retrieval(cfg, out, log=lambda *_: None)
    return out, cfg
