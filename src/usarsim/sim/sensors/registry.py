"""Registry of sensor families: type name -> Sensor subclass.

Every module of ``usarsim.sim.sensors`` is imported on first use (``usarsim.sim.plugins``),
so a new family only needs its own module and a ``@register`` decorator.
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Callable

import numpy as np

from usarsim.sim.plugins import Registry
from usarsim.sim.sensors.base import CommonParams, Sensor

if TYPE_CHECKING:
    from usarsim.sim.catalogue import SensorSpec
    from usarsim.sim.environment import SensorEnvironment
    from usarsim.sim.robot import Robot

SENSORS: Registry[type[Sensor]] = Registry("sensor", "usarsim.sim.sensors", skip=("base", "registry"))


def register(*type_names: str) -> Callable[[type[Sensor]], type[Sensor]]:
    """Class decorator registering a sensor family under its wire type names."""

    def decorate(cls: type[Sensor]) -> type[Sensor]:
        cls.type_names = tuple(type_names)
        return SENSORS.register(*type_names)(cls)

    return decorate


def known_types() -> list[str]:
    """Every registered sensor type name."""
    return SENSORS.known()


def family(type_name: str) -> type[Sensor]:
    """The class for a type name; KeyError lists the known types."""
    return SENSORS.get(type_name)


def is_camera(type_name: str) -> bool:
    """True for image-producing families (the plain camera and its kinds, e.g. the omnidirectional one)."""
    from usarsim.sim.sensors.camera import Camera

    try:
        return issubclass(family(type_name), Camera)
    except KeyError:
        return False


def params_for(spec: "SensorSpec") -> CommonParams:
    """Validated Params for a sensor spec (unknown keys and non-numbers rejected)."""
    cls = family(spec.type).Params
    fields = {f.name: f for f in dataclasses.fields(cls)}
    for key, value in spec.params.items():
        if key not in fields:
            raise ValueError(f"unknown parameter '{key}' (known: {', '.join(sorted(fields))})")
        default = _default_of(fields[key])
        if isinstance(default, (int, float)) and not isinstance(default, bool):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError(f"parameter '{key}' must be a number, got {value!r}")
        if isinstance(default, bool) and not isinstance(value, bool):
            raise ValueError(f"parameter '{key}' must be true or false, got {value!r}")
    params = cls(**spec.params)
    params.check()
    return params


def _default_of(f: dataclasses.Field) -> object:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
        return f.default_factory()  # type: ignore[misc]
    return None


def create(spec: "SensorSpec", robot: "Robot", env: "SensorEnvironment", rng: np.random.Generator) -> Sensor:
    """Instantiate the sensor described by ``spec`` on ``robot``."""
    cls = family(spec.type)
    return cls(spec, params_for(spec), robot, env, rng)
