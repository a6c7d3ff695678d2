"""Inclinometer: roll and pitch of the sensor frame against gravity (rad, REP-103)."""
from __future__ import annotations

import numpy as np

from usarsim import rotations
from usarsim.sim.readings import InclinometerReading
from usarsim.sim.sensors.inertial import InertialSensor
from usarsim.sim.sensors.registry import register


@register("Inclinometer")
class Inclinometer(InertialSensor):
    """Two-axis tilt sensor; the filter and bias act on (roll, pitch, 0)."""

    def read(self, now: float) -> InclinometerReading:
        roll, pitch, _ = rotations.euler_from_matrix(self.rotation())
        measured = self.measure(np.array([roll, pitch, 0.0]), now)
        return InclinometerReading(roll=measured[0], pitch=measured[1], variance=self.variance, **self.header(now))
