"""Props: passive bodies spawned from a URDF the user passes (a file path or the URDF text).

A prop has no drive, sensors or joints under control; it takes part in physics and ray casts
like any world object and can be posed, listed and removed by name, as robots can.
"""
from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import pybullet as p

from usarsim import rotations
from usarsim.sim.commands import CommandError
from usarsim.sim.quiet import quiet_stdout


@dataclass
class Prop:
    """A spawned passive body."""

    name: str
    body_id: int
    spawn_position: tuple[float, float, float]
    spawn_orientation: tuple[float, float, float, float]
    source: str  # the path, or "<urdf string>"


def load_prop(client: int, name: str, urdf: str, position: Sequence[float],
              orientation: Sequence[float]) -> Prop:
    """Load ``urdf`` (a path to a .urdf file, or URDF text starting with '<') at a world pose."""
    text = urdf.strip()
    if not text:
        raise CommandError("no URDF given")
    if text.startswith("<"):
        # PyBullet reads URDFs from files only; relative mesh paths resolve from the working directory
        fd, path = tempfile.mkstemp(suffix=".urdf", prefix="usarsim-prop-")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        source = "<urdf string>"
    else:
        path = text[len("file://"):] if text.startswith("file://") else text
        if not Path(path).is_file():
            raise CommandError(f"URDF file not found: {path}")
        source = path
    try:
        with quiet_stdout():
            body = p.loadURDF(path, tuple(position), tuple(orientation), physicsClientId=client)
    except p.error as exc:
        raise CommandError(f"cannot load the URDF ({source}): {exc}") from None
    finally:
        if source == "<urdf string>":
            os.unlink(path)
    return Prop(name, body, rotations.vec3(position), rotations.quat(orientation), source)


def set_body_state(client: int, body: int, position: Sequence[float] | None = None,
                   orientation: Sequence[float] | None = None, linear: Sequence[float] | None = None,
                   angular: Sequence[float] | None = None) -> None:
    """Teleport a body and/or set its velocity (world frame); parts left None keep their value."""
    if position is not None or orientation is not None:
        pos, orn = p.getBasePositionAndOrientation(body, physicsClientId=client)
        p.resetBasePositionAndOrientation(body, tuple(position) if position is not None else pos,
                                          tuple(orientation) if orientation is not None else orn,
                                          physicsClientId=client)
    if linear is not None or angular is not None:
        lin, ang = p.getBaseVelocity(body, physicsClientId=client)
        p.resetBaseVelocity(body, tuple(linear) if linear is not None else lin,
                            tuple(angular) if angular is not None else ang, physicsClientId=client)


def body_bounds(client: int, body: int) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
    """World-axis-aligned bounding box (min corner, max corner) of a body and all its links."""
    lo, hi = p.getAABB(body, -1, physicsClientId=client)
    lo, hi = list(lo), list(hi)
    for link in range(p.getNumJoints(body, physicsClientId=client)):
        a, b = p.getAABB(body, link, physicsClientId=client)
        lo = [min(x, y) for x, y in zip(lo, a)]
        hi = [max(x, y) for x, y in zip(hi, b)]
    return (lo[0], lo[1], lo[2]), (hi[0], hi[1], hi[2])
