"""Omnidirectional camera: a camera looking at a parabolic convex mirror (manual §10.15).

USARSim could not render a curved mirror, so a hidden camera at the mirror's focus drew the
scene onto a parabolic texture that the robot camera looked at. Here the same image is made
from pinhole renders at the mirror's focus: one looking along the mirror axis and four
around it (a cube map without its far face), remapped pixel by pixel to the mirror image.

Geometry (the para-catadioptric camera: a paraboloid seen by an orthographic camera): a ray
at angle ``psi`` from the mirror axis lands at image radius ``gamma * tan(psi / 2)``; the
mirror rim, ``max_elevation`` above the plane at right angles to the axis, is the circle of
radius ``min(width, height) / 2`` at the default FOV. Zooming (FOV) scales that circle as a
pinhole camera in front of the mirror would. Outside the mirror the image is black.

The mount's +x is the mirror axis, pointing at the camera (down on a robot: the image centre
shows the robot itself); the image is the mirror's reflection, so with the mount's +z at the
top of the image its +y is on the right (a camera under an upward mirror, robot forward at the
top, sees the robot's left on the right).
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Sequence
import numpy as np
import pybullet as p

from usarsim.sim.readings import Lens
from usarsim.sim.sensors.camera import Camera, CameraParams
from usarsim.sim.sensors.registry import register

# Faces rendered, in the mount frame: (forward, up). The first looks along the mirror axis;
# the other four look out sideways and see from 45 degrees towards the axis up to the rim.
_FACES = ((np.array([1.0, 0.0, 0.0]), np.array([0.0, 0.0, 1.0])),
          (np.array([0.0, 0.0, 1.0]), np.array([-1.0, 0.0, 0.0])),
          (np.array([0.0, 1.0, 0.0]), np.array([-1.0, 0.0, 0.0])),
          (np.array([0.0, 0.0, -1.0]), np.array([-1.0, 0.0, 0.0])),
          (np.array([0.0, -1.0, 0.0]), np.array([-1.0, 0.0, 0.0])))


@dataclass
class OmniCameraParams(CameraParams):
    """RobotCamera keys (the manual's omnidirectional camera uses them) plus the mirror's rim
    and the cube-face resolution (0: enough for one face pixel per image pixel at the rim)."""

    max_elevation: float = 0.2618  # rad above the plane at right angles to the axis (15 degrees)
    face_size: int = 0

    def check(self) -> None:
        super().check()
        if not 0.0 <= self.max_elevation < math.pi / 4:
            raise ValueError("max_elevation must be in [0, pi/4) rad (the side faces reach 45 degrees)")
        if self.face_size < 0:
            raise ValueError("face_size must be >= 0 (0 = automatic)")


@dataclass(frozen=True)
class MirrorGeometry:
    """The mirror image's size and scale: ``gamma`` px maps tan(psi/2); ``rim`` px is the rim's radius."""

    width: int
    height: int
    gamma: float
    rim: float
    max_angle: float  # psi at the rim, rad from the axis

    def directions(self) -> tuple[np.ndarray, np.ndarray]:
        """Unit direction (mount frame) of every pixel's centre, rows top to bottom, and which
        pixels see the mirror."""
        cols, rows = np.meshgrid(np.arange(self.width) + 0.5 - self.width / 2.0,
                                 np.arange(self.height) + 0.5 - self.height / 2.0)
        radius = np.hypot(cols, rows)
        psi = 2.0 * np.arctan(radius / self.gamma)
        safe = np.where(radius > 0, radius, 1.0)
        sin_psi = np.sin(psi)
        # mirrored: image right = mount +y, image up = mount +z
        d = np.stack([np.cos(psi), sin_psi * cols / safe, -sin_psi * rows / safe], axis=-1)
        return d, radius <= self.rim


def mirror_geometry(width: int, height: int, max_elevation: float, zoom: float) -> MirrorGeometry:
    """The geometry at zoom factor ``zoom`` (1 = the default FOV: the rim touches the image's short sides)."""
    max_angle = math.pi / 2 + max_elevation
    rim = zoom * min(width, height) / 2.0
    return MirrorGeometry(width, height, rim / math.tan(max_angle / 2.0), rim, max_angle)


@dataclass(frozen=True)
class _Remap:
    """Which face pixel every image pixel shows: one gather over the faces' pixels, then black."""

    axis_size: int  # the face along the axis: square, half the side faces' width (it is seen small)
    face_size: int  # side faces' width
    side_rows: int  # side faces are cut at the rim: their rows from the rim down to 45 degrees
    rim_height: float  # tan of the rim's elevation: the side faces' top, in face units
    index: np.ndarray  # per image pixel, into the faces' pixels concatenated (+1 black at the end)


@functools.lru_cache(maxsize=16)
def _remap(geometry: MirrorGeometry, face_size: int) -> _Remap:
    d, inside = geometry.directions()
    d = d.reshape(-1, 3)
    inside = inside.reshape(-1)
    # a side face is cut where the rim is: rows from the face's top down to the axis-side edge
    rim_height = math.tan(geometry.max_angle - math.pi / 2)  # tan of the rim's elevation, face units
    side_rows = max(1, math.ceil(face_size * (1.0 + rim_height) / 2.0))
    axis_size = max(1, face_size // 2)
    sizes = [(axis_size, axis_size)] + [(side_rows, face_size)] * 4
    offsets = np.cumsum([0] + [r * c for r, c in sizes])
    black = int(offsets[-1])
    index = np.full(d.shape[0], black, dtype=np.int64)
    best = np.argmax(np.stack([d @ forward for forward, _ in _FACES], axis=1), axis=1)
    for face, (forward, up) in enumerate(_FACES):
        pick = inside & (best == face)
        along = d[pick] @ forward
        x = (d[pick] @ np.cross(forward, up)) / along  # -1 at the face's left edge, +1 at its right
        y = (d[pick] @ up) / along  # the face's top is +1 (axis face) or the rim (side faces)
        rows, cols = sizes[face]
        top, bottom = (1.0, -1.0) if face == 0 else (rim_height, -1.0)
        col = np.clip(((x + 1.0) / 2.0 * cols).astype(np.int64), 0, cols - 1)
        row = np.clip(((top - y) / (top - bottom) * rows).astype(np.int64), 0, rows - 1)
        index[pick] = offsets[face] + row * cols + col
    index.setflags(write=False)
    return _Remap(axis_size, face_size, side_rows, rim_height, index)


@register("OmniCamera")
class OmniCamera(Camera):
    """A parabolic-mirror omnidirectional camera at the mount (the mirror's focus)."""

    Params = OmniCameraParams

    def geometry(self) -> MirrorGeometry:
        """The mirror image geometry at the current FOV."""
        prm: OmniCameraParams = self.params  # type: ignore[assignment]
        zoom = math.tan(prm.fov / 2.0) / math.tan(self.fov / 2.0)
        return mirror_geometry(prm.width, prm.height, prm.max_elevation, zoom)

    def face_size(self, geometry: MirrorGeometry) -> int:
        """Side-face resolution: the configured one, or one face pixel per image pixel along the rim."""
        prm: OmniCameraParams = self.params  # type: ignore[assignment]
        # a face spans pi/2 rad with face_size px at its centre; the rim runs at rim px per rad
        return prm.face_size or max(8, math.ceil(geometry.rim * math.pi / 2.0))

    def render_image(self) -> np.ndarray:
        geometry = self.geometry()
        remap = _remap(geometry, self.face_size(geometry))
        eye, rot = self.robot.mount_pose(self.spec.mount)
        faces = [self.render_view(eye, rot @ forward, rot @ up, width, height, projection)[0].reshape(-1, 3)
                 for forward, up, width, height, projection in face_views(self)]
        faces.append(np.zeros((1, 3), dtype=np.uint8))
        return np.concatenate(faces)[remap.index].reshape(geometry.height, geometry.width, 3)

    def lens(self) -> Lens:
        """The unified model with xi = 1 (a parabolic mirror); fx < 0 because the image is a reflection."""
        geometry = self.geometry()
        return Lens("unified", -geometry.gamma, geometry.gamma, geometry.width / 2.0, geometry.height / 2.0, (1.0,))


def face_views(camera: OmniCamera) -> list[tuple[np.ndarray, np.ndarray, int, int, Sequence[float]]]:
    """The renders one frame takes: (forward, up) in the mount frame, width, height, projection matrix."""
    prm: OmniCameraParams = camera.params  # type: ignore[assignment]
    geometry = camera.geometry()
    remap = _remap(geometry, camera.face_size(geometry))
    near = prm.near
    axis = p.computeProjectionMatrix(-near, near, -near, near, near, prm.far)
    # side faces are cut at the rim: the frustum's top is the rim's elevation, its bottom 45 degrees in
    side = p.computeProjectionMatrix(-near, near, -near, near * remap.rim_height, near, prm.far)
    return [(forward, up, *((remap.axis_size, remap.axis_size, axis) if face == 0 else
                            (remap.face_size, remap.side_rows, side)))
            for face, (forward, up) in enumerate(_FACES)]


__all__ = ["face_views", "MirrorGeometry", "OmniCamera", "OmniCameraParams", "mirror_geometry"]
