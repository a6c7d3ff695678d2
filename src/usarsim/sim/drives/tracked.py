"""Tracked drive: each track is a row of rollers (as USARSim simulated tracks).

A real track moves every point of its belt at one speed, whatever the radius
of the pulley under it. Rollers of different sizes (the tapering rollers of a
flipper) therefore spin at ``track_speed / roller_radius`` so that all their
surfaces move together; with equal spin speeds the small rollers would brake
the big ones. The command keeps USARSim's meaning: ``DRIVE {Left} {Right}`` is
the spin speed (rad/s) of a roller of ``drive.wheel_radius`` (the sprocket).
"""
from __future__ import annotations

from typing import TYPE_CHECKING


from usarsim.sim.drives.base import SkidSteerDrive
from usarsim.sim.drives.registry import DRIVES

if TYPE_CHECKING:
    from usarsim.sim.robot import Robot


def roller_spin_scales(sprocket_radius: float, radii: list[float]) -> list[float]:
    """Spin-speed factor per roller so every roller surface moves at the sprocket's surface speed."""
    return [sprocket_radius / r if r > 0 else 1.0 for r in radii]


@DRIVES.register("tracked")
class TrackedDrive(SkidSteerDrive):
    """Skid steering of two tracks made of rollers, with equal belt speed on every roller of a side."""

    def __init__(self, robot: "Robot") -> None:
        radii = {w.joint: w.radius for w in robot.spec.body.wheels}
        drive = robot.spec.drive
        sprocket = drive.wheel_radius
        # set before the base class sends its first (zero) command
        self.left_scale = roller_spin_scales(sprocket, [radii.get(j, sprocket) for j in drive.left_wheels])
        self.right_scale = roller_spin_scales(sprocket, [radii.get(j, sprocket) for j in drive.right_wheels])
        super().__init__(robot)



__all__ = ["TrackedDrive", "roller_spin_scales"]
