"""Wheel brakes: a parked drive holds its wheels where they stopped.

A real drive at zero command does not leave its wheels to a velocity loop: the motor
controller holds position (servo lock) or a brake engages. PyBullet's velocity motors
at target 0 let a robot creep (23 mm a minute on a flat floor, 41 mm in 10 s on a 15
degree ramp at 20 solver iterations), because every step's velocity error is forgotten.
A position hold corrects the accumulated error instead, so a parked robot stays put.

A held wheel can still slide on the ground: the contact solver's friction, solved per step
to a tolerance, lets a heavy tracked robot slip about 10 mm a minute down the ramp with its
rollers locked. While the brake holds, the wheels' contacts are therefore friction anchors
(PyBullet's ``frictionAnchor``: a contact keeps its first point and corrects the drift from
it); they are ordinary contacts again once the robot drives.

The brake engages once every braked wheel has slowed below ``STOPPED`` and the chassis
below ``CHASSIS_STOPPED`` (so a moving robot comes to rest on its motors instead of being
yanked back to where the command came), and releases on the next non-zero command.
"""
from __future__ import annotations

from typing import Sequence

import pybullet as p

# rad/s: a wheel slower than this counts as stopped
STOPPED = 0.05
# m/s: a chassis slower than this counts as stopped
CHASSIS_STOPPED = 0.01
# Holding torque relative to the drive's motor torque (parking brakes outhold the motors).
HOLD_TORQUE_FACTOR = 3.0
# PyBullet position-motor gains of the hold: stiff enough to stop creep, damped enough not to ring.
HOLD_POSITION_GAIN = 1.0
HOLD_VELOCITY_GAIN = 1.0


class WheelBrake:
    """Holds a set of wheel joints at rest while a drive's command is zero."""

    def __init__(self, client: int, body: int, joints: Sequence[int], motor_torque: float) -> None:
        self.client = client
        self.body = body
        self.joints = list(joints)
        self.torque = max(motor_torque, 1.0) * HOLD_TORQUE_FACTOR
        self.wanted = False
        self.engaged = False

    def request(self) -> None:
        """The drive was commanded to zero: engage as soon as the wheels have stopped."""
        self.wanted = True

    def release(self) -> None:
        """A motion command came: the caller sends its own motor commands, which replace the hold."""
        self.wanted = False
        if self.engaged:
            self._anchor(False)
        self.engaged = False

    def _anchor(self, on: bool) -> None:
        for joint in self.joints:
            p.changeDynamics(self.body, joint, frictionAnchor=int(on), physicsClientId=self.client)

    def update(self) -> None:
        """Engage the hold once a requested brake finds every wheel stopped."""
        if not self.wanted or self.engaged or not self.joints:
            return
        linear, _ = p.getBaseVelocity(self.body, physicsClientId=self.client)
        if sum(v * v for v in linear) > CHASSIS_STOPPED ** 2:
            return
        states = p.getJointStates(self.body, self.joints, physicsClientId=self.client)
        if any(abs(s[1]) > STOPPED for s in states):
            return
        n = len(self.joints)
        p.setJointMotorControlArray(self.body, self.joints, p.POSITION_CONTROL,
                                    targetPositions=[s[0] for s in states], targetVelocities=[0.0] * n,
                                    forces=[self.torque] * n, positionGains=[HOLD_POSITION_GAIN] * n,
                                    velocityGains=[HOLD_VELOCITY_GAIN] * n, physicsClientId=self.client)
        self._anchor(True)
        self.engaged = True


__all__ = ["WheelBrake", "HOLD_TORQUE_FACTOR", "STOPPED"]
