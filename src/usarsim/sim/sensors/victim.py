"""Victim sensor (VictSensor): body parts hit by a grid of rays (spec sensors.md §13).

The sensor casts ``horizontal_fov / horizontal_step + 1`` by
``vertical_fov / vertical_step + 1`` rays up to ``distance`` m in one batch
and reports every ray that ends on a victim part (Head, Arm, Hand, Chest,
Pelvis, Leg, Foot). False-alarm objects expose the same part names and are
reported the same way. Positions are the hit points in the sensor frame
(FLU), plus Gaussian N(mean, sigma) per coordinate.

Decisions where the sources are silent: rays pass through transparent
bodies (the sensor sits on a camera, which sees through glass); one entry
per ray unless ``dedupe`` keeps only the closest hit per (victim, part);
``p_detect`` drops each hit with probability 1 - p_detect (default 1).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from usarsim import rotations
from usarsim.sim.readings import VictimPartSeen, VictimReading
from usarsim.sim.sensors.base import CommonParams, Sensor
from usarsim.sim.sensors.ray_grid import check_grid, grid_directions
from usarsim.sim.sensors.registry import register
from usarsim.sim.sensors.sight import cast_hits

# Rays start this far out so the camera housing the sensor sits on is not hit.
RAY_START_OFFSET = 0.01


@dataclass
class VictimParams(CommonParams):
    """USARBot.VictSensor keys (metres, radians)."""

    with_timestamp: bool = True
    distance: float = 6.0
    horizontal_fov: float = 0.6981317
    horizontal_step: float = 0.0698131
    vertical_fov: float = 0.6981317
    vertical_step: float = 0.0698131
    sigma: float = 0.01  # m, per reported coordinate
    dedupe: bool = False
    p_detect: float = 1.0

    def check(self) -> None:
        super().check()
        if self.distance <= 0:
            raise ValueError("distance must be positive")
        if not 0.0 <= self.p_detect <= 1.0:
            raise ValueError("p_detect must be within [0, 1]")
        check_grid(self)


@register("VictSensor")
class VictimSensor(Sensor):
    """Reports the victim and false-alarm parts its rays hit; cannot tell them apart."""

    Params = VictimParams

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        prm: VictimParams = self.params  # type: ignore[assignment]
        self._local, self.rows, self.columns = grid_directions(prm)

    def read(self, now: float) -> VictimReading:
        prm: VictimParams = self.params  # type: ignore[assignment]
        world = self.env.world
        if not world.victims:
            return VictimReading(**self.header(now), parts=())
        origin, rot = self.robot.mount_pose(self.spec.mount)
        directions = self._local @ rot.T
        hits = cast_hits(self.env.client, origin + directions * RAY_START_OFFSET, origin + directions * prm.distance,
                         world.ray_ignore_ids)
        found: list[tuple[float, VictimPartSeen]] = []
        for i in np.flatnonzero(hits.body >= 0):
            owner = world.victim_part_at(int(hits.body[i]), int(hits.link[i]))
            if owner is None:
                continue
            victim, part = owner
            local = rot.T @ (hits.point[i] - origin)
            found.append((float(hits.distance[i]), VictimPartSeen(part=part, position=tuple(local), victim_id=victim.id)))
        if prm.dedupe:
            closest: dict[tuple[str, str], tuple[float, VictimPartSeen]] = {}
            for dist, seen in found:
                key = (seen.victim_id, seen.part)
                if key not in closest or dist < closest[key][0]:
                    closest[key] = (dist, seen)
            found = sorted(closest.values(), key=lambda item: item[0])
        parts = [seen for _, seen in found]
        if prm.p_detect < 1.0 and parts:
            keep = self.rng.random(len(parts)) < prm.p_detect
            parts = [seen for seen, k in zip(parts, keep) if k]
        if parts and (prm.sigma > 0 or prm.mean != 0):
            noise = self.rng.normal(prm.mean, max(prm.sigma, 0.0), size=(len(parts), 3))
            parts = [VictimPartSeen(part=s.part, position=rotations.vec3(np.add(s.position, n)),
                                    victim_id=s.victim_id) for s, n in zip(parts, noise)]
        else:
            parts = [VictimPartSeen(part=s.part, position=rotations.vec3(s.position), victim_id=s.victim_id)
                     for s in parts]
        return VictimReading(**self.header(now), parts=tuple(parts))
