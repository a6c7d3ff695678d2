"""What sensors may see of the simulation besides their own robot."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from usarsim.sim.reach import ReachSolvers

if TYPE_CHECKING:
    from usarsim.sim.world import BuiltWorld


@dataclass
class SensorEnvironment:
    """PyBullet client, the built world and simulation constants shared by all sensors."""

    client: int
    world: "BuiltWorld"
    gravity: float
    physics_dt: float
    seed: int
    robot_body_ids: Callable[[], set[int]]
    render_options: dict[str, Any]
    noise: bool = True  # False: every sensor reads the true value (noise.NoNoise)
    # inverse kinematics for MISPKG terminal poses, shared by this simulation's robots
    reach: ReachSolvers = field(default_factory=ReachSolvers)
