"""INS: dead-reckoned pose estimate whose error grows with motion (spec sensors.md §7).

The attitude integrates the true rotation change plus Gaussian noise
proportional to it; the position integrates the true displacement expressed
in the body frame, re-projected with the *estimated* attitude and a noisy
length, so heading errors become position drift as in a real INS.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

from usarsim import rotations
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


# The INS runs at 50 Hz on every robot, so its 3-vector arithmetic is plain Python floats:
# NumPy's per-call overhead on length-3 arrays costs more than the arithmetic itself.
Vec = list[float]
Rows = Sequence[Sequence[float]]


def _rotate(rows: Rows, v: Vec) -> Vec:
    """R @ v for a 3x3 matrix given by rows."""
    return [r[0] * v[0] + r[1] * v[1] + r[2] * v[2] for r in rows]


def _rotate_back(rows: Rows, v: Vec) -> Vec:
    """R.T @ v for a 3x3 matrix given by rows."""
    return [rows[0][i] * v[0] + rows[1][i] * v[1] + rows[2][i] * v[2] for i in range(3)]


@register("INS")
class Ins(Sensor):
    """Estimated position (world) and attitude; initial estimate = ground truth."""

    Params = InsParams

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._bias_rot = [0.0, 0.0, 0.0]
        self._bias_pos = [0.0, 0.0, 0.0]
        self.distance = 0.0

    def _true(self) -> tuple[Vec, Vec, Rows, Vec]:
        """Position, attitude, rotation rows and velocity of base_link (the frame the INS reports)."""
        base = self.robot.base
        position, velocity = self.robot.base_link_motion()
        return (position.tolist(), list(rotations.euler_from_quaternion(base.orientation)), base.rotation.tolist(),
                velocity.tolist())

    def on_spawned(self, now: float) -> None:
        super().on_spawned(now)
        prm: InsParams = self.params  # type: ignore[assignment]
        self._prev_pos, self._prev_rpy, self._prev_rot, self._prev_vel = self._true()
        self.est_pos = list(self._prev_pos)
        self.est_rpy = list(self._prev_rpy)
        self._last_time = now
        if prm.drifting:
            self._bias_rot = ((self.rng.uniform(0, 1, 3) - 0.5) / prm.precision ** 2).tolist()
            self._bias_pos = ((self.rng.uniform(0, 1, 3) - 0.5) / prm.precision).tolist()

    def read(self, now: float) -> InsReading:
        prm: InsParams = self.params  # type: ignore[assignment]
        sigma = prm.sigma
        pos, rpy, rot, vel = self._true()
        # one draw per reading: rotation noise, position noise, gyro, accel (3 each)
        z = self.rng.standard_normal(12).tolist()
        for i in range(3):
            d_rot = rotations.wrap_pi(rpy[i] - self._prev_rpy[i])
            self.est_rpy[i] = rotations.wrap_pi(self.est_rpy[i] + d_rot + d_rot * (self._bias_rot[i] + sigma * z[i]))
        d_pos = [pos[i] - self._prev_pos[i] for i in range(3)]
        self.distance += math.sqrt(d_pos[0] ** 2 + d_pos[1] ** 2 + d_pos[2] ** 2)
        body = _rotate_back(self._prev_rot, d_pos)
        noisy = [body[i] * (1.0 + self._bias_pos[i] + sigma * z[3 + i]) for i in range(3)]
        est_rot = rotations.rotation_rows(rotations.quaternion_from_euler(self.est_rpy))
        self.est_pos = [e + d for e, d in zip(self.est_pos, _rotate(est_rot, noisy))]
        dt = max(now - self._last_time, 1e-9)
        gyro = [g + prm.gyro_sigma * n
                for g, n in zip(_rotate_back(rot, self.robot.base.angular_velocity.tolist()), z[6:9])]
        accel_world = [(v - v0) / dt for v, v0 in zip(vel, self._prev_vel)]
        accel_world[2] -= self.env.gravity
        accel = [a + prm.accel_sigma * n for a, n in zip(_rotate_back(rot, accel_world), z[9:12])]
        self._prev_pos, self._prev_rpy, self._prev_rot = pos, rpy, rot
        self._prev_vel = vel
        self._last_time = now
        pos_sigma = sigma * self.distance + 1e-3
        return InsReading(**self.header(now), position=rotations.vec3(self.est_pos), rpy=rotations.vec3(self.est_rpy),
                          angular_velocity=tuple(gyro), linear_acceleration=tuple(accel),
                          position_variance=pos_sigma ** 2, orientation_variance=max(sigma * 0.01, 1e-6),
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
        self.est_pos = values[:3]
        self.est_rpy = values[3:]
        self._bias_rot = [0.0, 0.0, 0.0]
        self._bias_pos = [0.0, 0.0, 0.0]
        return CommandResult(True)
