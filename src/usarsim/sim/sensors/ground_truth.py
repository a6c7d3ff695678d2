"""GroundTruth: the exact chassis pose and twist (for evaluation; no noise)."""
from __future__ import annotations

from dataclasses import dataclass

from usarsim import rotations
from usarsim.sim.readings import GroundTruthReading
from usarsim.sim.sensors.base import CommonParams, Sensor
from usarsim.sim.sensors.registry import register


@dataclass
class GroundTruthParams(CommonParams):
    """Only the rate is configurable."""

    scan_interval: float = 0.1


@register("GroundTruth")
class GroundTruth(Sensor):
    """Exact world pose of base_link."""

    Params = GroundTruthParams

    def read(self, now: float) -> GroundTruthReading:
        base = self.robot.base
        return GroundTruthReading(**self.header(now), position=rotations.vec3(base.position),
                                  orientation=rotations.quat(base.orientation),
                                  linear_velocity=rotations.vec3(base.linear_velocity),
                                  angular_velocity=rotations.vec3(base.angular_velocity))
