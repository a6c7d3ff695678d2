"""The drive base class, skid steering and the kinematics helpers shared by every drive.

Pure kinematics helpers (twist <-> wheel speeds) are module functions so front doors
and tests use the same formulas.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, ClassVar, Iterable, Sequence

import pybullet as p

from usarsim.sim.brakes import WheelBrake
from usarsim.sim.commands import Command, CommandError, WheelDrive
from usarsim.sim.catalogue import DriveSpec
from usarsim.sim.drives.registry import DRIVES

if TYPE_CHECKING:
    from usarsim.sim.robot import Robot


def clamp(value: float, limit: float) -> float:
    """Clamp to [-limit, limit]."""
    return max(-limit, min(limit, value))


def denormalize(value: float, limit: float) -> float:
    """Map a -100..100 command to -limit..limit."""
    return clamp(value, 100.0) / 100.0 * limit


def limited(values: Sequence[float | None], limits: Sequence[float], normalized: bool,
            current: Iterable[float]) -> list[float]:
    """A DRIVE's values within their limits (scaled to them when ``normalized``); None keeps ``current``."""
    convert = denormalize if normalized else clamp
    return [float(old) if value is None else convert(value, limit) for value, limit, old in zip(values, limits, current)]


def twist_to_wheel_speeds(linear: float, angular: float, spec: DriveSpec) -> tuple[float, float]:
    """(v m/s, omega rad/s, +left) -> (left, right) wheel spin rad/s, scaled to keep the ratio.

    Uses the calibrated track width (``DriveSpec.track_width``), so a skid-steer base
    given these speeds turns at ``angular`` on a flat floor, not at about half of it.
    """
    r, b = spec.wheel_radius, spec.track_width
    left = (linear - angular * b / 2.0) / r
    right = (linear + angular * b / 2.0) / r
    peak = max(abs(left), abs(right))
    if spec.max_wheel_speed > 0 and peak > spec.max_wheel_speed:
        scale = spec.max_wheel_speed / peak
        left, right = left * scale, right * scale
    return left, right


def wheel_speeds_to_twist(left: float, right: float, spec: DriveSpec) -> tuple[float, float]:
    """(left, right) wheel spin rad/s -> (v m/s, omega rad/s +left) of the calibrated skid-steer model."""
    r, b = spec.wheel_radius, spec.track_width
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
        self.mass = mass_without_damping(robot)

    def apply(self, cmd: Command) -> None:
        """Apply a drive command; CommandError for a type this drive does not accept."""
        if not isinstance(cmd, self.accepts):
            raise CommandError(f"{self.robot.spec.class_name} cannot execute {type(cmd).__name__}")
        self.take(cmd)

    def take(self, cmd: Any) -> None:
        """Act on a command of one of the ``accepts`` types (override)."""

    def update(self, dt: float) -> None:
        """Per-tick work (forces for aerial robots, steering ...)."""

    def steer_angles(self) -> tuple[float, float]:
        """Current (front, rear) steer angles, rad."""
        return (0.0, 0.0)

    def fin_angles(self) -> tuple[float, float]:
        """Current (rudder +left, stern plane +rise) angles of a nautic vehicle, rad."""
        return (0.0, 0.0)

    def stop(self) -> None:
        """Command zero motion."""

    def power(self) -> float:
        """Mechanical power drawn by the drive now (W), for the battery model."""
        return 0.0


def mass_without_damping(robot: "Robot") -> float:
    """Switch PyBullet's velocity damping off on each of a robot's links and return their total mass.

    Bullet damps every multibody link by a = -(0.04 + 0.04 |v|) v whatever its mass: a fall would
    reach 9.77 m/s after 1.2 s instead of g t = 11.77, and a car would top out near 9.5 m/s. What
    slows a robot is its own model: rolling contact and motors on the ground, drag in a fluid."""
    client, body = robot.client, robot.body_id
    total = 0.0
    for link in [-1, *range(p.getNumJoints(body, physicsClientId=client))]:
        total += p.getDynamicsInfo(body, link, physicsClientId=client)[0]
        p.changeDynamics(body, link, linearDamping=0.0, angularDamping=0.0, physicsClientId=client)
    return float(total)


