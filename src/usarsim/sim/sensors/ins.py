"""INS: dead-reckoned pose estimate whose error grows with motion (spec sensors.md §7).

The attitude integrates the true rotation change plus Gaussian noise
proportional to it; the position integrates the true displacement expressed
in the body frame, re-projected with the *estimated* attitude and a noisy
length, so heading errors become position drift as in a real INS.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from usarsim import frames
from usarsim.sim.readings import InsReading
from usarsim.sim.sensors.base import CommandResult, CommonParams, Sensor
from usarsim.sim.sensors.registry import register


@dataclass
class InsParams(CommonParams):
    """USARBot.INS keys plus IMU-style extras for ROS users."""

    scan_interval: float = 0.2
    sigma: float = 0.1  # relative Gaussian noise on each step's change
    drifting: bool = False
    precision: float = 1000.0
    gyro_sigma: float = 0.005  # rad/s on the reported body rates
    accel_sigma: float = 0.02  # m/s^2 on the reported acceleration


def _rpy_matrix(rpy: np.ndarray) -> np.ndarray:
    return frames.rotation_matrix(frames.quaternion_from_euler(rpy))


@register("INS")
class Ins(Sensor):
    """Estimated position (world) and attitude; initial estimate = ground truth."""

    Params = InsParams

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._bias_rot = np.zeros(3)
        self._bias_pos = np.zeros(3)
        self.distance = 0.0

    def _true(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        base = self.robot.base
        return base.position.copy(), np.array(frames.euler_from_quaternion(base.orientation)), base.rotation

    def on_spawned(self, now: float) -> None:
        super().on_spawned(now)
        prm: InsParams = self.params  # type: ignore[assignment]
        self._prev_pos, self._prev_rpy, self._prev_rot = self._true()
        self.est_pos = self._prev_pos.copy()
        self.est_rpy = self._prev_rpy.copy()
        self._prev_vel = self.robot.base.linear_velocity.copy()
        self._prev_est_rpy = self.est_rpy.copy()
        self._last_time = now
        if prm.drifting:
            self._bias_rot = (self.rng.uniform(0, 1, 3) - 0.5) / prm.precision ** 2
            self._bias_pos = (self.rng.uniform(0, 1, 3) - 0.5) / prm.precision

    def read(self, now: float) -> InsReading:
        prm: InsParams = self.params  # type: ignore[assignment]
        pos, rpy, rot = self._true()
        d_rot = np.array([frames.wrap_pi(a) for a in rpy - self._prev_rpy])
        self.est_rpy = self.est_rpy + d_rot + d_rot * self.rng.normal(self._bias_rot, prm.sigma, 3)
        self.est_rpy = np.array([frames.wrap_pi(a) for a in self.est_rpy])
        d_pos = pos - self._prev_pos
        length = float(np.linalg.norm(d_pos))
        self.distance += length
        body_step = self._prev_rot.T @ d_pos
        noisy = body_step * (1.0 + self.rng.normal(self._bias_pos, prm.sigma, 3))
        self.est_pos = self.est_pos + _rpy_matrix(self.est_rpy) @ noisy
        dt = max(now - self._last_time, 1e-9)
        base = self.robot.base
        gyro = rot.T @ base.angular_velocity + self.rng.normal(0.0, prm.gyro_sigma, 3)
        accel_world = (base.linear_velocity - self._prev_vel) / dt - np.array([0.0, 0.0, self.env.gravity])
        accel = rot.T @ accel_world + self.rng.normal(0.0, prm.accel_sigma, 3)
        self._prev_pos, self._prev_rpy, self._prev_rot = pos, rpy, rot
        self._prev_vel = base.linear_velocity.copy()
        self._last_time = now
        pos_sigma = prm.sigma * self.distance + 1e-3
        return InsReading(**self.header(now), position=tuple(float(v) for v in self.est_pos),
                          rpy=tuple(float(v) for v in self.est_rpy), angular_velocity=tuple(float(v) for v in gyro),
                          linear_acceleration=tuple(float(v) for v in accel),
                          position_variance=pos_sigma ** 2, orientation_variance=max(prm.sigma * 0.01, 1e-6),
                          angular_velocity_variance=prm.gyro_sigma ** 2, linear_acceleration_variance=prm.accel_sigma ** 2)

    def command(self, opcode: str, params: tuple[Any, ...]) -> CommandResult:
        """POSE x,y,z,roll,pitch,yaw (core frame) sets the estimate and clears drift."""
        if opcode.upper() != "POSE":
            return super().command(opcode, params)
        try:
            values = [float(v) for v in params]
        except (TypeError, ValueError):
            return CommandResult(False, message="POSE needs six numbers x,y,z,roll,pitch,yaw")
        if len(values) != 6 or not all(math.isfinite(v) for v in values):
            return CommandResult(False, message="POSE needs six finite numbers x,y,z,roll,pitch,yaw")
        self.est_pos = np.array(values[:3])
        self.est_rpy = np.array(values[3:])
        self._bias_rot = np.zeros(3)
        self._bias_pos = np.zeros(3)
        return CommandResult(True)
