"""RFID releaser: drops RFID tags under the robot (spec sensors.md §18).

``Release`` puts a new tag on the ground below the chassis centre (the
world assigns it a free id in 0..1000) and answers OK with its ``ID``;
``Failed`` when no tags are left. ``TagsRemaining`` answers OK with the
count left. Dropped tags are ordinary world tags: every RFID reader sees
them.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from usarsim.sim.effecters import Effecter, register
from usarsim.sim.devices import CommandResult
from usarsim.sim.sensors.sight import cast_hits

if TYPE_CHECKING:
    from usarsim.sim.catalogue import EffecterSpec
    from usarsim.sim.robot import Robot

# How far below the chassis the floor is searched for, and how high the tag rests on it.
DROP_SEARCH = 3.0
REST_HEIGHT = 0.02


@register("RFIDReleaser")
class RfidReleaser(Effecter):
    """Holds ``num_tags`` tags and releases them one at a time."""

    opcodes: dict[str, tuple[float, float]] = {"Release": (0.0, 0.0), "TagsRemaining": (0.0, 0.0)}
    defaults: ClassVar[dict[str, Any]] = {"num_tags": 10, "weight": 0.4}

    @classmethod
    def checked_params(cls, spec: "EffecterSpec") -> dict[str, Any]:
        prm = super().checked_params(spec)
        count = prm["num_tags"]
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise ValueError(f"effecter '{spec.name}' ({spec.type}): num_tags must be a whole number >= 0, got {count!r}")
        return prm

    def __init__(self, spec: "EffecterSpec", robot: "Robot") -> None:
        super().__init__(spec, robot)
        self.remaining = int(self.checked_params(spec)["num_tags"])
        self.released: list[int] = []

    def drop_position(self) -> tuple[float, float, float]:
        """The ground point below the chassis centre (or the chassis centre over a void)."""
        base = np.asarray(self.robot.base.position, dtype=float)
        below = base - np.array([0.0, 0.0, DROP_SEARCH])
        hits = cast_hits(self.robot.client, base[None, :], below[None, :], ignore={self.robot.body_id})
        if hits.body[0] < 0:
            return (float(base[0]), float(base[1]), float(base[2]))
        return (float(hits.point[0][0]), float(hits.point[0][1]), float(hits.point[0][2] + REST_HEIGHT))

    def command(self, opcode: str, params: tuple[Any, ...]) -> CommandResult:
        op = opcode.upper()
        if op == "TAGSREMAINING":
            return CommandResult(True, (("TagsRemaining", self.remaining),))
        if op != "RELEASE":
            return super().command(opcode, params)
        if self.remaining <= 0:
            return CommandResult(False, message=f"{self.name} has no tags left")
        try:
            tag = self.robot.env.world.add_rfid_tag(self.drop_position())
        except (RuntimeError, ValueError) as exc:  # the world ran out of releaser ids
            return CommandResult(False, message=str(exc))
        self.remaining -= 1
        self.released.append(int(tag.id))
        return CommandResult(True, (("ID", int(tag.id)),))
