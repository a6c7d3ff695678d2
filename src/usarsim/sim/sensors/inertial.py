"""What the single-quantity motion sensors share (accelerometer, gyroscope, velocimeter,
inclinometer): noise parameters, the sensor's pose and motion in the world, and the specific
force (what a proof mass feels) that accelerometers and inclinometers both sense."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from usarsim.sim.noise import DriftingChannel
from usarsim.sim.sensors.base import CommonParams, Sensor


@dataclass
class InertialParams(CommonParams):
    """Sample interval, white noise, bandwidth (Hz, 0 = unfiltered) and bias random walk per sqrt(s)."""

    scan_interval: float = 0.02
    sigma: float = 0.0
    bandwidth: float = 0.0
    bias_drift: float = 0.0
    initial_bias: float = 0.0


class InertialSensor(Sensor):
    """A sensor reading one 3-vector of its own frame through a DriftingChannel."""

    Params = InertialParams

    def on_spawned(self, now: float) -> None:
        super().on_spawned(now)
        prm: InertialParams = self.params  # type: ignore[assignment]
        # the initial bias is part of the sensor's error: with noise off the sensor reads the true value
        initial_bias = prm.initial_bias if self.env.noise else 0.0
        self.channel = DriftingChannel(prm.bandwidth, prm.bias_drift, prm.sigma, initial_bias)
        self.last_time = now

    def rotation(self) -> np.ndarray:
        """The sensor frame's rotation in the world."""
        return self.robot.mount_pose(self.spec.mount)[1]

    def motion(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(rotation, velocity, angular velocity) of the sensor in the world: those of the link it is
        mounted on (a QRIO's torso turns on its waist), the velocity at the sensor itself."""
        _, rotation, velocity, angular = self.robot.mount_motion(self.spec.mount)
        return rotation, velocity, angular

    def measure(self, true_value: np.ndarray, now: float) -> tuple[float, float, float]:
        """The true sensor-frame vector as measured (filtered, biased, noisy)."""
        dt = max(now - self.last_time, 0.0)
        self.last_time = now
        x, y, z = self.channel(true_value, dt, self.rng).tolist()
        return (x, y, z)

    @property
    def variance(self) -> float:
        """White-noise variance reported with each reading."""
        return float(self.params.sigma) ** 2  # type: ignore[attr-defined]


class SpecificForceSensor(InertialSensor):
    """An inertial sensor that senses specific force: the change of its own velocity (its link's
    motion at the mount point) since the previous sample, a box average over the sample interval,
    minus gravity, so at rest the up axis reads +9.81 m/s^2."""

    def on_spawned(self, now: float) -> None:
        super().on_spawned(now)
        self._previous = self.motion()[1]

    def specific_force(self, now: float) -> tuple[np.ndarray, np.ndarray]:
        """(sensor-frame specific force m/s^2, sensor rotation) since the previous sample."""
        dt = now - self.last_time
        rotation, velocity, _ = self.motion()
        acceleration = (velocity - self._previous) / dt if dt > 0 else np.zeros(3)
        self._previous = velocity
        return rotation.T @ (acceleration - np.array([0.0, 0.0, self.env.gravity])), rotation
