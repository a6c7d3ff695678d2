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
    """Cells of the ground plane any laser beam passed through or ended in (free space and hits).

    Far from the sensor, beams are farther apart than a cell, so the figure is the area the beams
    actually swept, below the area inside the scan's outline. A dense boolean grid, grown on demand.
    """

    def __init__(self, cell: float = COVERAGE_CELL) -> None:
        self.cell = cell
        self._grid = np.zeros((0, 0), dtype=bool)
        self._origin = np.zeros(2, dtype=np.int64)  # cell index of grid[0, 0]

    @property
    def area(self) -> float:
        """Covered area in m^2."""
        return int(np.count_nonzero(self._grid)) * self.cell * self.cell

    def add_scan(self, scan: RangeScan, position: np.ndarray, rotation: np.ndarray) -> None:
        """Mark the cells the scan's beams swept (``position``, ``rotation``: the sensor's world pose)."""
        ranges = np.minimum(np.asarray(scan.ranges, dtype=float), scan.range_max)
        angles = scan.angle_min + scan.angle_increment * np.arange(len(ranges))
        directions = rotation @ np.stack([np.cos(angles), np.sin(angles), np.zeros_like(angles)])  # 3 x N, world
        # samples every half cell along each beam up to its own end, and the end itself
        step = self.cell / 2.0
        counts = np.floor(ranges / step).astype(np.int64) + 1
        beam = np.repeat(np.arange(len(ranges)), counts)
        first = np.repeat(np.cumsum(counts) - counts, counts)
        along = np.concatenate([(np.arange(len(beam)) - first) * step, ranges])
        beam = np.concatenate([beam, np.arange(len(ranges))])
        cells = np.floor(np.stack([position[0] + directions[0][beam] * along,
                                   position[1] + directions[1][beam] * along]) / self.cell).astype(np.int64)
        self._fit(cells.min(axis=1), cells.max(axis=1))
        self._grid[cells[0] - self._origin[0], cells[1] - self._origin[1]] = True

    def _fit(self, low: np.ndarray, high: np.ndarray) -> None:
        """Grow the grid (with slack, so it rarely grows) until it holds cells low..high."""
        top = self._origin + self._grid.shape
        if self._grid.size and np.all(low >= self._origin) and np.all(high < top):
            return
        slack = 64
        new_low = np.minimum(low, self._origin if self._grid.size else low) - slack
        new_top = np.maximum(high + 1, top if self._grid.size else high + 1) + slack
        grid = np.zeros(tuple(new_top - new_low), dtype=bool)
        offset = self._origin - new_low
        grid[offset[0]:offset[0] + self._grid.shape[0], offset[1]:offset[1] + self._grid.shape[1]] = self._grid
        self._grid, self._origin = grid, new_low


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
