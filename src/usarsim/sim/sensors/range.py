"""Range sensors: laser scanners (RangeScanner, IRScanner) and Sonar/IR rangers.

All rays of one reading are cast in a single batch (``raycast.ray_test``). IR variants
ignore transparent surfaces (glass) by re-casting the rays that hit them.
"""
from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from typing import Sequence, cast

import numpy as np

from usarsim.sim import noise
from usarsim.sim.raycast import beam_count, ray_test
from usarsim.sim.readings import RangeReading, RangeScan, Reading
from usarsim.sim.sensors.base import CommonParams, Sensor
from usarsim.sim.sensors.registry import register

# Rays start this far along their direction so a sensor on the chassis surface
# does not see its own robot.
RAY_START_OFFSET = 0.01
# Fields of a PyBullet ray result (body, link, fraction, position, normal) read for every ray.
_HIT_BODY, _HIT_FRACTION = operator.itemgetter(0), operator.itemgetter(2)


def cast_rays(client: int, origin: np.ndarray, directions: np.ndarray, max_range: float | np.ndarray,
              ignore: frozenset[int] = frozenset()) -> np.ndarray:
    """Distances (m) from ``origin`` along unit ``directions`` to the first hit, ``inf`` if none.

    ``origin`` and ``max_range`` may be per ray (arrays of N rows) so several sensors share
    one batch. Hits on bodies in ``ignore`` (e.g. glass for IR) are skipped by casting
    again from just past them.
    """
    origins = origin if np.shape(origin) == directions.shape else np.broadcast_to(origin, directions.shape)
    limits = np.asarray(max_range, dtype=float) if np.ndim(max_range) else np.full(len(directions), float(max_range))
    starts = origins + directions * RAY_START_OFFSET
    ends = origins + directions * limits[:, None]
    if not ignore:  # the common case: one pass, no book-keeping of rays still travelling
        bodies, hits = _first_hits(client, starts, ends, RAY_START_OFFSET, limits)
        return np.where(bodies >= 0, hits, np.inf)
    distances = np.full(len(directions), np.inf)
    pending = np.arange(len(directions))
    travelled = np.full(len(directions), RAY_START_OFFSET)
    for _ in range(4):  # at most a few transparent panes in a row
        bodies, hits = _first_hits(client, starts[pending], ends[pending], travelled[pending], limits[pending])
        through = np.isin(bodies, list(ignore))
        solid = (bodies >= 0) & ~through
        passed = pending[through]
        travelled[passed] = hits[through] + 0.005
        starts[passed] = origins[passed] + directions[passed] * travelled[passed][:, None]
        distances[pending[solid]] = hits[solid]
        pending = passed[travelled[passed] < limits[passed]]
        if not len(pending):
            break
    return distances


