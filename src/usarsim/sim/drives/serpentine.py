"""Serpentine drive: tracked cars in a row, steered by bending the yaw joints between them.

A snake of cars as long and narrow as the Soryu (1.21 x 0.122 m) cannot skid-turn: its tracks
would have to drag the outer cars sideways. It turns the way the real robot does, by bending the
yaw joints so that the cars lie on the arc it drives along, with every car's tracks at the same
left/right speeds (each car then turns at the arc's yaw rate). ``DRIVE {Left} {Right}`` keeps the
manual's SkidSteered meaning: v = r(L+R)/2 and w = r(R-L)/b give the arc (curvature w/v), and
consecutive car centres ``drive.wheelbase`` apart on that arc differ in heading by
2 asin(wheelbase * w / (2 v)). A command with no forward speed leaves the joints where they are (like
a car, the snake does not turn in place). Pitch joints are never moved by the drive.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, ClassVar

from usarsim.sim.commands import CommandError, JointTargets
from usarsim.sim.drives.base import clamp, wheel_speeds_to_twist
from usarsim.sim.drives.registry import DRIVES
from usarsim.sim.drives.tracked import TrackedDrive

if TYPE_CHECKING:
    from usarsim.sim.robot import Robot

# Forward speeds below this (m/s) give no curvature to steer by.
MIN_STEER_SPEED = 1e-3


def bend_angle(linear: float, angular: float, spacing: float, limit: float) -> float:
    """Relative yaw (rad, +left) between cars ``spacing`` apart on the arc of a (v, w) command."""
    if abs(linear) < MIN_STEER_SPEED:
        return 0.0
    half_chord = spacing * angular / (2.0 * linear)
    return clamp(2.0 * math.asin(clamp(half_chord, 1.0)), limit)


@DRIVES.register("serpentine")
class SerpentineDrive(TrackedDrive):
    """Tracks on every car (one speed per side, as ``TrackedDrive``) and articulated steering.

    ``drive.front_steer_joints`` bend toward the turn (+left for a left turn), ``rear_steer_joints``
    the other way, so the cars ahead of and behind the middle one both follow the arc.
    """

    # The chassis-yaw loop of skid steering would fight the joints (and cannot turn a snake in place).
    yaw_control: ClassVar[bool] = False

    def __init__(self, robot: "Robot") -> None:
        super().__init__(robot)
        spec = self.spec
        if not spec.front_steer_joints and not spec.rear_steer_joints:
            raise CommandError(f"{robot.spec.class_name}: serpentine drive needs front_steer_joints or rear_steer_joints")

    def _set(self, command: tuple[float, float]) -> None:
        super()._set(command)
        linear, angular = wheel_speeds_to_twist(*command, self.spec)
        if abs(linear) < MIN_STEER_SPEED:
            return
        bend = bend_angle(linear, angular, self.spec.wheelbase, self.spec.max_front_steer)
        targets = {j: bend for j in self.spec.front_steer_joints}
        targets.update({j: -bend for j in self.spec.rear_steer_joints})
        self.robot.set_joints(JointTargets(self.robot.name, targets))

    def steer_angles(self) -> tuple[float, float]:
        """Measured (front, rear) yaw-joint angles, rad, +left (the outer car turned counter-clockwise)."""
        def mean(joints: list[str]) -> float:
            if not joints:
                return 0.0
            return sum(self.robot.joint_position(self.robot.joint_index(j)) for j in joints) / len(joints)
        return mean(self.spec.front_steer_joints), mean(self.spec.rear_steer_joints)


__all__ = ["SerpentineDrive", "bend_angle"]
