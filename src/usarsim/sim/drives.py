"""Drive models: turn typed drive commands into PyBullet motor commands.

One class per steering type. ``drive_for(robot)`` picks it from the
catalogue's ``drive.type``. Pure kinematics helpers (twist <-> wheel speeds)
are module functions so front doors and tests use the same formulas.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, ClassVar

import pybullet as p

from usarsim.sim.commands import AckermannDrive, AerialDrive, Command, CommandError, WheelDrive
from usarsim.sim.catalogue import DriveSpec

if TYPE_CHECKING:
    from usarsim.sim.robot import Robot


def clamp(value: float, limit: float) -> float:
    """Clamp to [-limit, limit]."""
    return max(-limit, min(limit, value))


def denormalize(value: float, limit: float) -> float:
    """Map a -100..100 command to -limit..limit."""
    return clamp(value, 100.0) / 100.0 * limit


def twist_to_wheel_speeds(linear: float, angular: float, spec: DriveSpec) -> tuple[float, float]:
    """(v m/s, omega rad/s, +left) -> (left, right) wheel spin rad/s, scaled to keep the ratio."""
    r, b = spec.wheel_radius, spec.wheel_separation
    left = (linear - angular * b / 2.0) / r
    right = (linear + angular * b / 2.0) / r
    peak = max(abs(left), abs(right))
    if spec.max_wheel_speed > 0 and peak > spec.max_wheel_speed:
        scale = spec.max_wheel_speed / peak
        left, right = left * scale, right * scale
    return left, right


def wheel_speeds_to_twist(left: float, right: float, spec: DriveSpec) -> tuple[float, float]:
    """(left, right) wheel spin rad/s -> ideal (v m/s, omega rad/s +left)."""
    r, b = spec.wheel_radius, spec.wheel_separation
    return r * (left + right) / 2.0, r * (right - left) / b


def bicycle_steer(linear: float, angular: float, wheelbase: float, max_steer: float) -> float:
    """Front steer angle (rad, +left) of a bicycle model turning at ``angular`` with speed ``linear``."""
    if abs(linear) < 1e-6 or abs(angular) < 1e-9:
        return 0.0
    return clamp(math.atan(wheelbase * angular / linear), max_steer)


class Drive:
    """Base class: accepts some command types, updates motors each tick."""

    accepts: ClassVar[tuple[type[Command], ...]] = ()

    def __init__(self, robot: "Robot") -> None:
        self.robot = robot
        self.spec = robot.spec.drive

    def apply(self, cmd: Command) -> None:
        """Apply a drive command (override)."""
        raise CommandError(f"{self.robot.spec.class_name} cannot execute {type(cmd).__name__}")

    def update(self, dt: float) -> None:
        """Per-tick work (forces for aerial robots, steering ...)."""

    def steer_angles(self) -> tuple[float, float]:
        """Current (front, rear) steer angles, rad."""
        return (0.0, 0.0)

    def stop(self) -> None:
        """Command zero motion."""

    def power(self) -> float:
        """Mechanical power drawn by the drive now (W), for the battery model."""
        return 0.0


class SkidSteerDrive(Drive):
    """Skid-steer and differential robots: one spin speed per side."""

    accepts = (WheelDrive,)

    def __init__(self, robot: "Robot") -> None:
        super().__init__(robot)
        self.left = [robot.joint_index(j) for j in self.spec.left_wheels]
        self.right = [robot.joint_index(j) for j in self.spec.right_wheels]
        if not self.left or not self.right:
            raise CommandError(f"{robot.spec.class_name}: skid drive needs left_wheels and right_wheels")
        self.command = (0.0, 0.0)
        self._send()

    def apply(self, cmd: Command) -> None:
        if not isinstance(cmd, WheelDrive):
            super().apply(cmd)
            return
        limit = self.spec.max_wheel_speed
        if cmd.normalized:
            self.command = (denormalize(cmd.left, limit), denormalize(cmd.right, limit))
        else:
            self.command = (clamp(cmd.left, limit), clamp(cmd.right, limit))
        self._send()

    def stop(self) -> None:
        self.command = (0.0, 0.0)
        self._send()

    def _send(self) -> None:
        client, body = self.robot.client, self.robot.body_id
        joints = self.left + self.right
        speeds = [self.command[0]] * len(self.left) + [self.command[1]] * len(self.right)
        p.setJointMotorControlArray(body, joints, p.VELOCITY_CONTROL, targetVelocities=speeds,
                                    forces=[self.spec.max_torque] * len(joints), physicsClientId=client)

    def power(self) -> float:
        return self.spec.max_torque * (abs(self.command[0]) + abs(self.command[1])) * 0.05


class NoDrive(Drive):
    """Robots moved only joint by joint (legged) or not at all."""


_DRIVES: dict[str, type[Drive]] = {"skid": SkidSteerDrive, "differential": SkidSteerDrive,
                                   "legged": NoDrive, "none": NoDrive}


def register_drive(type_name: str, cls: type[Drive]) -> None:
    """Make a drive class available for ``drive.type == type_name``."""
    _DRIVES[type_name] = cls


def drive_for(robot: "Robot") -> Drive:
    """Instantiate the drive model for a robot's catalogue entry."""
    _load_optional_drives()
    try:
        cls = _DRIVES[robot.spec.drive.type]
    except KeyError:
        raise CommandError(f"drive type '{robot.spec.drive.type}' is not supported "
                           f"(known: {', '.join(sorted(_DRIVES))})") from None
    return cls(robot)


def _load_optional_drives() -> None:
    # Drives for other vehicle families live in their own modules and register themselves.
    import importlib

    for module in ("usarsim.sim.drives_vehicle", "usarsim.sim.drives_tracked"):
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise


__all__ = ["AckermannDrive", "AerialDrive", "Drive", "SkidSteerDrive", "bicycle_steer", "clamp",
           "denormalize", "drive_for", "register_drive", "twist_to_wheel_speeds", "wheel_speeds_to_twist"]
