"""Example controllers for sweep files (``controller: usarsim.scale.examples:wander``)."""
from __future__ import annotations

import math

from usarsim.scale.controllers import ControlStep
from usarsim.sim.readings import RangeScan

CRUISE = 2.0  # rad/s wheel spin going straight
TURN = 1.5  # rad/s wheel spin turning on the spot
CLEARANCE = 0.8  # m: turn away when anything is closer ahead


def wander(step: ControlStep) -> tuple[float, float] | None:
    """Drive straight; turn on the spot toward the freer side when the laser sees something close ahead.

    Keeps the last command until a laser scan arrives (returns None), so it is purely reactive.
    """
    scans = [r for r in step.readings if isinstance(r, RangeScan)]
    if not scans:
        return None if step.time > 0 else (CRUISE, CRUISE)
    scan = scans[-1]
    ahead = left = right = math.inf
    for i, distance in enumerate(scan.ranges):
        bearing = scan.angle_min + i * scan.angle_increment
        if abs(bearing) < math.radians(30):
            ahead = min(ahead, distance)
        elif bearing > 0:
            left = min(left, distance)
        else:
            right = min(right, distance)
    if ahead > CLEARANCE:
        return (CRUISE, CRUISE)
    return (-TURN, TURN) if left >= right else (TURN, -TURN)


def fail(step: ControlStep) -> None:
    """A controller that raises: shows how a failed trial is recorded."""
    raise RuntimeError(f"controller failed on purpose at t={step.time:.1f}s")
