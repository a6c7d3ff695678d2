"""What a trial measured: distance driven, collisions, victims detected, area the laser covered.

``TrialMetrics`` is a simulator listener (it sees each tick's readings while the world is still at
that tick, so laser beams are projected from the exact sensor pose) plus a ``sample`` called at
every control step for the ground-truth path and contacts.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pybullet as p

from usarsim.sim.readings import RangeScan, Reading, VictimReading
from usarsim.sim.robot import Robot
from usarsim.sim.simulator import Simulator

COVERAGE_CELL = 0.1  # m: side of a coverage cell
# A contact whose normal is steeper than this carries the robot (floor, ramp, stairs tread): not a collision.
SUPPORT_NORMAL_Z = 0.7


class CoverageGrid:
    """Cells of the ground plane seen by laser beams (free space along a beam, and its hit)."""

    def __init__(self, cell: float = COVERAGE_CELL) -> None:
        self.cell = cell
        self._cells: set[int] = set()

    @property
    def area(self) -> float:
        """Covered area in m^2."""
        return len(self._cells) * self.cell * self.cell

    def add_scan(self, scan: RangeScan, position: np.ndarray, rotation: np.ndarray) -> int:
        """Mark the cells the scan's beams swept; returns how many cells were new."""
        ranges = np.minimum(np.asarray(scan.ranges, dtype=float), scan.range_max)
        angles = scan.angle_min + scan.angle_increment * np.arange(len(ranges))
        directions = rotation @ np.stack([np.cos(angles), np.sin(angles), np.zeros_like(angles)])  # 3 x N, world
        steps = np.arange(0.0, float(ranges.max(initial=0.0)) + self.cell, self.cell / 2.0)
        along = np.minimum(steps[None, :], ranges[:, None])  # N x S distances, clipped at each beam's end
        xs = position[0] + directions[0][:, None] * along
        ys = position[1] + directions[1][:, None] * along
        keys = _cell_keys(np.floor(xs / self.cell).astype(np.int64), np.floor(ys / self.cell).astype(np.int64))
        before = len(self._cells)
        self._cells.update(np.unique(keys).tolist())
        return len(self._cells) - before


def _cell_keys(ix: np.ndarray, iy: np.ndarray) -> np.ndarray:
    return (ix + (1 << 31)) << 32 | (iy + (1 << 31))


class TrialMetrics:
    """Accumulates one robot's trial summary figures."""

    def __init__(self, sim: Simulator, robot: Robot) -> None:
        self._sim = sim
        self._robot = robot
        self.coverage = CoverageGrid()
        self.distance = 0.0
        self.collisions = 0
        self.readings = 0
        self.victims: set[str] = set()
        self.false_alarms: set[str] = set()
        self._false_alarm_ids = {v.id for v in sim.spec.victims if v.false_alarm}
        self._ignored_bodies = {robot.body_id, sim.world.floor_id}
        self._touching: set[int] = set()
        self._last_position = np.array(robot.base.position, dtype=float)

    def on_tick(self, now: float, readings: Sequence[Reading]) -> None:
        """Simulator listener: laser coverage and victim detections of this robot."""
        for reading in readings:
            if reading.robot != self._robot.name:
                continue
            self.readings += 1
            if isinstance(reading, RangeScan) and reading.sensor_type == "RangeScanner":
                mount = self._robot.sensor(reading.sensor).spec.mount
                self.coverage.add_scan(reading, *self._robot.mount_pose(mount))
            elif isinstance(reading, VictimReading):
                for part in reading.parts:
                    (self.false_alarms if part.victim_id in self._false_alarm_ids else self.victims).add(part.victim_id)

    def sample(self) -> None:
        """Path length since the last sample, and new collisions (a body touched that was not touched before)."""
        position = np.array(self._robot.base.position, dtype=float)
        self.distance += float(np.linalg.norm(position - self._last_position))
        self._last_position = position
        touching = {c[2] for c in p.getContactPoints(bodyA=self._robot.body_id, physicsClientId=self._sim.client)
                    if c[2] not in self._ignored_bodies and abs(c[7][2]) < SUPPORT_NORMAL_Z}
        self.collisions += len(touching - self._touching)
        self._touching = touching

    def summary(self) -> dict[str, float | int | str]:
        """The figures as table columns."""
        return {"distance_m": round(self.distance, 6), "collisions": self.collisions,
                "victims_detected": len(self.victims), "victims": " ".join(sorted(self.victims)),
                "false_alarms_detected": len(self.false_alarms),
                "area_covered_m2": round(self.coverage.area, 6), "readings": self.readings}


def real_time_factor(sim_seconds: float, wall_seconds: float) -> float:
    """Sim seconds per wall second (inf for an instant run)."""
    return sim_seconds / wall_seconds if wall_seconds > 0 else math.inf
