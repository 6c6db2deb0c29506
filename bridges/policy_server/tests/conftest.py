import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from roboaudit_policy_server import PolicyServer


@pytest.fixture
def serve():
    """Starts PolicyServer(policy, **kw) on a free port; stops it afterwards."""
    started = []

    def start(policy, **kw):
        s = PolicyServer(policy, port=0, **kw).start()
        started.append(s)
        return s

    yield start
    for s in started:
        s.stop()


@pytest.fixture
def server_process(tmp_path):
    """Runs ``python -m roboaudit_policy_server ARGS`` in its own process; returns its URL."""
    procs = []

    def start(*args):
        port_file = tmp_path / f"port-{len(procs)}"
        p = subprocess.Popen([sys.executable, "-m", "roboaudit_policy_server", "--port", "0",
                              "--port-file", str(port_file), *args])
        procs.append(p)
        for _ in range(300):
            if port_file.exists():
                return f"ws://127.0.0.1:{port_file.read_text()}"
            if p.poll() is not None:
                raise RuntimeError(f"server exited with {p.returncode}")
            time.sleep(0.05)
        raise RuntimeError("server did not start")

    yield start
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait()


@pytest.fixture(scope="session")
def roboaudit():
    """The roboaudit binary from ROBOAUDIT_BIN (the CI script sets it); skipped without it."""
    b = os.environ.get("ROBOAUDIT_BIN")
    if not b:
        pytest.skip("ROBOAUDIT_BIN not set")
    return Path(b)


@pytest.fixture(scope="session")
def push_dataset(roboaudit, tmp_path_factory):
    """A small push-suite run (``roboaudit fqe collect --small``)."""
    out = tmp_path_factory.mktemp("fqe") / "run"
    subprocess.run([str(roboaudit), "fqe", "collect", "--small", "--out", str(out)], check=True)
    return out
