"""GroundTruth: the exact chassis pose and twist (for evaluation; no noise)."""
from __future__ import annotations

from dataclasses import dataclass

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
        return GroundTruthReading(**self.header(now), position=tuple(float(v) for v in base.position),
                                  orientation=tuple(float(v) for v in base.orientation),
                                  linear_velocity=tuple(float(v) for v in base.linear_velocity),
                                  angular_velocity=tuple(float(v) for v in base.angular_velocity))
