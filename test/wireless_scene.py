"""Worlds built by the wireless tests themselves: a flat floor and the walls a test asks for."""
from __future__ import annotations

from usarsim.sim.world import CommSpec, GpsOrigin, StartPose, StaticItem, WorldSpec


def wall(x: float, *, thickness: float = 0.1, y: float = 0.0, length: float = 4.0, surface: str = "default") -> StaticItem:
    """A 2 m high wall across the x axis, its near face at ``x``."""
    return StaticItem(kind="box", xyz=(x + thickness / 2, y, 1.0), size=(thickness, length, 2.0), surface=surface)


_DEFAULT_COMM = CommSpec()


def scene(*walls: StaticItem, comm: CommSpec = _DEFAULT_COMM, **extra) -> WorldSpec:
    """A world with only ``walls`` (and ``extra`` WorldSpec fields) on a 60 m floor."""
    return WorldSpec(name="walls", description="wireless test scene", gps_origin=GpsOrigin(0.0, 0.0),
                     start_poses=[StartPose("Start1", (0.0, 0.0, 0.0))], static=list(walls), comm=comm, **extra)
