"""Noise and distortion models of the USARSim sensors (spec sensors.md §1.3).

Pure functions over NumPy generators so they can be tested alone and so
that every sensor draws from its own seeded stream.
"""
from __future__ import annotations

import bisect
import zlib
from dataclasses import dataclass
from typing import Sequence, TypeVar

import numpy as np


# A scalar in gives a float out, an array an array (the models work on both).
Values = TypeVar("Values", np.ndarray, float)


def sensor_rng(seed: int, robot: str, sensor: str) -> np.random.Generator:
    """Independent stream per (seed, robot, sensor): adding a sensor never shifts another's noise."""
    return np.random.default_rng([seed & 0xFFFFFFFF, zlib.crc32(robot.encode()), zlib.crc32(sensor.encode())])


def relative_uniform(values: Values, noise: float, rng: np.random.Generator) -> Values:
    """USARSim ``Noise``: v + U(-noise, +noise) * v."""
    if noise <= 0.0 or isinstance(rng, NoNoise):  # NoNoise: the interval's midpoint, no change
        return values
    if isinstance(values, float):  # one range (sonar, IR): the same draw and arithmetic without arrays
        # Generator.uniform(low, high) is low + (high - low) * random(), bit for bit, and random()
        # costs a fifth of it for one value (a P2AT's sonar batch draws sixteen)
        return values + (-noise + 2.0 * noise * rng.random()) * values
    arr = np.asarray(values, dtype=float)
    result = arr + rng.uniform(-noise, noise, size=arr.shape) * arr
    return float(result) if np.ndim(values) == 0 else result  # type: ignore[return-value]


def gaussian(values: Values, mean: float, sigma: float, rng: np.random.Generator) -> Values:
    """Additive Gaussian N(mean, sigma)."""
    if (sigma <= 0.0 and mean == 0.0) or isinstance(rng, NoNoise):
        return values
    arr = np.asarray(values, dtype=float)
    result = arr + rng.normal(mean, sigma, size=arr.shape) if sigma > 0 else arr + mean
    return float(result) if np.ndim(values) == 0 else result  # type: ignore[return-value]


@dataclass(frozen=True)
class OutputCurve:
    """Piecewise-linear distortion; inputs outside the curve's domain give 0 (as in USARSim)."""

    points: tuple[tuple[float, float], ...]

    def __post_init__(self) -> None:
        xs = [p[0] for p in self.points]
        if len(xs) < 2 or any(b <= a for a, b in zip(xs, xs[1:])):
            raise ValueError("output curve needs >= 2 points with increasing inputs")
        # the arrays np.interp needs, made once: range sensors apply the curve to every reading
        object.__setattr__(self, "_xs", np.array(xs, dtype=float))
        object.__setattr__(self, "_ys", np.array([p[1] for p in self.points], dtype=float))

    @classmethod
    def identity(cls, upper: float) -> "OutputCurve":
        """The default curve (0 -> 0, upper -> upper)."""
        return cls(((0.0, 0.0), (upper, upper)))

    def __call__(self, values: Values) -> Values:
        if isinstance(values, float):
            return self._scalar(values)  # type: ignore[return-value]
        xs, ys = self._xs, self._ys  # type: ignore[attr-defined]
        arr = np.asarray(values, dtype=float)
        out = np.interp(arr, xs, ys)
        # a tiny tolerance keeps a value clamped exactly at the domain edge inside it
        eps = 1e-9 * max(1.0, abs(xs[-1]))
        out = np.where((arr < xs[0] - eps) | (arr > xs[-1] + eps), 0.0, out)
        return float(out) if np.ndim(values) == 0 else out  # type: ignore[return-value]

    def _scalar(self, x: float) -> float:
        """One value (a sonar or IR range) without arrays: np.interp's formula, bit for bit."""
        points = self.points
        first, last = points[0][0], points[-1][0]
        eps = 1e-9 * max(1.0, abs(last))
        if x < first - eps or x > last + eps:
            return 0.0
        if x != x:  # NaN stays NaN, as through np.interp
            return x
        if x >= last:
            return float(points[-1][1])
        if x < first:
            return float(points[0][1])
        j = bisect.bisect_right(points, x, key=lambda point: point[0]) - 1
        (x0, y0), (x1, y1) = points[j], points[j + 1]
        return float((y1 - y0) / (x1 - x0) * (x - x0) + y0)


