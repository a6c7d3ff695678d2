"""Human motion (pyroelectric) sensor: probability of seeing a moving person (spec sensors.md §14).

USARSim gives no formula, so ours is (documented as a project choice)::

    p = clamp((1 - d / max_range) * min(1, speed / v_ref) * min(1, amplitude / a_ref), 0, 1)

for the closest moving victim whose parts are inside the cone of full angle
``fov`` around the sensor's +x axis, within ``max_range`` and in line of sight
(walls block infrared). ``d`` is the distance to that victim's nearest visible
part; speed and amplitude come from the victim's animation. False-alarm
objects are not warm bodies and never trigger it. Then relative uniform
``noise``, a clamp to [0, 1] (it is a probability) and the output curve.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from usarsim.sim import noise
from usarsim.sim.readings import HumanMotionReading
from usarsim.sim.sensors.base import CommonParams, Sensor
from usarsim.sim.sensors.registry import register
from usarsim.sim.sensors.sight import line_of_sight


@dataclass
class HumanMotionParams(CommonParams):
    """USARBot.HumanMotionSensor keys in metres and radians. The manual's ini gives MaxRange=1000 and
    FOV=60 unconverted: 1000 Unreal units are 4 m (250 UU = 1 m), and 60 only makes sense as degrees
    (as a rotator it would be a third of a degree); docs/sensors.md."""

    max_range: float = 1000.0 / 250.0
    fov: float = math.radians(60.0)  # full cone angle
    noise: float = 0.1
    v_ref: float = 0.5  # m/s of motion speed that saturates the speed factor
    a_ref: float = 0.2  # m of motion amplitude that saturates the amplitude factor

    def check(self) -> None:
        super().check()
        if self.max_range <= 0 or self.v_ref <= 0 or self.a_ref <= 0:
            raise ValueError("max_range, v_ref and a_ref must be positive")


def motion_probability(distance: float, speed: float, amplitude: float, max_range: float,
                       v_ref: float, a_ref: float) -> float:
    """The model's probability before noise (0 when out of range or still)."""
    if distance > max_range or speed <= 0.0 or amplitude <= 0.0:
        return 0.0
    p = (1.0 - distance / max_range) * min(1.0, speed / v_ref) * min(1.0, amplitude / a_ref)
    return min(1.0, max(0.0, p))


def victim_points(victim: Any) -> list[tuple[float, float, float]]:
    """World positions to test for a victim: its parts, or its position when it has none."""
    points = [tuple(pos) for _, pos in victim.parts()]
    return points or [tuple(victim.position)]


@register("HumanMotion")
class HumanMotion(Sensor):
    """Reports the probability of human motion from the closest moving victim in view."""

    Params = HumanMotionParams

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        prm: HumanMotionParams = self.params  # type: ignore[assignment]
        self._curve = noise.curve_from_params(prm.output_curve, 1.0)

    def closest_moving(self) -> tuple[Any, float] | None:
        """(victim, distance) of the closest moving, visible victim in the cone, or None."""
        prm: HumanMotionParams = self.params  # type: ignore[assignment]
        origin, rot = self.robot.mount_pose(self.spec.mount)
        axis = rot[:, 0]
        cos_half = math.cos(min(prm.fov, 2.0 * math.pi) / 2.0)
        candidates: list[tuple[Any, np.ndarray, np.ndarray]] = []  # victim, in-cone points, distances
        for victim in self.env.world.victims:
            if victim.false_alarm:
                continue
            speed, amplitude = victim.motion()
            if speed <= 0.0 or amplitude <= 0.0:
                continue
            points = np.array(victim_points(victim), dtype=float)
            offsets = points - origin
            dist = np.linalg.norm(offsets, axis=1)
            with np.errstate(invalid="ignore", divide="ignore"):
                inside = (dist <= prm.max_range) & ((offsets @ axis) >= cos_half * dist)
            if inside.any():
                candidates.append((victim, points[inside], dist[inside]))
        if not candidates:
            return None
        targets = np.concatenate([pts for _, pts, _ in candidates])
        owners = [victim for victim, pts, _ in candidates for _ in range(len(pts))]
        world = self.env.world

        def own_part(i: int, body: int, link: int) -> bool:
            # a victim's own limb in front of the part aimed at does not hide the victim
            hit = world.victim_part_at(body, link)
            return hit is not None and hit[0] is owners[i]

        clear = line_of_sight(self.env.client, origin, targets, ignore={self.robot.body_id},
                              hit_is_target=own_part)
        best: tuple[Any, float] | None = None
        k = 0
        for victim, pts, dist in candidates:
            visible = dist[clear[k:k + len(pts)]]
            k += len(pts)
            if len(visible) and (best is None or visible.min() < best[1]):
                best = (victim, float(visible.min()))
        return best

    def read(self, now: float) -> HumanMotionReading:
        prm: HumanMotionParams = self.params  # type: ignore[assignment]
        found = self.closest_moving()
        p = 0.0
        if found is not None:
            victim, distance = found
            speed, amplitude = victim.motion()
            p = motion_probability(distance, speed, amplitude, prm.max_range, prm.v_ref, prm.a_ref)
        p = noise.relative_uniform(p, prm.noise, self.rng)
        p = noise.gaussian(p, prm.mean, prm.sigma, self.rng)
        p = float(self._curve(min(1.0, max(0.0, p))))
        return HumanMotionReading(**self.header(now), probability=p)
