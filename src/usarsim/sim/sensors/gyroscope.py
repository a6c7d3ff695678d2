"""Gyroscope: angular rate about the sensor's axes (rad/s) with bandwidth and bias drift."""
from __future__ import annotations

from usarsim.sim.readings import GyroscopeReading
from usarsim.sim.sensors.inertial import InertialSensor
from usarsim.sim.sensors.registry import register


@register("Gyroscope")
class Gyroscope(InertialSensor):
    """Body rates of the link the sensor is mounted on, in the sensor frame."""

    def read(self, now: float) -> GyroscopeReading:
        rotation, _, angular = self.motion()
        return GyroscopeReading(angular_velocity=self.measure(rotation.T @ angular, now), variance=self.variance,
                                **self.header(now))
