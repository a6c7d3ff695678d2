"""3-D laser (RangeScanner3D, alias RangeImager): a grid of rays giving a point cloud.

USARSim names a RangeScanner3D without describing it (spec sensors.md §4),
so this is our model: the ray grid of the victim sensor
(``horizontal_fov``/``horizontal_step`` by ``vertical_fov``/``vertical_step``)
with the noise, clamp and output curve of the 2-D scanner, all rays of a
scan in one batch. Row r (elevation -vfov/2 + r*vstep, bottom to top) holds
columns c (azimuth -hfov/2 + c*hstep, right to left), so every row reads
like a 2-D scan. A beam that hits nothing reports ``max_range`` and its
point lies at ``max_range`` along the beam.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from usarsim.sim import noise
from usarsim.sim.readings import PointCloudReading
from usarsim.sim.sensors.base import CommonParams, Sensor
from usarsim.sim.sensors.ray_grid import check_grid, grid_directions
from usarsim.sim.sensors.registry import register
from usarsim.sim.sensors.sight import cast_hits

RAY_START_OFFSET = 0.01


@dataclass
class Scanner3DParams(CommonParams):
    """Grid, range and rate of the 3-D scanner (metres, radians, seconds)."""

    scan_interval: float = 1.0
    max_range: float = 20.0
    min_range: float = 0.0
    # 181 x 16 rays: PyBullet needs 5-7 us per ray in an arena, so the default grid stays modest
    horizontal_fov: float = math.pi
    horizontal_step: float = math.radians(1.0)
    vertical_fov: float = math.radians(30.0)
    vertical_step: float = math.radians(2.0)
    transparent_passes: bool = False  # IR-style beams that go through glass

    def check(self) -> None:
        super().check()
        if self.max_range <= 0:
            raise ValueError("max_range must be positive")
        check_grid(self)


@register("RangeScanner3D", "RangeImager")
class RangeScanner3D(Sensor):
    """Point cloud in the sensor frame (FLU) from one ray batch per scan."""

    Params = Scanner3DParams

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        prm: Scanner3DParams = self.params  # type: ignore[assignment]
        self._local, self.rows, self.columns = grid_directions(prm)
        self._curve = noise.curve_from_params(prm.output_curve, prm.max_range)

    def read(self, now: float) -> PointCloudReading:
        prm: Scanner3DParams = self.params  # type: ignore[assignment]
        origin, rot = self.robot.mount_pose(self.spec.mount)
        directions = self._local @ rot.T
        ignore = self.env.world.ray_ignore_ids if prm.transparent_passes else frozenset()
        hits = cast_hits(self.env.client, origin + directions * RAY_START_OFFSET, origin + directions * prm.max_range,
                         ignore)
        ranges = np.minimum(hits.distance + RAY_START_OFFSET, prm.max_range)
        ranges = noise.relative_uniform(ranges, prm.noise, self.rng)
        ranges = noise.gaussian(ranges, prm.mean, prm.sigma, self.rng)
        ranges = np.asarray(self._curve(np.clip(ranges, 0.0, prm.max_range)), dtype=float)
        points = self._local * ranges[:, None]
        return PointCloudReading(**self.header(now), points=tuple(map(tuple, points.tolist())),
                                 ranges=tuple(ranges.tolist()), horizontal_fov=prm.horizontal_fov,
                                 vertical_fov=prm.vertical_fov, horizontal_resolution=prm.horizontal_step,
                                 vertical_resolution=prm.vertical_step, range_max=prm.max_range,
                                 rows=self.rows, columns=self.columns)
