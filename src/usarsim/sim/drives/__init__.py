"""Drive models: turn typed drive commands into PyBullet motor commands.

One class per steering type, one module per vehicle family (``base``: skid steering,
``vehicle``: Ackermann and rotary wing, ``tracked``), each registered with
``@DRIVES.register("<drive.type>")``. ``drive_for(robot)`` picks the class from the
catalogue's ``drive.type``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from usarsim.sim.commands import CommandError
from usarsim.sim.drives.base import (Drive, NoDrive, SkidSteerDrive, bicycle_steer, clamp, denormalize,
                                     twist_to_wheel_speeds, wheel_speeds_to_twist)
from usarsim.sim.drives.registry import DRIVES

if TYPE_CHECKING:
    from usarsim.sim.robot import Robot

__all__ = ["DRIVES", "Drive", "NoDrive", "SkidSteerDrive", "bicycle_steer", "clamp", "denormalize", "drive_for",
           "known_types", "twist_to_wheel_speeds", "wheel_speeds_to_twist"]


def known_types() -> list[str]:
    """Every registered ``drive.type``."""
    return DRIVES.known()


def drive_for(robot: "Robot") -> Drive:
    """Instantiate the drive model for a robot's catalogue entry."""
    drive_type = robot.spec.drive.type
    if drive_type not in DRIVES.known():
        raise CommandError(f"drive type '{drive_type}' is not supported (known: {', '.join(DRIVES.known())})")
    return DRIVES.get(drive_type)(robot)
