"""Effecters (gripper, RFID releaser, roller table ...), one module per family.

Like sensors, a family subclasses ``Effecter`` (``usarsim.sim.devices``) and registers its
type name with ``@register``; ``create`` instantiates the catalogue's ``effecters`` entries.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from usarsim.sim.devices import CommandResult, Effecter
from usarsim.sim.plugins import Registry

if TYPE_CHECKING:
    from usarsim.sim.catalogue import EffecterSpec
    from usarsim.sim.robot import Robot

__all__ = ["CommandResult", "EFFECTERS", "Effecter", "create", "family", "known_types", "register"]

EFFECTERS: Registry[type[Effecter]] = Registry("effecter", __name__)


def register(type_name: str) -> Callable[[type[Effecter]], type[Effecter]]:
    """Class decorator registering an effecter family."""
    return EFFECTERS.register(type_name)


def known_types() -> list[str]:
    """Every registered effecter type name."""
    return EFFECTERS.known()


def family(spec: "EffecterSpec") -> type[Effecter]:
    """The class of an entry's type; ValueError lists the known ones."""
    try:
        return EFFECTERS.get(spec.type)
    except KeyError as exc:
        raise ValueError(f"effecter '{spec.name}': {exc.args[0]}") from None


def create(spec: "EffecterSpec", robot: "Robot") -> Effecter:
    """Instantiate an effecter; unknown types list the known ones."""
    return family(spec)(spec, robot)
