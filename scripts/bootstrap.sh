#!/usr/bin/env bash
# Create (or update) the project's virtual environment in .venv with everything
# the simulator, its ROS 2 bridge and its tests need. Idempotent.
#
# On a machine with a ROS 2 install (Jazzy/Kilted, `source /opt/ros/<distro>/setup.bash`
# first) the system rclpy and message packages are used; otherwise the ros-* wheels
# from the package index are installed (they are built for CPython 3.11).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${USARSIM_VENV:-.venv}

need_apt=()
pick_python() {
  # USARSIM_PYTHON picks the interpreter (e.g. python3.12); else 3.11, which the ros-* wheels are built for
  for candidate in ${USARSIM_PYTHON:-python3.11 python3}; do
    if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 10))'; then
      echo "$candidate"; return 0
    fi
  done
  return 1
}
PY=$(pick_python) || { echo "bootstrap: Python >= 3.10 is required" >&2; exit 1; }
"$PY" -c 'import venv, ensurepip' 2>/dev/null || need_apt+=(python3-venv)
command -v cmake >/dev/null 2>&1 || need_apt+=(cmake)
command -v g++ >/dev/null 2>&1 || need_apt+=(g++)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
  else
    echo "bootstrap: please install: ${need_apt[*]}" >&2; exit 1
  fi
fi

system_ros=0
if [ -n "${ROS_DISTRO:-}" ] && "$PY" -c 'import rclpy' 2>/dev/null; then system_ros=1; fi

if [ ! -x "$VENV/bin/python" ]; then
  if [ $system_ros = 1 ]; then "$PY" -m venv --system-site-packages "$VENV"; else "$PY" -m venv "$VENV"; fi
fi
PIP=("$VENV/bin/python" -m pip install -q --disable-pip-version-check)
extras="test"
if [ $system_ros = 0 ]; then
  if "$VENV/bin/python" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
    extras="test,ros"
  else
    echo "bootstrap: no ROS 2 install and Python is not 3.11: installing without the ROS bridge" >&2
  fi
fi
# PyBullet publishes wheels for a few CPython versions only (none for 3.12+ on most platforms): pip then
# compiles its source distribution, which needs a C++ compiler and the Python headers and takes minutes.
build_pybullet_if_no_wheel() {
  "$VENV/bin/python" -c 'import pybullet' 2>/dev/null && return 0
  local probe
  probe=$(mktemp -d)
  if "$VENV/bin/python" -m pip download -q --disable-pip-version-check --only-binary=:all: --no-deps \
      -d "$probe" "pybullet>=3.2.5" >/dev/null 2>&1; then
    rm -rf "$probe"; return 0
  fi
  rm -rf "$probe"
  local version headers
  version=$("$VENV/bin/python" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
  headers=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
  if [ ! -f "$headers/Python.h" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "python$version-dev" >/dev/null
    else
      echo "bootstrap: building PyBullet needs the Python $version headers: please install python$version-dev" >&2; exit 1
    fi
  fi
  echo "bootstrap: no PyBullet wheel for Python $version: building it from source (several minutes)" >&2
  "${PIP[@]}" --no-binary pybullet "pybullet>=3.2.5"
}
build_pybullet_if_no_wheel

stamp="$VENV/.usarsim-installed"
if [ ! -f "$stamp" ] || [ setup.py -nt "$stamp" ] || [ setup.cfg -nt "$stamp" ]; then
  "${PIP[@]}" -e ".[${extras}]"
  touch "$stamp"
fi
# The marker tells scripts/test.sh that the ROS tests must run here, not be skipped.
if [[ $extras == *ros* ]] || [ $system_ros = 1 ]; then
  scripts/build_ros_interfaces.sh "$VENV"
  touch "$VENV/.usarsim-ros"
else
  rm -f "$VENV/.usarsim-ros"
fi
