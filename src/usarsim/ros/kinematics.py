"""The robot's kinematic tree for TF, read from the URDF the catalogue generates (pure).

The bridge publishes TF itself instead of running robot_state_publisher:
fixed joints (sensor mounts, camera optical frames) go to /tf_static once,
movable joints (wheels, flippers, arm and pan-tilt links) go to /tf with each
joint-state reading. Building the tree from ``generate_urdf(spec)`` keeps it
identical to the model PyBullet simulates and RViz draws.
"""
from __future__ import annotations

import functools
import math
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from usarsim import rotations

if TYPE_CHECKING:
    from usarsim.sim.catalogue import RobotSpec

Vec3 = tuple[float, float, float]
Quat = tuple[float, float, float, float]

# Optical frame of a camera link: z forward, x right, y down (REP-103 "_optical" suffix).
OPTICAL_RPY: Vec3 = (-math.pi / 2.0, 0.0, -math.pi / 2.0)
OPTICAL_SUFFIX = "_optical"


@dataclass(frozen=True)
class JointFrame:
    """One URDF joint: parent -> child transform at zero position, and how it moves."""

    name: str
    type: str  # fixed, revolute, continuous, prismatic
    parent: str
    child: str
    xyz: Vec3
    rpy: Vec3
    axis: Vec3 = (1.0, 0.0, 0.0)

    @property
    def movable(self) -> bool:
        """True for joints whose transform depends on a position."""
        return self.type != "fixed"

    @functools.cached_property
    def _origin(self) -> Quat:
        return rotations.quaternion_from_euler(self.rpy)

    @functools.cached_property
    def _unit_axis(self) -> Vec3:
        n = math.sqrt(sum(a * a for a in self.axis)) or 1.0
        return (self.axis[0] / n, self.axis[1] / n, self.axis[2] / n)

    def transform(self, position: float = 0.0) -> tuple[Vec3, Quat]:
        """(translation, rotation quaternion x,y,z,w) of the child in the parent at ``position``."""
        origin_q = self._origin  # cached: joint states arrive several times a second per robot
        if self.type in ("revolute", "continuous") and position != 0.0:
            return self.xyz, rotations.quaternion_multiply(
                origin_q, rotations.axis_angle_quaternion(self._unit_axis, position))
        if self.type == "prismatic" and position != 0.0:
            axis = rotations.rotation_matrix(origin_q) @ np.asarray(self._unit_axis, dtype=float)
            xyz = tuple(float(v) for v in np.asarray(self.xyz) + axis * position)
            return (xyz[0], xyz[1], xyz[2]), origin_q
        return self.xyz, origin_q


def _link_of(joint: ET.Element, role: str) -> str:
    """The ``link`` of a joint's <parent> or <child> (generated URDFs always name both)."""
    element = joint.find(role)
    return element.get("link", "") if element is not None else ""


def _vec(text: str | None, default: Vec3) -> Vec3:
    if not text:
        return default
    values = [float(v) for v in text.split()]
    return (values[0], values[1], values[2])


def joints_from_urdf(urdf: str) -> tuple[JointFrame, ...]:
    """Every joint of a URDF document, in file order."""
    root = ET.fromstring(urdf)
    out = []
    for joint in root.findall("joint"):  # top level: <ros2_control> has <joint> elements too
        origin = joint.find("origin")
        axis = joint.find("axis")
        out.append(JointFrame(
            name=joint.get("name", ""), type=joint.get("type", "fixed"),
            parent=_link_of(joint, "parent"), child=_link_of(joint, "child"),
            xyz=_vec(origin.get("xyz") if origin is not None else None, (0.0, 0.0, 0.0)),
            rpy=_vec(origin.get("rpy") if origin is not None else None, (0.0, 0.0, 0.0)),
            axis=_vec(axis.get("xyz") if axis is not None else None, (1.0, 0.0, 0.0))))
    return tuple(out)


def robot_joints(spec: "RobotSpec") -> tuple[JointFrame, ...]:
    """The robot's joints plus a fixed ``<camera frame>_optical`` child for every camera."""
    from usarsim.sim.sensors import is_camera
    from usarsim.sim.urdf import generate_urdf

    joints = list(joints_from_urdf(generate_urdf(spec)))
    for sensor in spec.sensors:
        if is_camera(sensor.type):
            frame = sensor.frame_id
            joints.append(JointFrame(f"{frame}{OPTICAL_SUFFIX}_joint", "fixed", frame, frame + OPTICAL_SUFFIX,
                                     (0.0, 0.0, 0.0), OPTICAL_RPY))
    return tuple(joints)


def robot_description(spec: "RobotSpec") -> str:
    """The URDF text (for the robot_description topic RViz's RobotModel reads)."""
    from usarsim.sim.urdf import generate_urdf

    return generate_urdf(spec)


__all__ = ["JointFrame", "OPTICAL_RPY", "OPTICAL_SUFFIX", "joints_from_urdf", "robot_description", "robot_joints"]
