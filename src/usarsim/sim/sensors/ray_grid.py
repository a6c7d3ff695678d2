"""The ray grid the victim sensor and the 3-D range scanner cast: fields of view and steps (radians)."""
from __future__ import annotations

from typing import Protocol

import numpy as np

from usarsim.sim.raycast import beam_count


class RayGridParams(Protocol):
    """The four parameters that shape a grid (both families name them the same in the catalogue)."""

    horizontal_fov: float
    horizontal_step: float
    vertical_fov: float
    vertical_step: float


def check_grid(prm: RayGridParams) -> None:
    """ValueError unless the steps are positive and the fields of view not negative."""
    if prm.horizontal_step <= 0 or prm.vertical_step <= 0:
        raise ValueError("horizontal_step and vertical_step must be positive")
    if prm.horizontal_fov < 0 or prm.vertical_fov < 0:
        raise ValueError("horizontal_fov and vertical_fov must be >= 0")


def grid_directions(prm: RayGridParams) -> tuple[np.ndarray, int, int]:
    """Unit FLU directions of a ray grid, row-major: rows bottom to top, columns right to left.

    Returns (directions, rows, columns). Each row is a planar fan like a laser
    scan (yaw from -hfov/2 up); rows step in elevation from -vfov/2 up.
    """
    check_grid(prm)
    columns = beam_count(prm.horizontal_fov, prm.horizontal_step)
    rows = beam_count(prm.vertical_fov, prm.vertical_step)
    yaw = -prm.horizontal_fov / 2.0 + prm.horizontal_step * np.arange(columns)
    pitch = -prm.vertical_fov / 2.0 + prm.vertical_step * np.arange(rows)
    el, az = np.meshgrid(pitch, yaw, indexing="ij")
    dirs = np.stack([np.cos(el) * np.cos(az), np.cos(el) * np.sin(az), np.sin(el)], axis=-1)
    return dirs.reshape(-1, 3), rows, columns
