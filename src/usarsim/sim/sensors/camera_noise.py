"""Image sensor noise: shot noise growing with the signal plus a constant read noise, per pixel.

USARSim's cameras gave noiseless frames (its manual: every sensor can add noise "except
for the state sensor and robot camera"); vision methods tuned on such frames fail on real
cameras, so frames carry the two dominant noises of a CMOS sensor by default. A pixel
value v (0..255) becomes

    v + N(0, read_noise^2 + shot_noise * v)

rounded and clipped, drawn from the camera's own seeded stream (same seed, same frames).
``read_noise`` 0 and ``shot_noise`` 0 (or the simulator's ``noise=False``) give clean frames.
"""
from __future__ import annotations

import numpy as np

from usarsim.sim.noise import NoNoise


def add_sensor_noise(rgb: np.ndarray, rng: np.random.Generator | NoNoise, read_noise: float,
                     shot_noise: float) -> np.ndarray:
    """``rgb`` (uint8) with shot and read noise; ``rgb`` itself when both are 0 or noise is off."""
    if (read_noise <= 0.0 and shot_noise <= 0.0) or isinstance(rng, NoNoise):
        return rgb
    value = rgb.astype(np.float32)
    sigma = np.sqrt(read_noise * read_noise + shot_noise * value)
    noisy = value + sigma * rng.standard_normal(rgb.shape, dtype=np.float32)
    return np.clip(np.round(noisy), 0, 255).astype(np.uint8)


__all__ = ["add_sensor_noise"]
