"""Velocimeter: velocity over ground along the sensor's axes (m/s), e.g. a Doppler or optical-flow unit."""
from __future__ import annotations

from usarsim.sim.readings import VelocimeterReading
from usarsim.sim.sensors.inertial import InertialSensor
from usarsim.sim.sensors.registry import register


@register("Velocimeter")
class Velocimeter(InertialSensor):
    """Chassis velocity in the sensor frame."""

    def read(self, now: float) -> VelocimeterReading:
        velocity = self.rotation().T @ self.robot.base.linear_velocity
        return VelocimeterReading(linear_velocity=self.measure(velocity, now), variance=self.variance,
                                  **self.header(now))
