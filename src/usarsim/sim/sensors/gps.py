"""GPS: geodetic fix from the world's reference point, satellites by line of sight (sensors.md §6).

A seeded constellation of satellites above 5 deg elevation; each is visible
when a long ray from the antenna toward it hits nothing. Indoor worlds
(``outdoor: false``) have a roof: no satellites. Fix needs >= 4 satellites;
the position noise is maxNoise/3 at 4 satellites and minNoise/3 at 12.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pymap3d

from usarsim.sim import noise
from usarsim.sim.readings import GpsReading
from usarsim.sim.sensors.base import CommonParams, Sensor
from usarsim.sim.sensors.range import cast_rays
from usarsim.sim.sensors.registry import register

SKY_RAY_LENGTH = 1000.0
MAX_TRACKED = 12


@dataclass
class GpsParams(CommonParams):
    """USARBot.GPSSensor keys (metres) and the synthetic constellation size."""

    scan_interval: float = 1.0
    max_noise: float = 10.0
    min_noise: float = 1.5
    constellation: int = 16
    min_elevation: float = math.radians(5.0)


def world_to_geodetic(position: np.ndarray, origin: tuple[float, float, float]) -> tuple[float, float, float]:
    """Core world (x north, y west, z up) metres -> (lat, lon, alt) around ``origin`` (deg, deg, m)."""
    east, north, up = -position[1], position[0], position[2]
    lat, lon, alt = pymap3d.enu2geodetic(east, north, up, origin[0], origin[1], origin[2])
    return float(lat), float(lon), float(alt)


@register("GPS")
class Gps(Sensor):
    """NMEA-GGA-like fix with satellite count."""

    Params = GpsParams

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        prm: GpsParams = self.params  # type: ignore[assignment]
        sky = self.layout_rng  # the constellation is the world's, not the receiver's error
        azimuth = sky.uniform(0.0, 2.0 * math.pi, prm.constellation)
        elevation = np.arcsin(sky.uniform(math.sin(prm.min_elevation), 1.0, prm.constellation))
        # directions in the core world frame (x north, y west, z up); azimuth clockwise from north
        self._sky = np.stack([np.cos(elevation) * np.cos(azimuth), -np.cos(elevation) * np.sin(azimuth),
                              np.sin(elevation)], axis=1)

    def visible_satellites(self, antenna: np.ndarray) -> int:
        """Number of satellites with a clear line of sight (0 under a roof)."""
        if not self.env.world.spec.outdoor:
            return 0
        hits = cast_rays(self.env.client, antenna, self._sky, SKY_RAY_LENGTH)
        return min(MAX_TRACKED, int(np.sum(np.isinf(hits))))

    def read(self, now: float) -> GpsReading:
        prm: GpsParams = self.params  # type: ignore[assignment]
        antenna, _ = self.robot.mount_pose(self.spec.mount)
        satellites = self.visible_satellites(antenna)
        sigma = noise.gps_sigma(max(satellites, 4), prm.max_noise, prm.min_noise)
        noisy = antenna + np.array([*self.rng.normal(0.0, sigma, 2), 0.0])
        origin = self.env.world.spec.gps_origin
        assert origin is not None  # the loader sets it for every world
        lat, lon, alt = world_to_geodetic(noisy, (origin.lat, origin.lon, origin.alt))
        return GpsReading(**self.header(now), latitude=lat, longitude=lon, altitude=alt, fix=satellites >= 4,
                          satellites=satellites, horizontal_sigma=sigma)
