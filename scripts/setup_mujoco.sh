#!/usr/bin/env bash
# Obtain libmujoco.so.3.17.0 for the `mujoco-rs` crate (roboaudit-testbed) without network access to GitHub:
# the library is taken from the PyPI wheel `mujoco==3.17.0` (only crates.io, PyPI and Debian are reachable).
#
# Usage: scripts/setup_mujoco.sh            (installs into <repo>/target/mujoco/3.17.0/lib)
# Idempotent: does nothing when the library is already there. Users who have MuJoCo 3.17.0 already can skip
# this and export MUJOCO_DYNAMIC_LINK_DIR=<dir containing libmujoco.so>, which .cargo/config.toml does not override.
# Needs: python3 with pip, unzip or python3's zipfile. Runtime rendering also needs Mesa's EGL
# (Debian: apt-get install libegl1 libegl-mesa0 libgl1-mesa-dri).
set -euo pipefail

VERSION="3.17.0"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEST="${ROOT}/target/mujoco/${VERSION}/lib"
LIB="libmujoco.so.${VERSION}"

if [[ -n "${MUJOCO_DYNAMIC_LINK_DIR:-}" && "${MUJOCO_DYNAMIC_LINK_DIR}" != "${DEST}" ]]; then
  if [[ -e "${MUJOCO_DYNAMIC_LINK_DIR}/libmujoco.so" ]]; then
    echo "setup_mujoco: using MUJOCO_DYNAMIC_LINK_DIR=${MUJOCO_DYNAMIC_LINK_DIR}"
    exit 0
  fi
fi

if [[ -f "${DEST}/${LIB}" && -L "${DEST}/libmujoco.so" ]]; then
  echo "setup_mujoco: ${DEST}/${LIB} already present"
  exit 0
fi

fail() {
  echo "setup_mujoco: ERROR: $*" >&2
  echo "setup_mujoco: MuJoCo ${VERSION} is needed to build roboaudit-testbed. Either make PyPI reachable" >&2
  echo "  (pip download --no-deps mujoco==${VERSION}) or put libmujoco.so.${VERSION} and a symlink" >&2
  echo "  libmujoco.so -> libmujoco.so.${VERSION} in a directory and export MUJOCO_DYNAMIC_LINK_DIR=<that dir>." >&2
  exit 1
}

PY="$(command -v python3 || command -v python || true)"
[[ -n "${PY}" ]] || fail "python3 not found (needed to run pip)"

TMP="$(mktemp -d)"
trap 'rm -rf "${TMP}"' EXIT

echo "setup_mujoco: downloading the mujoco==${VERSION} wheel from PyPI"
"${PY}" -m pip download --quiet --no-deps --only-binary=:all: --dest "${TMP}" "mujoco==${VERSION}" \
  || fail "pip download of mujoco==${VERSION} failed"

WHEEL="$(ls "${TMP}"/mujoco-"${VERSION}"-*.whl 2>/dev/null | head -n 1 || true)"
[[ -n "${WHEEL}" ]] || fail "no wheel for this platform was downloaded"

mkdir -p "${DEST}"
"${PY}" - "${WHEEL}" "${DEST}" "${LIB}" <<'PYEOF' || fail "could not extract ${LIB} from ${WHEEL}"
import sys, zipfile, shutil, os
wheel, dest, lib = sys.argv[1:4]
with zipfile.ZipFile(wheel) as z:
    names = [n for n in z.namelist() if n.endswith("/" + lib)]
    if not names:
        sys.exit("no " + lib + " in the wheel")
    with z.open(names[0]) as src, open(os.path.join(dest, lib + ".part"), "wb") as dst:
        shutil.copyfileobj(src, dst)
os.replace(os.path.join(dest, lib + ".part"), os.path.join(dest, lib))
PYEOF

ln -sfn "${LIB}" "${DEST}/libmujoco.so"
echo "setup_mujoco: installed ${DEST}/${LIB}"
