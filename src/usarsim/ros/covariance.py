"""Covariance arrays of ROS messages (row-major), and the conventions for what a sensor does not measure."""
from __future__ import annotations

import array
from typing import Sequence

# Variance reported for a dimension a sensor does not measure (e.g. z, roll, pitch of 2-D odometry).
UNMEASURED = 1e6


def diagonal(values: Sequence[float]) -> array.array:
    """n x n covariance with ``values`` (n of them) on the diagonal."""
    n = len(values)
    cov = [0.0] * (n * n)
    for i, v in enumerate(values):
        cov[i * (n + 1)] = float(v)
    return array.array("d", cov)


def diag3(value: float) -> array.array:
    """3x3 covariance with the same ``value`` on each axis."""
    return diagonal((value, value, value))


def absent() -> array.array:
    """A covariance marking its Imu part as not measured (REP-145: -1 in its first element)."""
    return array.array("d", (-1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0))


__all__ = ["UNMEASURED", "absent", "diag3", "diagonal"]
