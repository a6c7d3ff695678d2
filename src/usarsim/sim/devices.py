"""Types shared by every device family (sensors, effecters): command results, the effecter base.

Neutral ground: sensors and effecters both import from here and never from each other.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from usarsim.sim.catalogue import EffecterSpec
    from usarsim.sim.robot import Robot


@dataclass(frozen=True)
class CommandResult:
    """Outcome of a sensor/effecter opcode: OK or Failed plus extra reply fields."""

    ok: bool
    fields: tuple[tuple[str, Any], ...] = ()
    message: str = ""


class Effecter:
    """Base class: answers SET opcodes with a CommandResult."""

    # opcode -> (min, max) for CONF; an effecter whose ranges come from its parameters sets its own
    opcodes: dict[str, tuple[float, float]] = {}
    # the catalogue parameters the family knows, with their defaults
    defaults: ClassVar[dict[str, Any]] = {}

    @classmethod
    def checked_params(cls, spec: "EffecterSpec") -> dict[str, Any]:
        """The entry's params over ``defaults``; ValueError for one the family cannot use.

        Runs when the catalogue loads (errors carry file:line) and again at spawn; families with
        constraints extend it."""
        return effecter_params(spec, cls.defaults)

    def __init__(self, spec: "EffecterSpec", robot: "Robot") -> None:
        self.spec = spec
        self.robot = robot
        self.name = spec.name
        self.type_name = spec.type

    def update(self, dt: float) -> None:
        """Per-tick work before the physics step (e.g. a gripper catching an object); default none."""

    def command(self, opcode: str, params: tuple[Any, ...]) -> CommandResult:
        """Handle an opcode (override)."""
        return CommandResult(False, message=f"{self.type_name} '{self.name}' has no opcode '{opcode}'")


def effecter_params(spec: "EffecterSpec", defaults: dict[str, Any]) -> dict[str, Any]:
    """The catalogue entry's params over the family's ``defaults``; unknown names and values of
    another kind than the default's (a word for a number, a number for a joint name) are refused."""
    unknown = set(spec.params) - set(defaults)
    if unknown:
        raise ValueError(f"effecter '{spec.name}' ({spec.type}): unknown parameter(s) "
                         f"{', '.join(sorted(unknown))} (known: {', '.join(sorted(defaults))})")
    for name, value in spec.params.items():
        if isinstance(defaults[name], float) and not _finite_number(value):
            raise ValueError(f"effecter '{spec.name}' ({spec.type}): {name} must be a finite number, got {value!r}")
        if isinstance(defaults[name], str) and not isinstance(value, str):
            raise ValueError(f"effecter '{spec.name}' ({spec.type}): {name} must be a name, got {value!r}")
    return {**defaults, **spec.params}


def _finite_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
