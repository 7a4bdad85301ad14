#!/usr/bin/env bash
# Installs everything rldk needs to build and test, then rldk itself, into .venv/. Idempotent: a second run with
# nothing changed only checks (a few seconds).
#   1. Debian packages: compiler, ccache, CMake, Ninja and the C++ libraries (zlib, zstd, yaml-cpp, CLI11, GoogleTest, xxHash, simdjson),
#      clang for the libFuzzer targets, headless Chromium (and a font) to look at the HTML cards in the tests.
#   2. A Python virtual environment .venv/ with the build and test requirements (requirements-dev.txt).
#   3. `pip install .`: the Python package rldk and the native `rldk` command, rebuilt only when sources changed.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(g++ cmake ninja-build pkg-config zlib1g-dev libzstd-dev zstd libyaml-cpp-dev libcli11-dev libgtest-dev
              libcurl4-openssl-dev libsqlite3-dev libxxhash-dev libsimdjson-dev libicu-dev ccache
              clang-14 libclang-rt-14-dev python3-venv
              chromium fonts-dejavu-core)

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
# A Python that already has venv (pyenv, a custom build) does not need Debian's python3-venv.
if [[ " ${missing[*]} " == *" python3-venv "* ]] && python3 -c "import venv, ensurepip" 2>/dev/null; then
  missing=("${missing[@]/python3-venv}")
fi
missing=(${missing[@]+"${missing[@]}"})
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || { echo "setup: need root (or sudo) to install: ${missing[*]}" >&2; exit 2; }
    SUDO="sudo"
  fi
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

PY=${PYTHON:-python3}
if [[ ! -x .venv/bin/python ]]; then
  echo "setup: creating .venv"
  "$PY" -m venv .venv
fi
VPY=.venv/bin/python

stamp() { sha1sum "$@" 2>/dev/null | sha1sum | cut -c1-40; }

# pip with its known harmless warning lines (PATTERN) left out of the console; returns pip's own status, so a
# failed install stops the setup instead of being hidden behind the filter.
pip_quiet() {
  local pattern=$1 rc=0
  shift
  "$VPY" -m pip "$@" > .venv/pip.log 2>&1 || rc=$?
  grep -v "$pattern" .venv/pip.log || true
  return "$rc"
}

req_stamp=$(stamp requirements-dev.txt)
if [[ "$(cat .venv/.requirements-stamp 2>/dev/null)" != "$req_stamp" ]]; then
  echo "setup: installing Python requirements"
  "$VPY" -m pip install -q --upgrade pip >/dev/null
  pip_quiet "^WARNING: Location" install -q -r requirements-dev.txt ||
    { echo "setup: pip could not install requirements-dev.txt (its output is above)" >&2; exit 1; }
  echo "$req_stamp" > .venv/.requirements-stamp
fi

src_stamp=$(find CMakeLists.txt pyproject.toml cmake data include src python -type f -not -path '*/__pycache__/*' \
              -print0 | sort -z | xargs -0 sha1sum | sha1sum | cut -c1-40)
if [[ "$(cat .venv/.rldk-stamp 2>/dev/null)" != "$src_stamp" ]] || ! .venv/bin/rldk --version >/dev/null 2>&1; then
  echo "setup: building and installing rldk (pip install .)"
  # CXX: pip's build would take Python's own compiler name (g++); a plain cmake configure takes c++. ccache keys on
  # the name, so with the same name the release build reuses every engine object this build compiles.
  CXX=${CXX:-c++} CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)} \
    pip_quiet "^WARNING: Running pip as" install -q --no-build-isolation --no-deps . ||
    { echo "setup: building and installing rldk failed (its output is above)" >&2; exit 1; }
  .venv/bin/rldk --version >/dev/null || { echo "setup: rldk did not install" >&2; exit 1; }
  echo "$src_stamp" > .venv/.rldk-stamp
fi
echo "setup: ready ($(.venv/bin/rldk --version))"
