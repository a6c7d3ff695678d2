"""Depth gauge: depth below the surface of the water the sensor is in, and the pressure there."""
from __future__ import annotations

from dataclasses import dataclass

from usarsim.sim.readings import DepthReading
from usarsim.sim.sensors.base import CommonParams, Sensor
from usarsim.sim.sensors.registry import register


@dataclass
class DepthParams(CommonParams):
    """Sample interval and Gaussian noise (m)."""

    scan_interval: float = 0.2
    sigma: float = 0.0


@register("Depth")
class DepthGauge(Sensor):
    """Pressure-based depth: 0 out of the water (and above it); the pressure is rho g times the depth."""

    Params = DepthParams

    def read(self, now: float) -> DepthReading:
        prm: DepthParams = self.params  # type: ignore[assignment]
        position = self.robot.mount_pose(self.spec.mount)[0]
        water = self.env.world.water
        volume = water.at(position)
        depth = max(0.0, water.depth(position) or 0.0)
        weight = volume.density * abs(self.env.gravity) if volume is not None else 0.0  # rho g, Pa per m
        measured = depth + prm.sigma * float(self.rng.standard_normal()) if depth > 0 else 0.0
        return DepthReading(depth=measured, variance=prm.sigma ** 2, pressure_per_metre=weight, **self.header(now))
