#!/usr/bin/env bash
# Create (or update) the project's virtual environment in .venv. Idempotent: a second run
# checks and returns in about a second.
#
#   scripts/bootstrap.sh           the simulator and its protocol server only (what serve.sh needs)
#   scripts/bootstrap.sh --ros     + the ROS 2 bridge (rclpy and the message packages, and the
#                                    interface packages built locally where they are missing)
#   scripts/bootstrap.sh --test    + what the test suite needs (implies --ros where ROS can be had)
#
# On a machine with a ROS 2 install (Jazzy/Kilted, `source /opt/ros/<distro>/setup.bash`
# first) the system rclpy and message packages are used; otherwise the ros-* wheels
# from the package index are installed (they are built for CPython 3.11). docs/building.md.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${USARSIM_VENV:-.venv}
want_ros=0
want_test=0
for arg in "$@"; do
  case $arg in
    --ros) want_ros=1 ;;
    --test) want_test=1; want_ros=1 ;;
    *) echo "bootstrap: unknown option $arg (use --ros, --test)" >&2; exit 2 ;;
  esac
done
say() { echo "bootstrap: $*" >&2; }
started=$SECONDS

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
PY=$(pick_python) || { say "Python >= 3.10 is required"; exit 1; }
"$PY" -c 'import venv, ensurepip' 2>/dev/null || need_apt+=(python3-venv)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "installing ${need_apt[*]} (apt-get)"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
  else
    say "please install: ${need_apt[*]}"; exit 1
  fi
fi

system_ros=0
if [ -n "${ROS_DISTRO:-}" ] && "$PY" -c 'import rclpy' 2>/dev/null; then system_ros=1; fi

if [ ! -x "$VENV/bin/python" ]; then
  say "creating the virtual environment $VENV ($PY)"
  if [ $system_ros = 1 ]; then "$PY" -m venv --system-site-packages "$VENV"; else "$PY" -m venv "$VENV"; fi
fi
PIP=("$VENV/bin/python" -m pip install -q --disable-pip-version-check)

extras=()
[ $want_test = 1 ] && extras+=(test)
if [ $want_ros = 1 ] && [ $system_ros = 0 ]; then
  if "$VENV/bin/python" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
    extras+=(ros)
  else
    say "no ROS 2 install and Python is not 3.11: installing without the ROS bridge"
    want_ros=0
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
  if [ ! -f "$headers/Python.h" ] || ! command -v g++ >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq g++ "python$version-dev" >/dev/null
    else
      say "building PyBullet needs g++ and the Python $version headers: please install g++ python$version-dev"; exit 1
    fi
  fi
  say "no PyBullet wheel for Python $version: building it from source (several minutes)"
  "${PIP[@]}" --no-binary pybullet "pybullet>=3.2.5"
}
build_pybullet_if_no_wheel

# The stamp records which extras are installed, so serve.sh's venv grows into the test one on demand.
stamp="$VENV/.usarsim-installed"
have=$(cat "$stamp" 2>/dev/null || true)
missing=0
for extra in "${extras[@]}"; do
  [[ " $have " == *" $extra "* ]] || missing=1
done
if [ ! -f "$stamp" ] || [ $missing = 1 ] || [ setup.py -nt "$stamp" ] || [ setup.cfg -nt "$stamp" ]; then
  # installed extras stay installed: the union of what was there and what is asked for
  read -r -a union <<<"$(printf '%s\n' $have "${extras[@]}" | sort -u | tr '\n' ' ')"
  spec="."
  [ ${#union[@]} -gt 0 ] && spec=".[$(IFS=,; echo "${union[*]}")]"
  say "installing usarsim${spec#.} and its dependencies from the package index (PyBullet, NumPy, SciPy, ...)"
  "${PIP[@]}" -e "$spec"
  echo "${union[*]}" >"$stamp"
fi
# The marker tells scripts/test.sh that the ROS tests must run here, not be skipped.
if [ $want_ros = 1 ]; then
  if ! command -v cmake >/dev/null 2>&1 || ! command -v g++ >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      say "installing cmake and g++ (apt-get) for the ROS interface packages"
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cmake g++ >/dev/null
    fi
  fi
  scripts/build_ros_interfaces.sh "$VENV"
  touch "$VENV/.usarsim-ros"
fi
[ $((SECONDS - started)) -ge 5 ] && say "ready in $((SECONDS - started)) s"
exit 0
