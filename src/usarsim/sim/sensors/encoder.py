"""Encoder: tick count of one joint, ticks = angle / resolution (spec sensors.md §9)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pybullet as p

from usarsim.sim import noise
from usarsim.sim.readings import EncoderReading
from usarsim.sim.sensors.base import CommandResult, CommonParams, Sensor
from usarsim.sim.sensors.registry import register


@dataclass
class EncoderParams(CommonParams):
    """USARBot.EncoderSensor keys; ``joint`` names the measured URDF joint."""

    joint: str = ""
    resolution: float = 0.01745
    noise: float = 0.005
    invert: bool = False  # mounted on the other face: opposite sign

    def check(self) -> None:
        super().check()
        if not self.joint:
            raise ValueError("parameter 'joint' is required")


@register("Encoder")
class Encoder(Sensor):
    """Counts ticks since spawn or the last RESET; noise is added before quantising."""

    Params = EncoderParams

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        prm: EncoderParams = self.params  # type: ignore[assignment]
        self._index = self.robot.joint_index(prm.joint)
        self._zero = 0.0

    def _angle(self) -> float:
        return p.getJointState(self.robot.body_id, self._index, physicsClientId=self.robot.client)[0]

    def on_spawned(self, now: float) -> None:
        super().on_spawned(now)
        self._zero = self._angle()

    def read(self, now: float) -> EncoderReading:
        prm: EncoderParams = self.params  # type: ignore[assignment]
        angle = self._angle() - self._zero
        angle = noise.relative_uniform(angle, prm.noise, self.rng)
        ticks = noise.quantize(-angle if prm.invert else angle, prm.resolution)
        return EncoderReading(**self.header(now), joint=prm.joint, ticks=ticks, resolution=prm.resolution)

    def command(self, opcode: str, params: tuple[Any, ...]) -> CommandResult:
        if opcode.upper() == "RESET":
            self._zero = self._angle()
            return CommandResult(True)
        return super().command(opcode, params)