def curve_from_params(points: Sequence[Sequence[float]] | None, upper: float) -> OutputCurve:
    """OutputCurve from a YAML list of [in, out] pairs, or the identity up to ``upper``."""
    if not points:
        return OutputCurve.identity(upper)
    return OutputCurve(tuple((float(a), float(b)) for a, b in points))


def gps_sigma(satellites: int, max_noise: float, min_noise: float) -> float:
    """GPS position sigma (m): maxNoise/3 at 4 satellites, minNoise/3 at 12, linear between."""
    slope = (max_noise - min_noise) / -8.0
    intercept = max_noise - 4.0 * slope
    return max(0.0, (slope * satellites + intercept) / 3.0)


def quantize(value: float, resolution: float) -> int:
    """Integer count of ``resolution`` steps in ``value`` (truncating toward zero, like an encoder)."""
    return int(value / resolution)


class NoNoise:
    """Stands in for a sensor's noise generator when noise is off: every draw is its distribution's centre.

    Uniform draws give the interval's midpoint, Gaussian draws zero deviation (the noise model's mean
    is part of the noise and is dropped too) and ``random()`` 0, so a probabilistic detection always
    succeeds. ``layout`` is the real seeded stream, for draws that model the world rather than the
    sensor's error (e.g. the GPS constellation).
    """

    def __init__(self, layout: np.random.Generator) -> None:
        self.layout = layout

    @staticmethod
    def _filled(value: float, size: int | Sequence[int] | None) -> np.ndarray | float:
        return value if size is None else np.full(size, value, dtype=float)

    def uniform(self, low: float = 0.0, high: float = 1.0, size: int | Sequence[int] | None = None) -> np.ndarray | float:
        """The midpoint of [low, high)."""
        return self._filled((low + high) / 2.0, size)

    def normal(self, loc: float = 0.0, scale: float = 1.0, size: int | Sequence[int] | None = None) -> np.ndarray | float:
        """No deviation: 0."""
        return self._filled(0.0, size)

    def standard_normal(self, size: int | Sequence[int] | None = None) -> np.ndarray | float:
        """0."""
        return self._filled(0.0, size)

    def random(self, size: int | Sequence[int] | None = None) -> np.ndarray | float:
        """0 (below any detection probability)."""
        return self._filled(0.0, size)


NO_NOISE_HELP = "every sensor reads the true value (no noise, bias or missed detections)"


def noise_source(seed: int, robot: str, sensor: str, enabled: bool = True) -> np.random.Generator | NoNoise:
    """A sensor's noise generator: its seeded stream, or ``NoNoise`` over that stream when noise is off."""
    rng = sensor_rng(seed, robot, sensor)
    return rng if enabled else NoNoise(rng)


class DriftingChannel:
    """A MEMS-style inertial channel (gyroscope, accelerometer): the true signal through a first-order
    low-pass of ``bandwidth`` Hz, plus a bias doing a random walk of ``bias_drift`` units/sqrt(s) from
    ``initial_bias``, plus white noise of ``sigma``. ``bandwidth`` 0 passes the signal unfiltered."""

    def __init__(self, bandwidth: float, bias_drift: float, sigma: float, initial_bias: float = 0.0) -> None:
        self.bandwidth = bandwidth
        self.bias_drift = bias_drift
        self.sigma = sigma
        self.state: np.ndarray | None = None
        self.bias = np.full(3, float(initial_bias))

    def __call__(self, value: Sequence[float] | np.ndarray, dt: float, rng: np.random.Generator) -> np.ndarray:
        """The measured value after ``dt`` seconds more of the true ``value``."""
        true = np.asarray(value, dtype=float)
        if self.state is None or self.bandwidth <= 0:
            self.state = true.copy()
        else:
            alpha = 1.0 - np.exp(-2.0 * np.pi * self.bandwidth * dt)
            self.state = self.state + alpha * (true - self.state)
        draws = rng.standard_normal((2, true.size))
        if self.bias_drift > 0 and dt > 0:
            self.bias = self.bias + self.bias_drift * np.sqrt(dt) * draws[0]
        return self.state + self.bias + self.sigma * draws[1]
