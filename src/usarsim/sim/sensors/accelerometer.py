"""Accelerometer: specific force along the sensor's axes (m/s^2) with bandwidth and bias drift.

The acceleration is the change of the sensor's own velocity (its link's motion at the mount
point) since the previous sample, a box average over the sample interval, minus gravity, so
at rest the up axis reads +9.81.
"""
from __future__ import annotations

import numpy as np

from usarsim.sim.readings import AccelerometerReading
from usarsim.sim.sensors.inertial import InertialSensor
from usarsim.sim.sensors.registry import register


@register("Accelerometer")
class Accelerometer(InertialSensor):
    """Three-axis accelerometer on the link it is mounted on."""

    def on_spawned(self, now: float) -> None:
        super().on_spawned(now)
        self._previous = self.motion()[1]

    def read(self, now: float) -> AccelerometerReading:
        dt = now - self.last_time
        rotation, velocity, _ = self.motion()
        acceleration = (velocity - self._previous) / dt if dt > 0 else np.zeros(3)
        self._previous = velocity
        specific = acceleration - np.array([0.0, 0.0, self.env.gravity])
        return AccelerometerReading(linear_acceleration=self.measure(rotation.T @ specific, now),
                                    variance=self.variance, **self.header(now))
