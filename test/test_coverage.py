"""The laser coverage grid of sweep summaries and the coverage reward (pure geometry)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from usarsim.scale.metrics import CoverageGrid
from usarsim.sim.readings import RangeScan


def _scan(distance: float, beams: int = 629, fov: float = math.pi) -> RangeScan:
    return RangeScan(time=0.0, robot="R", sensor="Scanner", frame="laser", ranges=(distance,) * beams,
                     angle_min=-fov / 2, angle_increment=fov / (beams - 1), range_min=0.0, range_max=20.0,
                     scan_time=0.1)


def test_a_dense_half_circle_covers_its_area() -> None:
    grid = CoverageGrid(cell=0.05)
    grid.add_scan(_scan(1.0), np.zeros(3), np.eye(3))
    # half disc of 1 m: pi/2 m^2, give or take one ring of boundary cells
    assert grid.area == pytest.approx(math.pi / 2, abs=math.pi * 0.05 + 0.05)


def test_the_same_scan_again_adds_nothing_and_far_negative_positions_grow_the_grid() -> None:
    grid = CoverageGrid()
    grid.add_scan(_scan(2.0), np.zeros(3), np.eye(3))
    once = grid.area
    grid.add_scan(_scan(2.0), np.zeros(3), np.eye(3))
    assert grid.area == once
    grid.add_scan(_scan(2.0), np.array([-50.0, -30.0, 0.0]), np.eye(3))
    assert grid.area == pytest.approx(2 * once, rel=0.02)  # the same shape elsewhere (cell alignment aside)


def test_the_sensor_rotation_turns_the_covered_area() -> None:
    facing_north, facing_south = CoverageGrid(), CoverageGrid()
    facing_north.add_scan(_scan(1.0, fov=math.pi / 4), np.zeros(3), np.eye(3))
    turned = np.diag([-1.0, -1.0, 1.0])  # yaw 180 degrees
    facing_south.add_scan(_scan(1.0, fov=math.pi / 4), np.array([10.0, 0.0, 0.0]), turned)
    both = CoverageGrid()
    both.add_scan(_scan(1.0, fov=math.pi / 4), np.zeros(3), np.eye(3))
    both.add_scan(_scan(1.0, fov=math.pi / 4), np.array([0.0, 0.0, 0.0]), turned)
    assert facing_south.area == pytest.approx(facing_north.area, rel=0.1)
    assert both.area == pytest.approx(2 * facing_north.area, rel=0.1)  # opposite wedges do not overlap
