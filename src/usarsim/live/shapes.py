"""PyBullet bodies as Foxglove scene primitives (pure conversion from PyBullet's visual shape data).

Boxes, spheres and cylinders become the matching primitives at their world pose. A triangle
mesh (ramps, step fields, mesh items) has no triangles PyBullet can give back, so it is drawn
as its bounding box, except ramps, which are drawn as the wedge their world-file size describes.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence, TypedDict

import numpy as np
import pybullet as p
from foxglove.messages import (Color, CubePrimitive, CylinderPrimitive, Point3, Pose, Quaternion,
                               SpherePrimitive, TriangleListPrimitive, Vector3)

from usarsim import rotations

Vec3 = tuple[float, float, float]
Quat = tuple[float, float, float, float]


class PrimitiveLists(TypedDict):
    """The primitive lists of a SceneEntity, as keyword arguments."""

    cubes: list[CubePrimitive]
    spheres: list[SpherePrimitive]
    cylinders: list[CylinderPrimitive]
    triangles: list[TriangleListPrimitive]


@dataclass
class Primitives:
    """Primitives of one scene entity, all in the same frame."""

    cubes: list[CubePrimitive] = field(default_factory=list)
    spheres: list[SpherePrimitive] = field(default_factory=list)
    cylinders: list[CylinderPrimitive] = field(default_factory=list)
    triangles: list[TriangleListPrimitive] = field(default_factory=list)

    def as_kwargs(self) -> PrimitiveLists:
        """Keyword arguments of a SceneEntity."""
        return {"cubes": self.cubes, "spheres": self.spheres, "cylinders": self.cylinders,
                "triangles": self.triangles}


def pose(position: Sequence[float] | np.ndarray, orientation: Quat = (0.0, 0.0, 0.0, 1.0)) -> Pose:
    """A Foxglove pose from a position and an (x, y, z, w) quaternion."""
    x, y, z = (float(v) for v in position)
    qx, qy, qz, qw = (float(v) for v in orientation)
    return Pose(position=Vector3(x=x, y=y, z=z), orientation=Quaternion(x=qx, y=qy, z=qz, w=qw))


def color(rgba: Sequence[float]) -> Color:
    """A Foxglove colour from RGBA in 0..1."""
    r, g, b, a = (float(v) for v in rgba)
    return Color(r=r, g=g, b=b, a=a)


def _link_pose(client: int, body: int, link: int) -> tuple[Vec3, Quat]:
    if link == -1:
        return p.getBasePositionAndOrientation(body, physicsClientId=client)
    state = p.getLinkState(body, link, computeForwardKinematics=True, physicsClientId=client)
    return state[4], state[5]


def body_primitives(client: int, body: int, into: Primitives | None = None,
                    tint: Sequence[float] | None = None) -> Primitives:
    """Every visual shape of ``body`` at its current world pose (``tint`` overrides the colours)."""
    out = into if into is not None else Primitives()
    link_poses: dict[int, tuple[Vec3, Quat]] = {}
    for shape in p.getVisualShapeData(body, physicsClientId=client):
        link, geometry, dims, local_pos, local_orn, rgba = shape[1], shape[2], shape[3], shape[5], shape[6], shape[7]
        if link not in link_poses:
            link_poses[link] = _link_pose(client, body, link)
        position, orientation = p.multiplyTransforms(*link_poses[link], local_pos, local_orn)
        at, paint = pose(position, orientation), color(tint or rgba)
        if geometry == p.GEOM_BOX:
            out.cubes.append(CubePrimitive(pose=at, size=Vector3(x=dims[0], y=dims[1], z=dims[2]), color=paint))
        elif geometry == p.GEOM_SPHERE:
            d = 2.0 * dims[0]
            out.spheres.append(SpherePrimitive(pose=at, size=Vector3(x=d, y=d, z=d), color=paint))
        elif geometry in (p.GEOM_CYLINDER, p.GEOM_CAPSULE):
            d = 2.0 * dims[1]
            out.cylinders.append(CylinderPrimitive(pose=at, size=Vector3(x=d, y=d, z=dims[0]), bottom_scale=1.0,
                                                   top_scale=1.0, color=paint))
        else:  # a mesh: its bounding box
            low, high = p.getAABB(body, link, physicsClientId=client)
            centre = [(a + b) / 2.0 for a, b in zip(low, high)]
            size = [b - a for a, b in zip(low, high)]
            out.cubes.append(CubePrimitive(pose=pose(centre), size=Vector3(x=size[0], y=size[1], z=size[2]),
                                           color=paint))
    return out


def wedge(centre: Vec3, size: Vec3, rpy: Vec3, rgba: Sequence[float]) -> TriangleListPrimitive:
    """A ramp: footprint ``size[:2]`` centred at ``centre``, rising to ``size[2]`` toward its local +x."""
    hx, hy, top = size[0] / 2.0, size[1] / 2.0, size[2]
    low_l, low_r, high_l, high_r = (-hx, hy, 0.0), (-hx, -hy, 0.0), (hx, hy, top), (hx, -hy, top)
    foot_l, foot_r = (hx, hy, 0.0), (hx, -hy, 0.0)
    faces = [low_r, high_r, high_l, low_r, high_l, low_l,  # slope
             foot_r, foot_l, high_l, foot_r, high_l, high_r,  # high end
             low_r, foot_r, high_r, low_l, high_l, foot_l]  # sides
    return TriangleListPrimitive(pose=pose(centre, rotations.quaternion_from_euler(rpy)),
                                 points=[Point3(x=x, y=y, z=z) for x, y, z in faces], color=color(rgba))
