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


def _wrap(angles: np.ndarray) -> np.ndarray:
    """Wrap each angle to [-pi, pi)."""
    return (angles + math.pi) % (2.0 * math.pi) - math.pi


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
        # one draw per reading: rotation noise, position noise, gyro, accel (3 each)
        z = self.rng.standard_normal(12)
        d_rot = _wrap(rpy - self._prev_rpy)
        self.est_rpy = _wrap(self.est_rpy + d_rot + d_rot * (self._bias_rot + prm.sigma * z[0:3]))
        d_pos = pos - self._prev_pos
        self.distance += math.sqrt(float(d_pos @ d_pos))
        noisy = (self._prev_rot.T @ d_pos) * (1.0 + self._bias_pos + prm.sigma * z[3:6])
        self.est_pos = self.est_pos + _rpy_matrix(self.est_rpy) @ noisy
        dt = max(now - self._last_time, 1e-9)
        base = self.robot.base
        gyro = rot.T @ base.angular_velocity + prm.gyro_sigma * z[6:9]
        accel_world = (base.linear_velocity - self._prev_vel) / dt
        accel_world[2] -= self.env.gravity
        accel = rot.T @ accel_world + prm.accel_sigma * z[9:12]
        self._prev_pos, self._prev_rpy, self._prev_rot = pos, rpy, rot
        self._prev_vel = base.linear_velocity.copy()
        self._last_time = now
        pos_sigma = prm.sigma * self.distance + 1e-3
        return InsReading(**self.header(now), position=tuple(self.est_pos.tolist()),
                          rpy=tuple(self.est_rpy.tolist()), angular_velocity=tuple(gyro.tolist()),
                          linear_acceleration=tuple(accel.tolist()),
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
