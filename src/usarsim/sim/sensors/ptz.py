"""Pan and tilt of a camera through the joint group it is mounted on (PTZ; zoom is the FOV opcode).

The camera's mount link is followed up the kinematic tree to the first joint
group (e.g. the P2AT's ``CameraPanTilt`` mission package) that moves it. In
that group the joint turning about the mount's z axis pans and the joint
turning about y tilts. Angles are REP-103: pan is positive to the left
(counter-clockwise about z), tilt is positive down (about +y); the protocol
edge flips both signs for SAE (yaw right, pitch up).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np
import pybullet as p

from usarsim.sim.sensors.base import CommandResult

if TYPE_CHECKING:
    from usarsim.sim.robot import JointGroup, Robot


@dataclass(frozen=True)
class PanTiltAxes:
    """The group driving a camera and, per axis, (link number in the group, sign of joint vs REP-103 angle)."""

    group: "JointGroup"
    pan: tuple[int, float] | None
    tilt: tuple[int, float] | None


def _ancestor_joints(robot: "Robot", link: str) -> set[int]:
    """PyBullet joint indices between ``link`` and the base (fixed links followed through the body spec)."""
    names: dict[str, int] = {}
    parents: dict[int, int] = {}
    for i in range(p.getNumJoints(robot.body_id, physicsClientId=robot.client)):
        info = p.getJointInfo(robot.body_id, i, physicsClientId=robot.client)
        names[info[12].decode()] = i
        parents[i] = info[16]
    fixed = {spec.name: spec.parent for spec in robot.spec.body.links}
    for _ in range(64):  # merged fixed links have no PyBullet index: walk the spec to a real one
        if link in names or link not in fixed:
            break
        link = fixed[link]
    chain: set[int] = set()
    index = names.get(link, -1)
    while index >= 0 and index not in chain:
        chain.add(index)
        index = parents[index]
    return chain


def pan_tilt_axes(robot: "Robot", mount_link: str) -> PanTiltAxes | None:
    """Which joint group and links pan and tilt a device mounted on ``mount_link`` (None if fixed)."""
    chain = _ancestor_joints(robot, mount_link)
    for group in robot.joint_groups.values():
        if not chain.intersection(group.indices):
            continue
        pan = tilt = None
        for number, index in enumerate(group.indices, start=1):
            axis = np.array(p.getJointInfo(robot.body_id, index, physicsClientId=robot.client)[13], dtype=float)
            major = int(np.argmax(np.abs(axis)))
            sign = 1.0 if axis[major] > 0 else -1.0
            if major == 2 and pan is None:
                pan = (number, sign)
            elif major == 1 and tilt is None:
                tilt = (number, sign)
        if pan is not None or tilt is not None:
            return PanTiltAxes(group, pan, tilt)
    return None


def pan_tilt_command(robot: "Robot", mount_link: str, params: Sequence[Any]) -> CommandResult:
    """``PanTilt pan,tilt[,order[,relative]]``: order 0 position (rad), 1 speed (rad/s); relative adds."""
    try:
        values = [float(v) for v in params]
    except (TypeError, ValueError):
        return CommandResult(False, message="PanTilt needs numbers: pan,tilt[,order[,relative]]")
    if len(values) < 2 or not all(math.isfinite(v) for v in values):
        return CommandResult(False, message="PanTilt needs finite pan and tilt values")
    order = int(values[2]) if len(values) > 2 else 0
    relative = bool(values[3]) if len(values) > 3 else False
    if order not in (0, 1):
        return CommandResult(False, message=f"PanTilt order must be 0 (position) or 1 (speed), got {order}")
    axes = pan_tilt_axes(robot, mount_link)
    if axes is None:
        return CommandResult(False, message="this camera is not on a pan-tilt mount")
    fields: list[tuple[str, float]] = []
    for label, axis, value in (("Pan", axes.pan, values[0]), ("Tilt", axes.tilt, values[1])):
        if axis is None:
            continue
        number, sign = axis
        axes.group.command(number, sign * value, order, relative)
        # report the position target in force (the joint limits may have clamped it)
        fields.append((label, sign * axes.group.targets[number - 1] if order == 0 else value))
    return CommandResult(True, tuple(fields))
