"""The wheel's `roboaudit` command: MuJoCo from the mujoco package, system libraries checked."""

import os
import re
import subprocess
import sys

import pytest

from roboaudit import _launcher


def test_version_runs_the_binary_with_mujoco_from_the_wheel(run):
    out = run("--version").stdout
    assert re.fullmatch(r"roboaudit \d+\.\d+\.\d+\n", out), out


def test_binary_has_no_build_tree_rpath_and_links_only_what_the_launcher_checks():
    # The NEEDED entries of the shipped binary, minus glibc/libgcc and the mujoco wheel's library,
    # are exactly the libraries the launcher looks up: a new system dependency must be added there.
    native = _launcher.native_binary()
    dyn = subprocess.run(["readelf", "-d", native], capture_output=True, text=True, check=True).stdout
    needed = set(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dyn))
    assert "libmujoco.so.3.17.0" in needed
    base = {"libc.so.6", "libm.so.6", "libgcc_s.so.1", "libdl.so.2", "libpthread.so.0",
            "librt.so.1", "ld-linux-x86-64.so.2", "libstdc++.so.6"}
    assert needed - base - {"libmujoco.so.3.17.0"} == set(_launcher.LINKED_LIBRARIES)
    # A path into the build tree would load MuJoCo without the launcher (and mean nothing elsewhere).
    assert "RPATH" not in dyn and "RUNPATH" not in dyn, dyn


def test_launcher_finds_mujoco_without_importing_it():
    code = ("import sys; from roboaudit._launcher import prepare; b, env = prepare(); "
            "print(env['LD_LIBRARY_PATH'].split(':')[0]); print('mujoco' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert os.path.isfile(os.path.join(out[0], "libmujoco.so.3.17.0"))
    assert out[1] == "False"


def test_missing_system_library_names_the_debian_packages(monkeypatch, capsys):
    monkeypatch.setattr(_launcher, "_found", lambda soname, extra: soname not in ("libEGL.so.1", "libavcodec.so.59"))
    monkeypatch.delenv("ROBOAUDIT_SKIP_SYSTEM_CHECK", raising=False)
    assert _launcher.main() == 1
    err = capsys.readouterr().err
    assert "libEGL.so.1" in err and "libavcodec.so.59" in err
    assert "apt-get install libegl1 libegl-mesa0 libgl1-mesa-dri libavcodec59" in err


def test_missing_mujoco_is_reported(monkeypatch, capsys):
    monkeypatch.setattr(_launcher, "mujoco_library_dir", lambda: None)
    assert _launcher.main() == 1
    assert "pip install mujoco==3.17.0" in capsys.readouterr().err


@pytest.mark.parametrize("present", [True, False])
def test_found_looks_in_the_given_folders(tmp_path, present):
    if present:
        (tmp_path / "libnothing-roboaudit.so.1").write_bytes(b"")
    assert _launcher._found("libnothing-roboaudit.so.1", [str(tmp_path)]) is present
