"""Compass: heading to magnetic north and the magnetic field in the sensor frame.

The local field comes from the World Magnetic Model at the world's coordinates
(``geomagnetism``): the declination (magnetic north east of true north), the dip below the
horizon and the strength. A world's ``magnetic_declination`` and the sensor's ``inclination``
(rad) and ``field_strength`` (tesla) override the model where given. The heading is clockwise
from magnetic north (0..2 pi), with Gaussian noise ``sigma`` rad; each field component gets
``field_sigma`` tesla.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from typing import TYPE_CHECKING

import numpy as np

from usarsim.sim.readings import CompassReading
from usarsim.sim.sensors.base import CommonParams, Sensor
from usarsim.sim.sensors.geomagnetism import MagneticElements, magnetic_elements
from usarsim.sim.sensors.registry import register

if TYPE_CHECKING:
    from usarsim.sim.world import WorldSpec


@dataclass
class CompassParams(CommonParams):
    """Noise, and the local field where it should not be the geomagnetic model's (None: the model's)."""

    scan_interval: float = 0.1
    sigma: float = 0.0
    field_sigma: float = 0.0
    field_strength: float | None = None
    inclination: float | None = None


def local_field(world: "WorldSpec", params: CompassParams) -> MagneticElements:
    """The field a compass in ``world`` measures: the geomagnetic model's at the world's coordinates,
    with the world's declination and the sensor's dip and strength where they are given."""
    model = magnetic_elements(world.gps_origin)
    return MagneticElements(
        model.declination if world.magnetic_declination is None else world.magnetic_declination,
        model.inclination if params.inclination is None else params.inclination,
        model.strength if params.field_strength is None else params.field_strength)


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

    def on_spawned(self, now: float) -> None:
        super().on_spawned(now)
        self.local = local_field(self.env.world.spec, self.params)  # type: ignore[arg-type]

    def read(self, now: float) -> CompassReading:
        prm: CompassParams = self.params  # type: ignore[assignment]
        declination = self.local.declination
        rotation = self.robot.mount_pose(self.spec.mount)[1]
        noise = self.rng.standard_normal(4)
        heading = (magnetic_heading(rotation, declination) + prm.sigma * noise[0]) % (2.0 * math.pi)
        field = rotation.T @ magnetic_field(declination, self.local.inclination, self.local.strength)
        bx, by, bz = (field + prm.field_sigma * noise[1:]).tolist()
        return CompassReading(heading=heading, magnetic_field=(bx, by, bz), heading_variance=prm.sigma ** 2,
                              field_variance=prm.field_sigma ** 2, **self.header(now))
