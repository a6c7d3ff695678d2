"""Inclinometer: roll and pitch of the sensor frame against gravity (rad, REP-103)."""
from __future__ import annotations

import math

import numpy as np

from usarsim.sim.readings import InclinometerReading
from usarsim.sim.sensors.inertial import InertialSensor
from usarsim.sim.sensors.registry import register


def roll_pitch(rotation: np.ndarray) -> tuple[float, float]:
    """(roll, pitch) of a frame whose rotation in the world is ``rotation`` (z-y-x Euler angles)."""
    r20, r21, r22 = rotation[2].tolist()
    return math.atan2(r21, r22), math.atan2(-r20, math.hypot(r21, r22))


@register("Inclinometer")
class Inclinometer(InertialSensor):
    """Two-axis tilt sensor; the filter and bias act on (roll, pitch, 0)."""

    def read(self, now: float) -> InclinometerReading:
        roll, pitch = roll_pitch(self.rotation())
        measured = self.measure(np.array([roll, pitch, 0.0]), now)
        return InclinometerReading(roll=measured[0], pitch=measured[1], variance=self.variance, **self.header(now))
