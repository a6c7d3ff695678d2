"""Compass: heading to magnetic north and the magnetic field in the sensor frame.

The world gives the declination (``magnetic_declination``, rad, magnetic north east of
true north); the field has ``field_strength`` tesla and dips ``inclination`` rad below the
horizon. The heading is clockwise from magnetic north (0..2 pi), with Gaussian noise
``sigma`` rad; each field component gets ``field_sigma`` tesla.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from usarsim.sim.readings import CompassReading
from usarsim.sim.sensors.base import CommonParams, Sensor
from usarsim.sim.sensors.registry import register


@dataclass
class CompassParams(CommonParams):
    """Noise and the local field (50 uT, 60 deg dip: mid-latitude Europe)."""

    scan_interval: float = 0.1
    sigma: float = 0.0
    field_sigma: float = 0.0
    field_strength: float = 5.0e-5
    inclination: float = math.radians(60.0)


def magnetic_field(declination: float, inclination: float, strength: float) -> np.ndarray:
    """World-frame field (x north, y west, z up): horizontal part toward magnetic north, dipping down."""
    horizontal = np.array([math.cos(declination), -math.sin(declination), 0.0])
    return strength * (math.cos(inclination) * horizontal + np.array([0.0, 0.0, -math.sin(inclination)]))


def magnetic_heading(rotation: np.ndarray, declination: float) -> float:
    """Clockwise angle (0..2 pi) from magnetic north to the sensor's x axis projected on the horizon."""
    forward = rotation[:, 0]
    bearing = math.atan2(-forward[1], forward[0])  # clockwise from true north (east = -y)
    return (bearing - declination) % (2.0 * math.pi)


@register("Compass")
class Compass(Sensor):
    """Heading and field of the sensor frame."""

    Params = CompassParams

    def read(self, now: float) -> CompassReading:
        prm: CompassParams = self.params  # type: ignore[assignment]
        declination = self.env.world.spec.magnetic_declination
        rotation = self.robot.mount_pose(self.spec.mount)[1]
        noise = self.rng.standard_normal(4)
        heading = (magnetic_heading(rotation, declination) + prm.sigma * noise[0]) % (2.0 * math.pi)
        field = rotation.T @ magnetic_field(declination, prm.inclination, prm.field_strength)
        bx, by, bz = (field + prm.field_sigma * noise[1:]).tolist()
        return CompassReading(heading=heading, magnetic_field=(bx, by, bz), heading_variance=prm.sigma ** 2,
                              field_variance=prm.field_sigma ** 2, **self.header(now))
