"""Wheel odometry: dead reckoning from the simulated wheel angles (spec sensors.md §5).

Spin angles are quantised to the encoder resolution. Headings use the drive's calibrated
track width (``DriveSpec.track_width``), the model the drive itself turns by, so skid-steer
odometry does not over-read turns; drift emerges from the remaining slip and the optional
wheel radius/separation errors.

A car's odometry wheels are its unsteered rear pair: dead reckoning tracks their axle's midpoint
(the point of the bicycle model that does not slide sideways), 1.3 m behind a Hummer's chassis
frame. The reading is the pose of ``base_link`` (REP-105's odom -> base_link), carried over from
the axle by the fixed offset between them.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from usarsim import rotations
from usarsim.sim.readings import OdometryReading
from usarsim.sim.sensors.base import CommandResult, CommonParams, Sensor
from usarsim.sim.sensors.registry import register


@dataclass
class OdometryParams(CommonParams):
    """USARBot.OdometrySensor keys plus relative calibration errors."""

    scan_interval: float = 0.2
    encoder_resolution: float = 0.01
    left_tire: str = ""  # joint name; empty = first left wheel
    right_tire: str = ""
    radius_error: float = 0.0  # relative error of the assumed wheel radius
    separation_error: float = 0.0
    position_variance: float = 1e-3
    heading_variance: float = 1e-3
    twist_variance: float = 1e-3


@register("Odometry")
class Odometry(Sensor):
    """Planar pose relative to the start (or last RESET), REP-103 (+y left, +theta CCW)."""

    Params = OdometryParams

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        prm: OdometryParams = self.params  # type: ignore[assignment]
        drive = self.robot.spec.drive
        left = prm.left_tire or (drive.left_wheels[0] if drive.left_wheels else "")
        right = prm.right_tire or (drive.right_wheels[0] if drive.right_wheels else "")
        self._joints = (self.robot.joint_index(left), self.robot.joint_index(right))
        self._radius = drive.wheel_radius * (1.0 + prm.radius_error)
        self._separation = drive.track_width * (1.0 + prm.separation_error)
        self._reset_pose()
        self._ticks = (0, 0)
        self._last_time = 0.0
        self._axle = (0.0, 0.0)  # base_link -> the point the wheels measure, in base_link's frame

    def _measured_point(self) -> tuple[float, float]:
        """Where in base_link's frame the odometry wheels measure motion: their midpoint on a car,
        the chassis frame itself on skid-steer robots (which turn about their middle)."""
        if self.robot.spec.drive.type != "ackermann":
            return (0.0, 0.0)
        import pybullet as p

        base_pos, base_rot = self.robot.link_pose("base_link")
        left, right = (base_rot.T @ (np.array(p.getLinkState(self.robot.body_id, joint, computeForwardKinematics=True,
                                                             physicsClientId=self.robot.client)[4]) - base_pos)
                       for joint in self._joints)  # a wheel's link frame sits on its joint
        return (float(left[0] + right[0]) / 2.0, float(left[1] + right[1]) / 2.0)

    def _reset_pose(self) -> None:
        self.x = self.y = self.theta = 0.0

    def _wheel_ticks(self) -> tuple[int, int]:
        import pybullet as p

        prm: OdometryParams = self.params  # type: ignore[assignment]
        states = p.getJointStates(self.robot.body_id, list(self._joints), physicsClientId=self.robot.client)
        return (int(states[0][0] / prm.encoder_resolution), int(states[1][0] / prm.encoder_resolution))

    def on_spawned(self, now: float) -> None:
        super().on_spawned(now)
        self._ticks = self._wheel_ticks()
        self._last_time = now
        self._reset_pose()
        self._axle = self._measured_point()

    def read(self, now: float) -> OdometryReading:
        prm: OdometryParams = self.params  # type: ignore[assignment]
        ticks = self._wheel_ticks()
        d_left = (ticks[0] - self._ticks[0]) * prm.encoder_resolution * self._radius
        d_right = (ticks[1] - self._ticks[1]) * prm.encoder_resolution * self._radius
        self._ticks = ticks
        distance = (d_left + d_right) / 2.0
        d_theta = (d_right - d_left) / self._separation
        mid = self.theta + d_theta / 2.0
        self.x += distance * math.cos(mid)
        self.y += distance * math.sin(mid)
        self.theta = rotations.wrap_pi(self.theta + d_theta)
        dt = max(now - self._last_time, 1e-9)
        self._last_time = now
        # base_link = axle - R(theta) d, relative to where base_link started (theta 0 there)
        dx, dy = self._axle
        c, s = math.cos(self.theta), math.sin(self.theta)
        x, y = self.x + dx - (c * dx - s * dy), self.y + dy - (s * dx + c * dy)
        return OdometryReading(**self.header(now), x=x, y=y, theta=self.theta,
                               linear_velocity=(distance + d_theta * dy) / dt, angular_velocity=d_theta / dt,
                               pose_variance=(prm.position_variance, prm.position_variance, prm.heading_variance),
                               twist_variance=(prm.twist_variance, prm.twist_variance))

    def command(self, opcode: str, params: tuple[Any, ...]) -> CommandResult:
        if opcode.upper() == "RESET":
            self._reset_pose()
            return CommandResult(True)
        return super().command(opcode, params)