@DRIVES.register("skid", "differential")
class SkidSteerDrive(Drive):
    """Skid-steer and differential robots: one spin speed per side.

    Like a real skid-steer motor controller with a yaw-rate gyro, the drive closes a loop
    on the chassis yaw rate: the command's turn rate (through the calibrated track width)
    is what the robot does, whatever its heading. PyBullet's contact friction alone is not
    isotropic (its friction directions follow the world axes), so the open-loop turn rate
    of a skid-steer robot swings by up to a factor 2 with heading. At zero command the
    wheels are braked (``brakes.WheelBrake``).
    """

    accepts = (WheelDrive,)
    # Closed-loop yaw-rate control (bench/turning.py switches it off to measure the open loop).
    yaw_control: ClassVar[bool] = True

    def __init__(self, robot: "Robot") -> None:
        super().__init__(robot)
        self.left = [robot.joint_index(j) for j in self.spec.left_wheels]
        self.right = [robot.joint_index(j) for j in self.spec.right_wheels]
        if not self.left or not self.right:
            raise CommandError(f"{robot.spec.class_name}: skid drive needs left_wheels and right_wheels")
        self.left_scale = getattr(self, "left_scale", [1.0] * len(self.left))
        self.right_scale = getattr(self, "right_scale", [1.0] * len(self.right))
        self.brake = WheelBrake(robot.client, robot.body_id, self.left + self.right, self.spec.max_torque)
        self.yaw = YawRateLoop(self.spec)
        self._joints = self.left + self.right
        self._forces = [self.spec.max_torque] * len(self._joints)
        self.command = (0.0, 0.0)
        self._target_yaw_rate = 0.0
        self._sent: tuple[float, float] | None = None
        self._send(*self.command)
        self.brake.request()

    def take(self, cmd: WheelDrive) -> None:
        limit = self.spec.max_wheel_speed
        left, right = limited((cmd.left, cmd.right), (limit, limit), cmd.normalized, self.command)
        self._set((left, right))

    def stop(self) -> None:
        self._set((0.0, 0.0))

    def _set(self, command: tuple[float, float]) -> None:
        if command == self.command and self._sent is not None:
            return  # a repeat (cmd_vel comes at 20 Hz, Nav2's rate) changes nothing: the loop keeps its state
        target = wheel_speeds_to_twist(*command, self.spec)[1]
        if command == (0.0, 0.0) or target * self._target_yaw_rate <= 0.0:
            # a stop, or a turn the other way (or from straight): start from the calibrated model; a
            # changed turn the same way keeps the integral, which holds the slip of turning that way
            self.yaw.reset()
        self.command = command
        self._target_yaw_rate = target
        if command == (0.0, 0.0):
            self.brake.request()
        else:
            self.brake.release()
        self._sent = None
        self._send(*command)

    def update(self, dt: float) -> None:
        if self.command == (0.0, 0.0):
            self.brake.update()
            return
        if not self.yaw_control:
            return
        measured, upright = self.robot.yaw_rate()
        if upright < YawRateLoop.MIN_UPRIGHT:  # on its side or on a wall: no meaningful yaw rate
            self.yaw.reset()
            return
        delta = self.yaw.correction(self._target_yaw_rate, measured, dt)
        left = clamp(self.command[0] - delta, self.spec.max_wheel_speed)
        right = clamp(self.command[1] + delta, self.spec.max_wheel_speed)
        if self._sent is None or abs(left - self._sent[0]) + abs(right - self._sent[1]) > 1e-3:
            self._send(left, right)

    def _send(self, left: float, right: float) -> None:
        self._sent = (left, right)
        if self.brake.engaged:
            return
        speeds = [left * k for k in self.left_scale] + [right * k for k in self.right_scale]
        p.setJointMotorControlArray(self.robot.body_id, self._joints, p.VELOCITY_CONTROL, targetVelocities=speeds,
                                    forces=self._forces, physicsClientId=self.robot.client)

    def power(self) -> float:
        return self.spec.max_torque * (abs(self.command[0]) + abs(self.command[1])) * 0.05


class YawRateLoop:
    """PI loop from yaw-rate error (rad/s) to a wheel-speed difference (rad/s per side).

    The gyro rate is low-passed (``TAU``): skid-steer wheels scrub in stick-slip, and a loop
    acting on the raw rate rings on that chatter.
    """

    # body rad/s of correction per rad/s of error: with no velocity damping (the chassis has only its
    # contacts to settle it) a higher gain amplifies the wheels' stick-slip (Kurt3D: 1.5 gives a 1.19
    # turn-rate spread with heading, 1.0 gives 1.02)
    KP = 1.0
    KI = 40.0  # per second
    TAU = 0.1  # s, gyro low-pass
    # The loop trims the command; it may not add more than this share of the top wheel speed.
    LIMIT = 0.5
    MIN_UPRIGHT = 0.5  # cos of the largest tilt (60 deg) at which the loop acts
    SETTLING = 0.5  # the integral acts once the rate is within this share of the target

    def __init__(self, spec: DriveSpec) -> None:
        self.gain = spec.track_width / (2.0 * spec.wheel_radius) if spec.wheel_radius > 0 else 0.0
        self.limit = self.LIMIT * spec.max_wheel_speed if spec.max_wheel_speed > 0 else 1.0
        self._integral_bound = self.limit / max(self.gain * self.KI, 1e-9)  # the integral alone may use the whole limit
        self.integral = 0.0
        self.rate: float | None = None

    def reset(self) -> None:
        """Forget the integral (a new command starts from the calibrated model)."""
        self.integral = 0.0
        self.rate = None

    def correction(self, target: float, measured: float, dt: float) -> float:
        """Wheel-speed difference to add (right +, left -) to reach ``target`` yaw rate."""
        rate = measured if self.rate is None else self.rate
        rate += (measured - rate) * dt / (self.TAU + dt)
        self.rate = rate
        error = target - rate
        # not while spinning up (that would overshoot), but past the target it must pull back
        if abs(error) <= self.SETTLING * abs(target) + 0.02 or error * target < 0.0:
            self.integral = clamp(self.integral + error * dt, self._integral_bound)  # no wind-up against a wall
        return clamp(self.gain * (self.KP * error + self.KI * self.integral), self.limit)


@DRIVES.register("legged", "none")
class NoDrive(Drive):
    """Robots moved only joint by joint (legged) or not at all.

    A foot (the link a leg group's last joint moves) keeps its contact points as friction anchors,
    like a rubber sole: otherwise the contact solver lets a standing robot creep a few millimetres
    a minute.
    """

    def __init__(self, robot: "Robot") -> None:
        super().__init__(robot)
        for group in robot.spec.joint_groups:
            if group.kind == "legs" and group.links:
                p.changeDynamics(robot.body_id, robot.joint_index(group.links[-1].joint), frictionAnchor=1,
                                 physicsClientId=robot.client)


__all__ = ["Drive", "NoDrive", "SkidSteerDrive", "YawRateLoop", "bicycle_steer", "clamp", "denormalize",
           "mass_without_damping", "twist_to_wheel_speeds", "wheel_speeds_to_twist"]
