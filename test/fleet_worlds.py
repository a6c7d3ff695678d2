"""Worlds the fleet tests build for themselves: a deep pool with water, a flat floor, and steps to climb."""
from __future__ import annotations

import pybullet as p

from usarsim.sim.water import WaterSpec as WaterVolume
from usarsim.sim.world import FloorSpec, GpsOrigin, StartPose, WorldSpec

POOL_SURFACE = 12.0  # m above the pool floor
DECLINATION = 0.2  # rad, magnetic north east of true north
ARENA_FRICTION = 1.0  # lateral friction of the arenas' surfaces (FloorSpec.friction's default)


def pool_world() -> WorldSpec:
    """A 300 m square pool, 12 m deep, with a magnetic declination for compasses."""
    return WorldSpec(name="pool", description="test pool", gps_origin=GpsOrigin(45.0, 7.0),
                     start_poses=[StartPose("Start", (0.0, 0.0, 0.0))],
                     floor=FloorSpec(size=(300.0, 300.0)), magnetic_declination=DECLINATION,
                     water=[WaterVolume((0.0, 0.0), (300.0, 300.0), POOL_SURFACE, 0.0)])


def dry_world() -> WorldSpec:
    """A flat floor with a magnetic declination (compass tests)."""
    return WorldSpec(name="dry", description="test floor", gps_origin=GpsOrigin(45.0, 7.0),
                     start_poses=[StartPose("Start", (0.0, 0.0, 0.0))], magnetic_declination=DECLINATION)


def add_step(sim, front: float, length: float, top: float) -> None:
    """A 3 m wide box with arena friction from x = ``front`` to ``front + length``, ``top`` high, in ``sim``."""
    shape = p.createCollisionShape(p.GEOM_BOX, halfExtents=[length / 2, 1.5, top / 2], physicsClientId=sim.client)
    box = p.createMultiBody(0, shape, basePosition=[front + length / 2, 0.0, top / 2], physicsClientId=sim.client)
    p.changeDynamics(box, -1, lateralFriction=ARENA_FRICTION, physicsClientId=sim.client)
