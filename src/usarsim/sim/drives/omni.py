"""Omni drive (``drive.type: omni``): Lisa's steered, powered wheels (``DRIVE {WheelNumber}...``).

Each steered wheel hangs from a knuckle turned by a position motor (``steer_joints``) and
spins by a velocity motor; ``steered_wheels`` lists them in WheelNumber order. The other
wheels are passive swivel casters. cmd_vel (vx, vy, wz) gives every steered wheel the
velocity of its contact point, v + w x r: steer = its direction, spin = its length / radius.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pybullet as p

from usarsim.sim.brakes import WheelBrake
from usarsim.sim.catalogue import DriveSpec
from usarsim.sim.commands import CommandError, OmniDrive
from usarsim.sim.drives.base import Drive, limited
from usarsim.sim.drives.registry import DRIVES

if TYPE_CHECKING:
    from usarsim.sim.robot import Robot

STEER_SPEED = 3.0  # rad/s at the knuckle (not in the sources)


def twist_to_wheels(vx: float, vy: float, wz: float, positions: list[tuple[float, float]],
                    spec: DriveSpec) -> list[tuple[int, float, float]]:
    """(WheelNumber, spin rad/s, steer rad +left) of each steered wheel for a body twist (FLU).

    A wheel needing to point backwards spins backwards instead when the steer limit is below pi;
    spins are scaled down together to respect ``max_wheel_speed``.
    """
    out = []
    for number, (x, y) in enumerate(positions):
        wx, wy = vx - wz * y, vy + wz * x
        speed = math.hypot(wx, wy) / spec.wheel_radius
        steer = math.atan2(wy, wx) if speed > 1e-9 else 0.0
        if abs(steer) > spec.max_steer:
            steer, speed = steer - math.copysign(math.pi, steer), -speed
        out.append((number, speed, steer))
    peak = max((abs(s) for _, s, _ in out), default=0.0)
    if spec.max_wheel_speed > 0 and peak > spec.max_wheel_speed:
        out = [(n, s * spec.max_wheel_speed / peak, a) for n, s, a in out]
    return out


@DRIVES.register("omni")
class OmniSteerDrive(Drive):
    """Per-wheel spin and steer commands."""

    accepts = (OmniDrive,)

    def __init__(self, robot: "Robot") -> None:
        super().__init__(robot)
        spec = self.spec
        if len(spec.steered_wheels) != len(spec.steer_joints) or not spec.steered_wheels:
            raise CommandError(f"{robot.spec.class_name}: omni drive needs one steer joint per steered wheel")
        self.wheels = [robot.joint_index(j) for j in spec.steered_wheels]
        self.knuckles = [robot.joint_index(j) for j in spec.steer_joints]
        self.speeds = [0.0] * len(self.wheels)
        self.steers = [0.0] * len(self.wheels)
        # parked, a brake holds the steered wheels and the casters' wheels and swivels
        casters = [robot.joint_index(link.joint_name) for link in robot.spec.body.links
                   if link.joint_type == "continuous"]
        self.brake = WheelBrake(robot.client, robot.body_id, self.wheels + casters, spec.max_torque)
        self._send()

    def take(self, cmd: OmniDrive) -> None:
        for number, _, _ in cmd.wheels:
            if not 0 <= number < len(self.wheels):
                raise CommandError(f"WheelNumber {number}: {self.robot.spec.class_name} has steered wheels "
                                 f"0..{len(self.wheels) - 1}")
        limits = (self.spec.max_wheel_speed, self.spec.max_steer)
        for number, speed, steer in cmd.wheels:  # normalized: both -100..100 of their limits, as the Ackermann form
            self.speeds[number], self.steers[number] = limited((speed, steer), limits, cmd.normalized,
                                                               (self.speeds[number], self.steers[number]))
        self._send()

    def stop(self) -> None:
        self.speeds = [0.0] * len(self.wheels)
        self._send()

    def update(self, dt: float) -> None:
        self.brake.update()

    def _send(self) -> None:
        client, body = self.robot.client, self.robot.body_id
        torque = self.spec.max_torque
        if any(self.speeds):
            self.brake.release()
            free = self.brake.joints[len(self.wheels):]
            p.setJointMotorControlArray(body, free, p.VELOCITY_CONTROL, forces=[0.0] * len(free),
                                        physicsClientId=client)
        else:
            self.brake.request()
        if not self.brake.engaged:
            p.setJointMotorControlArray(body, self.wheels, p.VELOCITY_CONTROL, targetVelocities=self.speeds,
                                        forces=[torque] * len(self.wheels), physicsClientId=client)
        for knuckle, steer in zip(self.knuckles, self.steers):
            p.setJointMotorControl2(body, knuckle, p.POSITION_CONTROL, targetPosition=steer, maxVelocity=STEER_SPEED,
                                    force=torque * 4.0, physicsClientId=client)

    def steer_angles(self) -> tuple[float, float]:
        """STA FrontSteer / RearSteer: the knuckle angles of wheels 0 and 1."""
        angles = [self.robot.joint_position(k) for k in self.knuckles[:2]] + [0.0, 0.0]
        return angles[0], angles[1]

    def power(self) -> float:
        return self.spec.max_torque * sum(abs(s) for s in self.speeds) * 0.05


__all__ = ["OmniSteerDrive", "twist_to_wheels"]
