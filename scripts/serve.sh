#!/usr/bin/env bash
# Install what the simulator needs (nothing of ROS: scripts/bootstrap.sh --ros adds the bridge),
# then run its main job: the USARSim protocol server (TCP 127.0.0.1:3000, images on 5003) on the
# default arena. Extra arguments go to `usarsim serve` (e.g. --world red --pacing fast).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
exec .venv/bin/usarsim serve "$@"
