"""Sound sensor: the loudest victim heard at the sensor (spec sensors.md §15).

Victims are the only sound sources (``sound_db`` = loudness at 1 m, None =
silent). Intensity falls with the square of distance, which in decibels is
``L = L1m - 20 * log10(d)``. Obstacles are ignored, as in USARSim. Then
relative uniform ``noise`` and the output curve: with the default identity
curve over 0..1000 dB anything quieter than 0 dB reads 0 (inaudible).

``Duration`` is how long the reported source has been the loudest one heard
without interruption (s); USARSim reported the length of the victim's sound
clip, which our victims do not have. It restarts at 0 when the loudest
source changes or when nothing is heard.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from usarsim.sim import noise
from usarsim.sim.readings import SoundReading
from usarsim.sim.sensors.base import CommonParams, Sensor
from usarsim.sim.sensors.registry import register

# Closer than this the point-source law is not meaningful (the victim's own size).
MIN_DISTANCE = 0.1


@dataclass
class SoundParams(CommonParams):
    """USARBot.SoundSensor keys (dB, s)."""

    noise: float = 0.05
    max_loudness: float = 1000.0  # upper end of the default output curve


def loudness_at(source_db: float, distance: float) -> float:
    """Loudness (dB) of a source of ``source_db`` at 1 m heard from ``distance`` m (1/d^2 law)."""
    return source_db - 20.0 * math.log10(max(distance, MIN_DISTANCE))


@register("Sound")
class SoundSensor(Sensor):
    """Reports the loudest victim sound at the sensor position and how long it has lasted."""

    Params = SoundParams

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        prm: SoundParams = self.params  # type: ignore[assignment]
        self._curve = noise.curve_from_params(prm.output_curve, prm.max_loudness)
        self._source: str | None = None
        self._since = 0.0

    def loudest(self) -> tuple[str, float] | None:
        """(victim id, loudness dB) of the loudest audible source, or None."""
        origin, _ = self.robot.mount_pose(self.spec.mount)
        best: tuple[str, float] | None = None
        for victim in self.env.world.victims:
            if victim.sound_db is None:
                continue
            level = loudness_at(float(victim.sound_db), float(np.linalg.norm(np.asarray(victim.position) - origin)))
            if best is None or level > best[1]:
                best = (victim.id, level)
        return best

    def read(self, now: float) -> SoundReading:
        prm: SoundParams = self.params  # type: ignore[assignment]
        found = self.loudest()
        level = found[1] if found is not None else 0.0
        level = noise.relative_uniform(level, prm.noise, self.rng)
        level = noise.gaussian(level, prm.mean, prm.sigma, self.rng)
        level = float(self._curve(level))
        source = found[0] if found is not None and level > 0.0 else None
        if source != self._source:
            self._source, self._since = source, now
        duration = now - self._since if source is not None else 0.0
        return SoundReading(**self.header(now), loudness=level, duration=duration)
