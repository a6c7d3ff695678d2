"""Effecters (gripper, RFID releaser, roller table ...), one module per family.

Like sensors, a family subclasses ``Effecter`` and registers its type name;
``create`` instantiates the catalogue's ``effecters`` entries.
"""
from __future__ import annotations

import importlib
import pkgutil
from typing import TYPE_CHECKING, Any, Callable, ClassVar

from usarsim.sim.sensors.base import CommandResult

if TYPE_CHECKING:
    from usarsim.sim.catalogue import EffecterSpec
    from usarsim.sim.robot import Robot

_FAMILIES: dict[str, type["Effecter"]] = {}


class Effecter:
    """Base class: answers SET opcodes with a CommandResult."""

    opcodes: ClassVar[dict[str, tuple[float, float]]] = {}  # opcode -> (min, max) for CONF

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


def register(type_name: str) -> Callable[[type[Effecter]], type[Effecter]]:
    """Class decorator registering an effecter family."""

    def decorate(cls: type[Effecter]) -> type[Effecter]:
        _FAMILIES[type_name] = cls
        return cls

    return decorate


def _load_all() -> None:
    for info in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{info.name}")


def known_types() -> list[str]:
    """Every registered effecter type name."""
    _load_all()
    return sorted(_FAMILIES)


def create(spec: "EffecterSpec", robot: "Robot") -> Effecter:
    """Instantiate an effecter; unknown types list the known ones."""
    _load_all()
    try:
        cls = _FAMILIES[spec.type]
    except KeyError:
        raise ValueError(f"unknown effecter type '{spec.type}' (known: {', '.join(sorted(_FAMILIES)) or 'none'})") from None
    return cls(spec, robot)
