"""The sensor base class, its common parameters and command results.

A sensor family is one module in this package; it subclasses ``Sensor``,
declares a ``Params`` dataclass (SI units) and registers itself with
``@register("TypeName", ...)``. The simulator calls ``read`` when the
sensor is due; front doors only format the returned readings.
"""
from __future__ import annotations

import math
import typing
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Sequence

__all__ = ["CommandResult", "CommonParams", "Sensor"]

import numpy as np

from usarsim.sim.commands import CommandError
from usarsim.sim.devices import CommandResult
from usarsim.sim.readings import Reading

if TYPE_CHECKING:
    from usarsim.sim.catalogue import SensorSpec
    from usarsim.sim.robot import Robot
    from usarsim.sim.environment import SensorEnvironment


@dataclass
class CommonParams:
    """Keys every sensor understands (USARBot.ini names in snake case)."""

    scan_interval: float = 0.0  # s; 0 = the robot's message period
    noise: float = 0.0  # relative uniform amplitude
    mean: float = 0.0  # Gaussian mean
    sigma: float = 0.0  # Gaussian standard deviation
    with_timestamp: bool = False
    output_curve: list[list[float]] = field(default_factory=list)
    hidden: bool = True
    weight: float = 0.4
    manual: bool = False  # manual mode: read only on a SCAN command

    def check(self) -> None:
        """Raise ValueError for a value the family cannot work with.

        Runs when the catalogue loads (so a bad entry fails with its file and line,
        not at spawn); families with constraints extend it and call ``super().check()``.
        """
        if self.scan_interval < 0:
            raise ValueError("parameter 'scan_interval' must be >= 0")


class Sensor:
    """Base class of all sensors."""

    Params: ClassVar[type[CommonParams]] = CommonParams
    type_names: ClassVar[tuple[str, ...]] = ()
    # True when several due instances on one robot are cheaper sampled together (sample_batch)
    batchable: ClassVar[bool] = False

    def __init__(self, spec: "SensorSpec", params: CommonParams, robot: "Robot",
                 env: "SensorEnvironment", rng: np.random.Generator) -> None:
        self.spec = spec
        self.params = params
        self.robot = robot
        self.env = env
        self.rng = rng  # noise draws (noise.NoNoise when sensor noise is off)
        self.layout_rng: np.random.Generator = getattr(rng, "layout", rng)  # draws that are not noise
        self.name = spec.name
        self.type_name = spec.type
        self.frame = spec.frame_id
        self.interval = params.scan_interval if params.scan_interval > 0 else robot.spec.msg_period
        self.next_time = 0.0
        self._scan_requested = False

    def due(self, now: float) -> bool:
        """True when an automatic (or requested manual) reading is due at sim time ``now``."""
        if self.params.manual:
            return self._scan_requested
        return now + 1e-9 >= self.next_time

    def next_due(self) -> float:
        """Earliest sim time of the next automatic reading (inf for manual sensors)."""
        return math.inf if self.params.manual else self.next_time

    def mark_sampled(self, now: float) -> None:
        """Schedule the next reading after one taken at ``now``."""
        self._scan_requested = False
        if not self.params.manual:
            # keep a fixed cadence; skip missed slots instead of bursting
            self.next_time += self.interval
            if self.next_time <= now:
                self.next_time = now + self.interval

    @classmethod
    def reading_type(cls) -> type[Reading]:
        """The reading type this family produces: the return annotation of its ``read``.

        The front doors key their records on it (docs/architecture.md, adding a sensor).
        """
        return typing.get_type_hints(cls.read)["return"]

    @classmethod
    def sample_batch(cls, sensors: Sequence["Sensor"], now: float) -> list[Reading]:
        """Readings of several due sensors of this class at once (for ``batchable`` classes)."""
        return [r for s in sensors for r in s.sample(now)]

    def sample(self, now: float) -> Sequence[Reading]:
        """Produce the readings due at ``now`` and schedule the next one."""
        self.mark_sampled(now)
        reading = self.read(now)
        if reading is None:
            return ()
        return reading if isinstance(reading, (list, tuple)) else (reading,)

    def read(self, now: float) -> Reading | Sequence[Reading] | None:
        """Compute a reading (override)."""
        raise CommandError(f"sensor type {self.type_name} produces no readings")

    def command(self, opcode: str, params: tuple[Any, ...]) -> CommandResult:
        """Handle a SET opcode; the base class knows SCAN for manual-mode sensors."""
        if opcode.upper() == "SCAN":
            self._scan_requested = True
            self.robot.wake_sensors()
            return CommandResult(True)
        return CommandResult(False, message=f"{self.type_name} '{self.name}' has no opcode '{opcode}'")

    def on_spawned(self, now: float) -> None:
        """Called once the robot has settled on the ground (override to capture a reference)."""
        self.next_time = now

    def header(self, now: float) -> dict[str, Any]:
        """Common reading header fields."""
        return {"time": now, "robot": self.robot.name, "sensor": self.name, "frame": self.frame}
