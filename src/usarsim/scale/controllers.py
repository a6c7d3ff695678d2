"""How a trial's robot is driven: a controller entry point, a drive script, or constant wheel speeds.

A controller is called in lockstep every ``control_period`` of sim time with a ``ControlStep``
(the readings produced since its last call) and returns what to do next: a core ``Command``, a
list of them, a ``(left, right)`` wheel-speed pair, or None to keep the last command. An entry
point naming a class is instantiated once per trial, so controllers can keep state.
"""
from __future__ import annotations

import importlib
import sys
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

from usarsim.config_loading import ConfigError
from usarsim.sim.commands import Command, CommandError, WheelDrive
from usarsim.sim.readings import Reading
from usarsim.scale.sweep_file import DriveSegment, SweepSpec


@dataclass(frozen=True)
class ControlStep:
    """What a controller sees at one call."""

    time: float  # sim seconds
    robot: str  # the robot's name: commands address it
    robot_class: str
    seed: int  # the trial's seed, for controllers that randomise
    readings: Sequence[Reading]  # every reading since the previous call, in order


Controller = Callable[[ControlStep], Any]


def load_entry_point(ref: str, search_dir: str = "") -> Any:
    """The object named by ``module:attr``; ``search_dir`` (the sweep file's folder) is importable too."""
    module_name, _, attr = ref.partition(":")
    if search_dir and search_dir not in sys.path:
        sys.path.append(search_dir)
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(f"controller {ref!r}: cannot import {module_name!r}: {exc}") from exc
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ConfigError(f"controller {ref!r}: {module_name!r} has no {attr!r}") from None
    if not callable(obj):
        raise ConfigError(f"controller {ref!r} is not callable")
    return obj


def make_controller(sweep: SweepSpec) -> Controller:
    """A fresh controller for one trial."""
    if sweep.controller:
        target = load_entry_point(sweep.controller, sweep.base_dir)
        return target() if isinstance(target, type) else target
    if sweep.script:
        return ScriptController(sweep.script)
    left, right = sweep.drive or (0.0, 0.0)
    return lambda step: (left, right)


class ScriptController:
    """Drive script: each segment's wheel speeds until its end time, then stop."""

    def __init__(self, segments: Sequence[DriveSegment]) -> None:
        self._segments = list(segments)

    def __call__(self, step: ControlStep) -> tuple[float, float]:
        for segment in self._segments:
            if step.time < segment.until:
                return segment.drive
        return (0.0, 0.0)


def as_commands(result: Any, robot: str) -> list[Command]:
    """A controller's answer as commands (a bad answer raises CommandError naming what came back)."""
    if result is None:
        return []
    if isinstance(result, Command):
        return [result]
    if isinstance(result, tuple) and len(result) == 2 and all(isinstance(v, (int, float)) for v in result):
        return [WheelDrive(robot, float(result[0]), float(result[1]))]
    if isinstance(result, Iterable) and not isinstance(result, (str, bytes)):
        items = list(result)
        if all(isinstance(c, Command) for c in items):
            return items
    raise CommandError(f"a controller must return a Command, a list of Commands, (left, right) or None; "
                       f"got {type(result).__name__}: {result!r:.80}")
