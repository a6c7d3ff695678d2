#!/usr/bin/env bash
# Install what is needed, then run the whole test suite (ROS tests included when
# the ROS bridge is installed). Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
exec .venv/bin/python -m pytest -q "$@"
