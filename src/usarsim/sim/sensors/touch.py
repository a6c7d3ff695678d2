"""Touch: a round button that reports contact closer than 4.7 mm (spec sensors.md §10)."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from usarsim.sim.raycast import ray_test
from usarsim.sim.readings import TouchReading
from usarsim.sim.sensors.base import CommonParams, Sensor
from usarsim.sim.sensors.registry import register


@dataclass
class TouchParams(CommonParams):
    """Button diameter and trigger distance (m)."""

    diameter: float = 0.01
    distance: float = 0.0047


@register("Touch")
class Touch(Sensor):
    """Five rays from the button face along its normal (+x of the mount)."""

    Params = TouchParams

    def read(self, now: float) -> TouchReading:
        prm: TouchParams = self.params  # type: ignore[assignment]
        origin, rot = self.robot.mount_pose(self.spec.mount)
        r = prm.diameter / 2.0
        offsets = [(0.0, 0.0, 0.0)] + [(0.0, r * math.cos(a), r * math.sin(a)) for a in (0, math.pi / 2, math.pi, 1.5 * math.pi)]
        starts = origin + np.array(offsets) @ rot.T
        ends = starts + rot[:, 0] * prm.distance
        hits = ray_test(self.env.client, starts, ends)
        touched = any(h[0] >= 0 and h[0] != self.robot.body_id for h in hits)
        return TouchReading(**self.header(now), touched=touched)
