"""The ``roboaudit`` command of the wheel: finds MuJoCo, checks the system libraries, execs the binary.

The wheel carries the Rust program as ``roboaudit-native`` next to this command's script. The
binary links ``libmujoco.so.3.17.0`` dynamically; the library is taken from the installed
``mujoco==3.17.0`` package (a declared dependency), located with ``importlib.util.find_spec``
rather than by importing ``mujoco``, which would load its Python bindings and numpy (hundreds of
milliseconds before every command). The system libraries that remain (Mesa's EGL for offscreen
rendering, opened at run time; FFmpeg 5.1's libraries, Debian 12's sonames, which the binary links) are looked
up before the exec so that a missing one is reported with the packages to install rather than
with the dynamic loader's bare message.

Set ``ROBOAUDIT_SKIP_SYSTEM_CHECK=1`` to skip the look-up (the loader still reports a missing
library). The launcher itself exits with 1 when the binary, MuJoCo or a system library is missing;
otherwise the exit code is the binary's own.
"""

from __future__ import annotations

import os
import sys

MUJOCO_VERSION = "3.17.0"
MUJOCO_LIBRARY = f"libmujoco.so.{MUJOCO_VERSION}"
NATIVE = "roboaudit-native"

# soname -> (Debian 12 packages, what it is for). LINKED: the binary's NEEDED entries that neither
# glibc nor the mujoco wheel provides (python/tests/test_launcher.py compares them with readelf);
# LOADED: opened at run time (MuJoCo's offscreen rendering through EGL).
LINKED_LIBRARIES = {
    "libavcodec.so.59": ("libavcodec59", "MP4 camera streams (FFmpeg 5.1)"),
    "libavformat.so.59": ("libavformat59", "MP4 camera streams (FFmpeg 5.1)"),
    "libavutil.so.57": ("libavutil57", "MP4 camera streams (FFmpeg 5.1)"),
    "libswscale.so.6": ("libswscale6", "MP4 camera streams (FFmpeg 5.1)"),
}
LOADED_LIBRARIES = {
    "libEGL.so.1": ("libegl1 libegl-mesa0 libgl1-mesa-dri", "offscreen rendering (Mesa's EGL)"),
}
SYSTEM_LIBRARIES = {**LOADED_LIBRARIES, **LINKED_LIBRARIES}

# Where Debian/Ubuntu (multiarch), Fedora-style and local installs keep shared libraries.
_LIBRARY_DIRS = (
    "/usr/lib/x86_64-linux-gnu",
    "/lib/x86_64-linux-gnu",
    "/usr/lib64",
    "/lib64",
    "/usr/lib",
    "/lib",
    "/usr/local/lib",
)


def mujoco_library_dir() -> str | None:
    """The folder of the installed ``mujoco`` package if it holds ``libmujoco.so.3.17.0``."""
    from importlib.util import find_spec

    spec = find_spec("mujoco")
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        if os.path.isfile(os.path.join(folder, MUJOCO_LIBRARY)):
            return folder
    return None


def _found(soname: str, extra_dirs: list[str]) -> bool:
    for folder in (*extra_dirs, *_LIBRARY_DIRS):
        if folder and os.path.exists(os.path.join(folder, soname)):
            return True
    # Not in a usual folder (a custom ld.so.conf, Nix, conda): ask the loader itself, which costs
    # a few milliseconds only on such systems.
    import ctypes

    try:
        ctypes.CDLL(soname)
    except OSError:
        return False
    return True


def missing_system_libraries(library_path: str = "") -> list[str]:
    """The sonames of ``SYSTEM_LIBRARIES`` that the dynamic loader would not find."""
    extra = [d for d in library_path.split(":") if d]
    return [soname for soname in SYSTEM_LIBRARIES if not _found(soname, extra)]


def missing_message(missing: list[str]) -> str:
    """The error for missing system libraries, naming the Debian/Ubuntu packages that hold them."""
    packages: list[str] = []
    lines = []
    for soname in missing:
        pkgs, purpose = SYSTEM_LIBRARIES[soname]
        lines.append(f"  {soname:<20} {purpose}")
        packages += [p for p in pkgs.split() if p not in packages]
    return (
        "roboaudit: system libraries missing:\n"
        + "\n".join(lines)
        + "\nOn Debian 12: sudo apt-get install "
        + " ".join(packages)
        + "\n(The wheel is built against Debian 12's FFmpeg 5.1; on a system without those sonames,"
        + " build roboaudit from source: see the README's cargo route.)"
    )


def native_binary() -> str:
    """The Rust binary installed beside the ``roboaudit`` command (the wheel's scripts folder)."""
    import sysconfig

    folders = []
    if sys.argv and sys.argv[0]:
        folders.append(os.path.dirname(os.path.realpath(sys.argv[0])))
    # In a venv, python's own folder is the scripts folder (not resolved: it is often a symlink).
    folders.append(os.path.dirname(sys.executable))
    folders.append(sysconfig.get_path("scripts"))
    for folder in folders:
        candidate = os.path.join(folder, NATIVE)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    raise LauncherError(
        f"{NATIVE} not found (looked in {', '.join(dict.fromkeys(folders))}): reinstall the roboaudit wheel"
    )


class LauncherError(RuntimeError):
    """The binary cannot be started: it, MuJoCo or a system library is missing."""


def prepare(check_system: bool = True) -> tuple[str, dict[str, str]]:
    """The binary's path and the environment to run it with (MuJoCo's folder first in
    ``LD_LIBRARY_PATH``). Raises :class:`LauncherError` with the message for the user."""
    binary = native_binary()
    mujoco_dir = mujoco_library_dir()
    if mujoco_dir is None:
        raise LauncherError(
            f"the mujoco package ({MUJOCO_LIBRARY}) is not installed in this Python"
            f" environment: pip install mujoco=={MUJOCO_VERSION}"
        )
    env = dict(os.environ)
    old = env.get("LD_LIBRARY_PATH", "")
    env["LD_LIBRARY_PATH"] = mujoco_dir + (":" + old if old else "")
    if check_system and env.get("ROBOAUDIT_SKIP_SYSTEM_CHECK") != "1":
        missing = missing_system_libraries(old)
        if missing:
            raise LauncherError(missing_message(missing))
    return binary, env


def main() -> int:
    """Replaces this process with the binary, run with this process's arguments."""
    try:
        binary, env = prepare()
    except LauncherError as e:
        message = str(e)
        prefix = "" if message.startswith("roboaudit:") else "roboaudit: "
        print(prefix + message, file=sys.stderr)
        return 1
    os.execve(binary, ["roboaudit", *sys.argv[1:]], env)
    return 1  # not reached: execve replaces the process or raises


if __name__ == "__main__":
    sys.exit(main())
