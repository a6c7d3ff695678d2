"""Example controllers for sweep files (``controller: usarsim.scale.examples:wander``)."""
from __future__ import annotations

import functools
import math
import random

from usarsim.scale.controllers import ControlStep
from usarsim.sim.readings import RangeScan

CRUISE = 2.0  # rad/s wheel spin going straight
TURN = 1.5  # rad/s wheel spin turning on the spot
CLEARANCE = 0.8  # m: turn away when anything is closer ahead


OPENING_TURN_MAX = 2.0  # s: longest turn on the spot a trial starts with


@functools.lru_cache(maxsize=64)
def opening_turn(seed: int) -> tuple[float, tuple[float, float]]:
    """(seconds, wheel speeds) of the turn on the spot a trial of ``seed`` starts with.

    Each seed sets off in its own heading, so trials of different seeds explore different parts of
    an arena (the sensor noise a seed also changes is too small to change a reactive path).
    """
    rng = random.Random(seed)
    seconds = rng.uniform(0.0, OPENING_TURN_MAX)
    return seconds, ((-TURN, TURN) if rng.random() < 0.5 else (TURN, -TURN))


def wander(step: ControlStep) -> tuple[float, float] | None:
    """Turn on the spot to a heading the seed picks; then drive straight, turning on the spot toward
    the freer side when the laser sees something close ahead.

    After the opening turn it keeps the last command until a laser scan arrives (returns None).
    """
    seconds, turn = opening_turn(step.seed)
    if step.time < seconds:
        return turn
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
