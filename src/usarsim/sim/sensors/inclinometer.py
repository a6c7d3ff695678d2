"""Inclinometer: roll and pitch of the sensor frame against the sensed gravity (rad, REP-103).

A real inclinometer (a pendulum, an electrolytic bubble or a MEMS accelerometer pair) finds "down"
from the specific force its proof mass feels, so it reads the true tilt only at rest or at constant
velocity: braking at b m/s^2 on the flat it reads a nose-down pitch of atan(b / g), accelerating a
nose-up one, and in a steady turn it leans out of the turn. Roll = atan2(f_y, f_z), pitch =
atan2(-f_x, sqrt(f_y^2 + f_z^2)) of the sensor-frame specific force f (``inertial.SpecificForceSensor``).
"""
from __future__ import annotations

import math

import numpy as np

from usarsim.sim.readings import InclinometerReading
from usarsim.sim.sensors.inertial import SpecificForceSensor
from usarsim.sim.sensors.registry import register


def tilt_from_specific_force(force: np.ndarray) -> tuple[float, float]:
    """(roll, pitch) rad (REP-103: roll + right side down, pitch + nose down) of the frame in which the
    specific force ``force`` (m/s^2, the reaction to gravity plus acceleration) is measured."""
    fx, fy, fz = (float(v) for v in force)
    return math.atan2(fy, fz), math.atan2(-fx, math.hypot(fy, fz))


@register("Inclinometer")
class Inclinometer(SpecificForceSensor):
    """Two-axis tilt sensor referenced to the sensed gravity; the filter and bias act on (roll, pitch, 0)."""

    def read(self, now: float) -> InclinometerReading:
        specific, _ = self.specific_force(now)
        roll, pitch = tilt_from_specific_force(specific)
        measured = self.measure(np.array([roll, pitch, 0.0]), now)
        return InclinometerReading(roll=measured[0], pitch=measured[1], variance=self.variance, **self.header(now))
