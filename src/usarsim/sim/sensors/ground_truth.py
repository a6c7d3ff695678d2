"""GroundTruth: the exact chassis pose and twist (for evaluation; no noise)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from usarsim import rotations
from usarsim.sim.readings import GroundTruthReading
from usarsim.sim.sensors.base import CommonParams, Sensor
from usarsim.sim.sensors.registry import register

if TYPE_CHECKING:
    from usarsim.sim.robot import Robot


@dataclass
class GroundTruthParams(CommonParams):
    """Only the rate is configurable."""

    scan_interval: float = 0.1


@register("GroundTruth")
class GroundTruth(Sensor):
    """Exact world pose of base_link."""

    Params = GroundTruthParams

    def read(self, now: float) -> GroundTruthReading:
        return ground_truth_of(self.robot, **self.header(now))


def ground_truth_of(body: "Robot", **header: Any) -> GroundTruthReading:
    """The exact pose and twist of ``body``'s base_link frame (not its merged centre of mass)."""
    base = body.base
    position, velocity = body.base_link_motion()
    return GroundTruthReading(**header, position=rotations.vec3(position), orientation=rotations.quat(base.orientation),
                              linear_velocity=rotations.vec3(velocity),
                              angular_velocity=rotations.vec3(base.angular_velocity))
