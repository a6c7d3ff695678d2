"""Velocimeter: velocity over ground along the sensor's axes (m/s), e.g. a Doppler or optical-flow unit."""
from __future__ import annotations

from usarsim.sim.readings import VelocimeterReading
from usarsim.sim.sensors.inertial import InertialSensor
from usarsim.sim.sensors.registry import register


@register("Velocimeter")
class Velocimeter(InertialSensor):
    """Velocity of the sensor itself (its link's motion at the mount point), in the sensor frame."""

    def read(self, now: float) -> VelocimeterReading:
        rotation, velocity, _ = self.motion()
        return VelocimeterReading(linear_velocity=self.measure(rotation.T @ velocity, now), variance=self.variance,
                                  **self.header(now))
