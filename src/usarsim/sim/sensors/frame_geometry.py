"""Where each pixel of a rendered frame lies in the world: positions, distances and normals.

Recovered from PyBullet's depth buffer and the view and projection matrices the frame was
rendered with, so it works for any frustum (the omnidirectional camera's cut faces too).
The lights and the underwater optics that PyBullet's renderers lack are computed from it.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Sequence

import numpy as np

SKY_DEPTH = 0.99999  # depth-buffer value at or beyond which nothing was drawn


@functools.lru_cache(maxsize=16)
def _ndc_grid(width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
    """Normalised device x (left -1 .. right +1) and y (top +1 .. bottom -1) of pixel centres."""
    x = ((np.arange(width, dtype=np.float32) + 0.5) / width * 2.0 - 1.0)[None, :]
    y = (1.0 - (np.arange(height, dtype=np.float32) + 0.5) / height * 2.0)[:, None]
    return x, y


@dataclass
class FrameGeometry:
    """Per-pixel world geometry of one frame (arrays height x width [x 3], float32)."""

    eye: np.ndarray  # (3,) camera position
    points: np.ndarray  # world position of the surface seen (far plane where it is sky)
    rays: np.ndarray  # unit direction from the eye through the pixel
    distance: np.ndarray  # m from the eye to the surface along the ray (inf where sky)
    sky: np.ndarray  # bool: nothing drawn

    @classmethod
    def from_depth(cls, depth: np.ndarray, view: Sequence[float], projection: Sequence[float],
                   eye: np.ndarray) -> "FrameGeometry":
        """Unproject ``depth`` (PyBullet's 0..1 buffer) through the frame's column-major matrices."""
        height, width = depth.shape
        clip_to_world = np.linalg.inv(np.asarray(projection, dtype=float).reshape(4, 4).T
                                      @ np.asarray(view, dtype=float).reshape(4, 4).T).astype(np.float32)
        x, y = _ndc_grid(width, height)
        z = depth.astype(np.float32) * 2.0 - 1.0
        m = clip_to_world
        w = m[3, 0] * x + m[3, 1] * y + m[3, 2] * z + m[3, 3]
        points = np.stack([(m[i, 0] * x + m[i, 1] * y + m[i, 2] * z + m[i, 3]) / w for i in range(3)], axis=-1)
        offset = points - eye.astype(np.float32)
        distance = np.sqrt((offset * offset).sum(axis=-1))
        rays = offset / np.maximum(distance, 1e-6)[..., None]
        sky = depth >= SKY_DEPTH
        distance[sky] = np.inf
        return cls(eye.astype(np.float32), points, rays, distance, sky)

    def every(self, step: int) -> "FrameGeometry":
        """Every ``step``-th pixel of every ``step``-th row (a coarser grid over the same frame)."""
        if step == 1:
            return self
        cut = (slice(None, None, step), slice(None, None, step))
        return FrameGeometry(self.eye, self.points[cut], self.rays[cut], self.distance[cut], self.sky[cut])

    def normals(self) -> np.ndarray:
        """Unit surface normals facing the camera, from neighbouring pixels' positions."""
        p = self.points
        du = np.empty_like(p)  # along rows (central differences, one-sided at the borders)
        du[:, 1:-1] = p[:, 2:] - p[:, :-2]
        du[:, 0], du[:, -1] = p[:, 1] - p[:, 0], p[:, -1] - p[:, -2]
        dv = np.empty_like(p)  # along columns
        dv[1:-1] = p[2:] - p[:-2]
        dv[0], dv[-1] = p[1] - p[0], p[-1] - p[-2]
        ux, uy, uz = du[..., 0], du[..., 1], du[..., 2]
        vx, vy, vz = dv[..., 0], dv[..., 1], dv[..., 2]
        n = np.stack([uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx], axis=-1)
        length = np.sqrt((n * n).sum(axis=-1))
        # point every normal toward the eye: its dot with the viewing ray must be negative
        sign = np.where((n * self.rays).sum(axis=-1) > 0, -1.0, 1.0).astype(np.float32)
        n *= (sign / np.maximum(length, 1e-9))[..., None]
        return n


__all__ = ["FrameGeometry", "SKY_DEPTH"]
