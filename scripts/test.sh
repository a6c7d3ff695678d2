#!/usr/bin/env bash
# Install what is needed, then run the whole test suite (ROS tests included when
# the ROS bridge is installed). Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
# ROS installed by the bootstrap: a missing ROS piece is a failure, not a skip (test/ros/conftest.py)
if [ -f .venv/.usarsim-ros ]; then export USARSIM_EXPECT_ROS=1; fi
# lint and type check first (settings: ruff.toml, setup.cfg [mypy])
.venv/bin/python -m ruff check .
.venv/bin/python -m mypy
exec .venv/bin/python -m pytest -q "$@"
