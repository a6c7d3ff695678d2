"""The ROS-free simulator core: worlds, robots, sensors, physics stepping.

Public surface (docs/architecture.md)::

    from usarsim.sim import Simulator, load_world, load_robot, CommandError
    from usarsim.sim import readings, commands   # the typed data crossing the boundary

Names resolve on first use, so importing one core module does not load them all.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from usarsim.sim.quiet import quiet_stderr, quiet_stdout

with quiet_stdout(), quiet_stderr():
    import pybullet  # noqa: F401  (its first import prints a build banner on stdout or stderr)

if TYPE_CHECKING:
    from usarsim.sim import commands, readings
    from usarsim.sim.catalogue import RobotSpec, SensorSpec, available_robots, load_robot
    from usarsim.sim.commands import Command, CommandError
    from usarsim.sim.readings import Reading
    from usarsim.sim.robot import Robot
    from usarsim.sim.simulator import Simulator
    from usarsim.sim.world import WorldSpec, available_worlds, load_world

# public name -> module that defines it
_EXPORTS: dict[str, str] = {
    "Simulator": "usarsim.sim.simulator",
    "Robot": "usarsim.sim.robot",
    "WorldSpec": "usarsim.sim.world",
    "load_world": "usarsim.sim.world",
    "available_worlds": "usarsim.sim.world",
    "RobotSpec": "usarsim.sim.catalogue",
    "SensorSpec": "usarsim.sim.catalogue",
    "load_robot": "usarsim.sim.catalogue",
    "available_robots": "usarsim.sim.catalogue",
    "Command": "usarsim.sim.commands",
    "CommandError": "usarsim.sim.commands",
    "Reading": "usarsim.sim.readings",
}
_SUBMODULES = ("commands", "readings")

__all__ = [  # what _EXPORTS and _SUBMODULES resolve
    "Command", "CommandError", "Reading", "Robot", "RobotSpec", "SensorSpec", "Simulator", "WorldSpec",
    "available_robots", "available_worlds", "commands", "load_robot", "load_world", "readings",
]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