def _first_hits(client: int, starts: np.ndarray, ends: np.ndarray, travelled: float | np.ndarray,
                limits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(body hit or -1, distance of the hit from the ray's origin) of rays cast from ``starts``, which
    lie ``travelled`` along them, to ``ends`` at ``limits``; a miss has the limit as its distance."""
    results = ray_test(client, starts, ends)
    bodies = np.fromiter(map(_HIT_BODY, results), dtype=np.int64, count=len(results))
    fractions = np.fromiter(map(_HIT_FRACTION, results), dtype=float, count=len(results))
    return bodies, travelled + fractions * (limits - travelled)


@dataclass
class ScannerParams(CommonParams):
    """Laser scanner: defaults of a SICK LMS200 as USARSim configured it."""

    max_range: float = 20.0
    min_range: float = 0.0
    fov: float = math.pi
    resolution: float = 0.0174
    pitch_plane: bool = False  # bPitch: scan in the x-z plane


@register("RangeScanner", "IRScanner")
class LaserScanner(Sensor):
    """Planar laser. Beam 0 is the rightmost (-FOV/2), as in USARSim and REP-103 LaserScan."""

    Params = ScannerParams

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        prm: ScannerParams = self.params  # type: ignore[assignment]
        count = beam_count(prm.fov, prm.resolution)
        angles = -prm.fov / 2.0 + prm.resolution * np.arange(count)
        if prm.pitch_plane:
            self._local = np.stack([np.cos(angles), np.zeros(count), np.sin(angles)], axis=1)
        else:
            self._local = np.stack([np.cos(angles), np.sin(angles), np.zeros(count)], axis=1)
        self._curve = noise.curve_from_params(prm.output_curve, prm.max_range)
        self._transparent_passes = self.type_name == "IRScanner"

    def read(self, now: float) -> RangeScan:
        prm: ScannerParams = self.params  # type: ignore[assignment]
        origin, rot = self.robot.mount_pose(self.spec.mount)
        ignore = self.env.world.ray_ignore_ids if self._transparent_passes else frozenset()
        ranges = cast_rays(self.env.client, origin, self._local @ rot.T, prm.max_range, ignore)
        ranges = np.minimum(ranges, prm.max_range)
        ranges = noise.relative_uniform(ranges, prm.noise, self.rng)
        ranges = noise.gaussian(ranges, prm.mean, prm.sigma, self.rng)
        ranges = self._curve(np.clip(ranges, 0.0, prm.max_range))
        return RangeScan(**self.header(now), ranges=tuple(np.asarray(ranges, dtype=float).tolist()), angle_min=-prm.fov / 2.0,
                         angle_increment=prm.resolution, range_min=prm.min_range, range_max=prm.max_range,
                         scan_time=self.interval, sensor_type=self.type_name)


@dataclass
class RangerParams(CommonParams):
    """Sonar / IR: cone of ``beam_angle`` (sonar) or a single ray (IR)."""

    max_range: float = 5.0
    min_range: float = 0.0
    beam_angle: float = 0.3491
    # The cone is flattened vertically so a sonar at chassis height does not
    # report the floor inside its 5 m range (USARSim's sonar did not either).
    vertical_beam_angle: float = 0.0873
    noise: float = 0.05
    with_timestamp: bool = True


def cone_directions(beam_angle: float, vertical_beam_angle: float, rays_per_ring: int = 8) -> np.ndarray:
    """Unit rays of a sonar cone: the axis plus two elliptical rings at 1/2 and 1 of the half-angles."""
    dirs = [(1.0, 0.0, 0.0)]
    for scale in (0.5, 1.0):
        for k in range(rays_per_ring):
            phi = 2.0 * math.pi * k / rays_per_ring
            yaw = scale * beam_angle / 2.0 * math.cos(phi)
            pitch = scale * vertical_beam_angle / 2.0 * math.sin(phi)
            dirs.append((math.cos(pitch) * math.cos(yaw), math.cos(pitch) * math.sin(yaw), math.sin(pitch)))
    return np.array(dirs)


@register("Sonar", "IR")
class Ranger(Sensor):
    """Single-range sensor; the nearest hit inside the cone wins, no hit gives max_range."""

    Params = RangerParams
    batchable = True

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        prm: RangerParams = self.params  # type: ignore[assignment]
        self._is_ir = self.type_name == "IR"
        self._local = np.array([[1.0, 0.0, 0.0]]) if self._is_ir else cone_directions(prm.beam_angle, prm.vertical_beam_angle)
        self._curve = noise.curve_from_params(prm.output_curve, prm.max_range)
        self._limits = np.full(len(self._local), prm.max_range)
        self._chassis: tuple[np.ndarray, np.ndarray] | None = None  # set on spawning, when the links exist

    def _rays(self) -> tuple[np.ndarray, np.ndarray]:
        origin, rot = self.robot.mount_pose(self.spec.mount)
        return origin, self._local @ rot.T

    def _ignore(self) -> frozenset[int]:
        return self.env.world.ray_ignore_ids if self._is_ir else frozenset()

    def read(self, now: float) -> RangeReading:
        prm: RangerParams = self.params  # type: ignore[assignment]
        origin, directions = self._rays()
        distances = cast_rays(self.env.client, origin, directions, prm.max_range, self._ignore())
        return self._reading(now, float(distances.min()))

    @classmethod
    def sample_batch(cls, sensors: Sequence[Sensor], now: float) -> list[Reading]:
        """All due sonars/IRs of a robot in one ray batch per ignore set (a P2AT has 16)."""
        out: list[Reading] = []
        by_ignore: dict[frozenset[int], list[Ranger]] = {}
        # the robot batches sensors by class, so every one here is a Ranger
        for ranger in cast(Sequence[Ranger], sensors):
            ranger.mark_sampled(now)
            by_ignore.setdefault(ranger._ignore(), []).append(ranger)
        for ignore, group in by_ignore.items():
            origins, directions = _batch_rays(group)
            limits = np.concatenate([r._limits for r in group])
            distances = cast_rays(group[0].env.client, origins, directions, limits, ignore)
            firsts = np.cumsum([0] + [len(r._local) for r in group[:-1]])  # each ranger's first ray
            nearest = np.minimum.reduceat(distances, firsts).tolist()
            out.extend(ranger._reading(now, d) for ranger, d in zip(group, nearest))
        return out

    def on_spawned(self, now: float) -> None:
        super().on_spawned(now)
        # (ray origins, directions) in the base_link frame, one row per ray; None on a moving link
        mount = self.robot.chassis_mount(self.spec.mount)
        self._chassis = None if mount is None else (np.tile(mount[0], (len(self._local), 1)), self._local @ mount[1].T)

    def _reading(self, now: float, nearest: float) -> RangeReading:
        """The reading of the cone's nearest hit (inf for none), with noise and output curve."""
        prm: RangerParams = self.params  # type: ignore[assignment]
        value = min(nearest, prm.max_range)
        value = noise.relative_uniform(value, prm.noise, self.rng)
        value = float(self._curve(min(max(value, 0.0), prm.max_range)))
        return RangeReading(**self.header(now), range=value, range_min=prm.min_range, range_max=prm.max_range,
                            field_of_view=0.01 if self._is_ir else prm.beam_angle, sensor_type=self.type_name)


def _batch_rays(group: Sequence[Ranger]) -> tuple[np.ndarray, np.ndarray]:
    """World ray origins and directions of one robot's rangers, stacked in the group's order.

    Rangers fixed to the chassis (all of a P2AT's sonars) are placed with one transform for the
    whole group; any on a moving link are placed one by one.
    """
    local = [r._chassis for r in group]
    if all(rays is not None for rays in local):
        origin, rotation = group[0].robot.chassis_pose()
        starts = np.concatenate([rays[0] for rays in local if rays is not None])
        directions = np.concatenate([rays[1] for rays in local if rays is not None])
        return origin + starts @ rotation.T, directions @ rotation.T
    rays = [r._rays() for r in group]
    origins = np.repeat(np.array([o for o, _ in rays]), [len(d) for _, d in rays], axis=0)
    return origins, np.concatenate([d for _, d in rays])
