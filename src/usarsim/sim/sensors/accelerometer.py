"""Accelerometer: specific force along the sensor's axes (m/s^2) with bandwidth and bias drift.

The acceleration is the change of the sensor's own velocity since the previous sample minus
gravity (``inertial.SpecificForceSensor``), so at rest the up axis reads +9.81.
"""
from __future__ import annotations

from usarsim.sim.readings import AccelerometerReading
from usarsim.sim.sensors.inertial import SpecificForceSensor
from usarsim.sim.sensors.registry import register


@register("Accelerometer")
class Accelerometer(SpecificForceSensor):
    """Three-axis accelerometer on the link it is mounted on."""

    def read(self, now: float) -> AccelerometerReading:
        specific, _ = self.specific_force(now)
        return AccelerometerReading(linear_acceleration=self.measure(specific, now),
                                    variance=self.variance, **self.header(now))
