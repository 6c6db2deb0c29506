"""Fixtures for the tests of the installed wheel (scripts/ci_wheel.sh runs them in a fresh venv)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def cli():
    """The wheel's ``roboaudit`` command (the launcher) of this Python environment."""
    exe = Path(sys.executable).parent / "roboaudit"
    if not exe.exists():
        found = shutil.which("roboaudit")
        if not found:
            pytest.skip("the roboaudit wheel is not installed in this environment")
        exe = Path(found)
    return exe


@pytest.fixture(scope="session")
def run(cli):
    """Runs ``roboaudit ARGS``; returns the CompletedProcess (text), failing on a non-zero exit
    unless ``check=False``."""

    def go(*args, check=True):
        proc = subprocess.run([str(cli), *map(str, args)], capture_output=True, text=True)
        if check and proc.returncode != 0:
            raise AssertionError(f"roboaudit {' '.join(map(str, args))}: exit {proc.returncode}\n{proc.stderr}")
        return proc

    return go


@pytest.fixture(scope="session")
def demo_dir():
    """A finished ``roboaudit demo --scale small`` folder (ROBOAUDIT_DEMO_DIR; the CI script runs
    the demo once for the report check and hands it over); skipped without it."""
    d = os.environ.get("ROBOAUDIT_DEMO_DIR")
    if not d:
        pytest.skip("ROBOAUDIT_DEMO_DIR not set")
    return Path(d)
