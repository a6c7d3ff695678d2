#!/usr/bin/env bash
# Install what the tests need, lint and type-check, then run the tests on every core.
#
#   scripts/test.sh           the quick set: every test but those marked `slow` (pytest.ini)
#   scripts/test.sh --full    every test, slow ones included (what CI runs; CI=true does the same)
#
# Other arguments go to pytest (e.g. -k protocol, -x, -n 1 for one worker). docs/building.md.
set -euo pipefail
cd "$(dirname "$0")/.."
full=0
[ "${CI:-}" = true ] && full=1
args=()
for arg in "$@"; do
  if [ "$arg" = --full ]; then full=1; else args+=("$arg"); fi
done
scripts/bootstrap.sh --test
# ROS installed by the bootstrap: a missing ROS piece is a failure, not a skip (test/ros/conftest.py)
if [ -f .venv/.usarsim-ros ]; then export USARSIM_EXPECT_ROS=1; fi
# lint and type check first (settings: ruff.toml, setup.cfg [mypy])
echo "test: ruff, mypy" >&2
.venv/bin/python -m ruff check .
.venv/bin/python -m mypy
select=(-m "not slow")
[ $full = 1 ] && select=()
# One worker per core; a test file's tests stay on one worker (they share its module fixtures).
workers=$(nproc 2>/dev/null || echo 1)
echo "test: pytest on $workers workers ($([ $full = 1 ] && echo 'every test' || echo 'quick set; --full for every test'))" >&2
exec .venv/bin/python -m pytest -q -n "$workers" --dist loadfile "${select[@]}" "${args[@]}"
