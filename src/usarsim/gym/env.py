"""``UsarsimEnv``: one robot in a world as a Gymnasium environment, stepped in lockstep.

Observation (a Dict space, from the robot's own sensors, so noise models apply):

- ``laser``: the planar laser's ranges (m, float32, 0..range_max; "no return" reads range_max)
- ``odometry``: [x, y, theta, v, omega] dead-reckoned from the start (m, rad, m/s, rad/s), if the robot has one
- ``ins``: [x, y, z, roll, pitch, yaw] of the INS estimate (world frame), if the robot has one
- ``camera``: the camera image (H x W x 3 uint8), only with ``camera=True`` (rendering is slow)

Action: two numbers in -1..1. ``wheels``: left and right wheel spin as fractions of the robot's
maximum; ``twist``: forward speed and yaw rate (+ left) as fractions of the robot's top speed and
of the yaw rate of its wheels spinning opposite at that speed (converted with its wheel geometry).
Every action is held for ``control_period`` sim seconds (20 physics ticks by default).

Reward (documented in docs/scale.md):

- task ``victim``: metres of progress toward the nearest real victim this step, -0.01 per step,
  -1 per new collision; +10 and the episode ends when the robot's victim sensor sees that victim.
- task ``coverage``: m^2 of floor newly covered by the laser this step (0.1 m cells), -0.01 per
  step, -1 per new collision.
- Both: -10 and the episode ends if the robot tips over (roll or pitch beyond 60 degrees).

``reset(seed=s)`` builds a fresh simulator with noise seed ``s``: the same seed and actions give
the same observations and rewards.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Literal, TypeVar, cast

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from usarsim import rotations
from usarsim.config_loading import ConfigError
from usarsim.ros.commands import twist_to_command
from usarsim.scale.metrics import TrialMetrics
from usarsim.sim.commands import Command, WheelDrive
from usarsim.sim.readings import CameraImage, InsReading, OdometryReading, RangeScan, Reading
from usarsim.sim.simulator import Simulator

STEP_PENALTY = 0.01
COLLISION_PENALTY = 1.0
VICTIM_BONUS = 10.0
TIP_OVER_PENALTY = 10.0
TIP_OVER_ANGLE = math.radians(60.0)
# Sensor types observed when the robot has them, and the reading each gives.
_OPTIONAL: dict[str, type[Reading]] = {"Odometry": OdometryReading, "INS": InsReading}


R = TypeVar("R", bound=Reading)


class UsarsimEnv(gym.Env):
    """A robot in a usarsim world (see the module docstring for spaces and rewards)."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 10}
    observation_space: spaces.Dict  # one entry per observed reading

    def __init__(self, world: str = "yellow", robot: str = "RescueP2AT", start: str | None = None,
                 task: Literal["victim", "coverage"] = "victim", action: Literal["wheels", "twist"] = "wheels",
                 camera: bool = False, control_period: float = 0.1, physics_rate: float = 200.0,
                 render_mode: str | None = None) -> None:
        if task not in ("victim", "coverage"):
            raise ConfigError(f"task must be 'victim' or 'coverage', got {task!r}")
        if action not in ("wheels", "twist"):
            raise ConfigError(f"action must be 'wheels' or 'twist', got {action!r}")
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ConfigError(f"render_mode must be None or 'rgb_array', got {render_mode!r}")
        self.world, self.robot_class, self.start, self.task, self.action_kind = world, robot, start, task, action
        self.camera = camera or render_mode == "rgb_array"
        self.render_mode = render_mode
        self.control_period, self.physics_rate = control_period, physics_rate
        self._sim: Simulator | None = None
        self._probe()

    # --- spaces ----------------------------------------------------------------------------
    def _probe(self) -> None:
        """Spawn the robot once to size the spaces from its sensors."""
        try:
            self._start_sim(seed=0, check=self._check_wheels)
        except Exception:
            self.close()
            raise
        drive = self._robot.spec.drive
        scan = self._latest(RangeScan)
        obs: dict[str, spaces.Space] = {
            "laser": spaces.Box(0.0, scan.range_max, (len(scan.ranges),), np.float32)}
        if OdometryReading in self._observed:
            obs["odometry"] = spaces.Box(-np.inf, np.inf, (5,), np.float32)
        if InsReading in self._observed:
            obs["ins"] = spaces.Box(-np.inf, np.inf, (6,), np.float32)
        if self.camera:
            image = self._latest(CameraImage)
            obs["camera"] = spaces.Box(0, 255, (image.height, image.width, 3), dtype=np.uint8)
        self.observation_space = spaces.Dict(obs)
        # Actions are fractions of the robot's limits: wheel spin, or forward speed and yaw rate.
        top_v = drive.max_wheel_speed * drive.wheel_radius
        self._scale = (np.array([drive.max_wheel_speed] * 2) if self.action_kind == "wheels"
                       else np.array([top_v, 2.0 * top_v / drive.wheel_separation]))
        self.action_space = spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.close()

    def _check_wheels(self) -> None:
        if WheelDrive not in self._robot.drive.accepts or self._robot.spec.drive.max_wheel_speed <= 0:
            raise ConfigError(f"{self.robot_class} is not wheel-driven; the environment drives wheels")

    def _start_sim(self, seed: int, check: Callable[[], None] | None = None) -> None:
        self.close()
        self._sim = sim = Simulator(self.world, physics_rate=self.physics_rate, seed=seed, pacing="lockstep")
        self._robot = sim.spawn(self.robot_class, start=self.start)
        if check is not None:
            check()
        if self.camera:
            for sensor in self._robot.sensors:
                if hasattr(sensor, "active"):
                    sensor.active = True
        self._metrics = TrialMetrics(sim, self._robot)
        sim.add_listener(self._metrics.on_tick)
        self._last: dict[type[Reading], Reading] = {}
        types = {s.type_name for s in self._robot.sensors}
        self._observed = {RangeScan} | {reading for sensor, reading in _OPTIONAL.items() if sensor in types}
        if self.camera:
            self._observed.add(CameraImage)
        for _ in range(round(5.0 / sim.dt)):  # until every observed sensor has reported once
            self._keep(sim.step(1))
            if self._observed <= self._last.keys():
                break
        else:
            missing = ", ".join(t.kind for t in self._observed - self._last.keys())
            raise ConfigError(f"{self.robot_class} gave no {missing} reading in 5 s; it cannot be observed")

    def _keep(self, readings: list[Reading]) -> None:
        for reading in readings:
            if isinstance(reading, RangeScan) and reading.sensor_type != "RangeScanner":
                continue
            self._last[type(reading)] = reading

    # --- gymnasium API ---------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):  # noqa: ANN201
        super().reset(seed=seed)
        sim_seed = seed if seed is not None else int(self.np_random.integers(0, 2**31 - 1))
        self._start_sim(sim_seed)
        self._metrics.sample()
        self._steps_collisions = self._metrics.collisions
        self._area = self._metrics.coverage.area
        self._target = self._nearest_victim()
        self._distance = self._target_distance()
        return self._observation(), self._info()

    def step(self, action: np.ndarray):  # noqa: ANN201
        sim = self._require_sim()
        values = np.asarray(action, dtype=float)
        if values.shape != (2,) or not np.all(np.isfinite(values)):
            raise ValueError(f"action must be two finite numbers, got {action!r}")
        values = np.clip(values, -1.0, 1.0) * self._scale
        sim.submit(self._command(values))
        self._keep(sim.step(max(1, round(self.control_period / sim.dt))))
        self._metrics.sample()
        reward, terminated = self._reward()
        return self._observation(), reward, terminated, False, self._info()

    def render(self) -> np.ndarray | None:
        if self.render_mode != "rgb_array":
            return None
        return self._camera_array()

    def close(self) -> None:
        if self._sim is not None:
            self._sim.close()
            self._sim = None

    # --- internals -------------------------------------------------------------------------
    def _require_sim(self) -> Simulator:
        if self._sim is None:
            raise RuntimeError("call reset() before step()")
        return self._sim

    def _command(self, values: np.ndarray) -> Command:
        name = self._robot.name
        if self.action_kind == "wheels":
            return WheelDrive(name, float(values[0]), float(values[1]))
        return twist_to_command(name, (float(values[0]), 0.0, 0.0), (0.0, 0.0, float(values[1])),
                                self._robot.spec.drive, self._robot.drive.accepts)

    def _latest(self, kind: type[R]) -> R:
        # _last maps each reading type to its latest reading of that type
        return cast(R, self._last[kind])

    def _observation(self) -> dict[str, np.ndarray]:
        scan = self._latest(RangeScan)
        ranges = np.nan_to_num(np.asarray(scan.ranges, dtype=np.float32), nan=scan.range_max, posinf=scan.range_max)
        obs = {"laser": np.clip(ranges, 0.0, scan.range_max).astype(np.float32)}
        if "odometry" in self.observation_space.spaces:
            o = self._latest(OdometryReading)
            obs["odometry"] = np.array([o.x, o.y, o.theta, o.linear_velocity, o.angular_velocity], np.float32)
        if "ins" in self.observation_space.spaces:
            i = self._latest(InsReading)
            obs["ins"] = np.array([*i.position, *i.rpy], np.float32)
        if "camera" in self.observation_space.spaces:
            obs["camera"] = self._camera_array()
        return obs

    def _camera_array(self) -> np.ndarray:
        image = self._latest(CameraImage)
        return np.frombuffer(image.rgb, np.uint8).reshape(image.height, image.width, 3).copy()

    def _nearest_victim(self) -> np.ndarray | None:
        here = self._robot.base.position[:2]
        victims = [np.array(v.spec.xyz[:2]) for v in self._require_sim().world.victims if not v.false_alarm]
        return min(victims, key=lambda v: float(np.linalg.norm(v - here))) if victims else None

    def _target_distance(self) -> float:
        if self._target is None:
            return 0.0
        return float(np.linalg.norm(self._target - self._robot.base.position[:2]))

    def _reward(self) -> tuple[float, bool]:
        m = self._metrics
        reward = -STEP_PENALTY - COLLISION_PENALTY * (m.collisions - self._steps_collisions)
        self._steps_collisions = m.collisions
        terminated = False
        if self.task == "victim":
            distance = self._target_distance()
            reward += self._distance - distance
            self._distance = distance
            if m.victims:
                reward += VICTIM_BONUS
                terminated = True
        else:
            reward += m.coverage.area - self._area
            self._area = m.coverage.area
        roll, pitch, _ = rotations.euler_from_quaternion(self._robot.base.orientation)
        if abs(roll) > TIP_OVER_ANGLE or abs(pitch) > TIP_OVER_ANGLE:
            reward -= TIP_OVER_PENALTY
            terminated = True
        return float(reward), terminated

    def _info(self) -> dict[str, Any]:
        m = self._metrics
        return {"time": self._require_sim().time, "collisions": m.collisions, "area_covered": m.coverage.area,
                "victims_detected": sorted(m.victims), "distance_to_victim": self._distance,
                "distance_driven": m.distance}
