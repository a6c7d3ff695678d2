"""How the camera image is lit: the world's lights, its sky, and each robot's headlight.

PyBullet's TinyRenderer has one directional light (with ambient, diffuse and specular
shares and an optional shadow map) and a fixed background. So:

- the world's point lights become that one light, pointing from the camera toward their
  intensity-weighted mean direction (weights fall off as 1/d^2 beyond 3 m), raised to at
  least 63 deg above the horizon, with a diffuse share growing with their summed weight; without lights, an outdoor world has a
  high sun and an indoor one a dim light from above;
- the sky colour replaces the background where the depth buffer is empty;
- a headlight (``DRIVE {Light true}``) is a spot at the camera: each pixel is brightened
  by ``intensity / 100 * cos^4(angle off axis) / max(d, 0.5 m)^2`` of its own colour,
  d being the pixel's depth; it casts no shadows.

docs/worlds.md (Appearance) lists what this approximates.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

Rgb = tuple[float, float, float]

OUTDOOR_SKY: Rgb = (0.53, 0.71, 0.92)
INDOOR_SKY: Rgb = (0.18, 0.18, 0.2)  # the hall's dark ceiling above an arena
LIGHT_FALLOFF = 3.0  # m: lights nearer than this count fully
SUN_DIRECTION = (0.45, -0.3, 1.0)  # toward the sun: high, to the north-east (core frame: y west)
HEADLIGHT_GAIN = 3.0  # share of a pixel's colour added at 1 m on the axis, at intensity 100


@dataclass(frozen=True)
class SceneLight:
    """PyBullet's light parameters for one frame."""

    direction: tuple[float, float, float]
    ambient: float
    diffuse: float
    specular: float = 0.05

    def camera_kwargs(self, shadows: bool) -> dict[str, Any]:
        """Keyword arguments of ``getCameraImage`` for this light."""
        return {"lightDirection": list(self.direction), "lightAmbientCoeff": self.ambient,
                "lightDiffuseCoeff": self.diffuse, "lightSpecularCoeff": self.specular, "shadow": int(shadows),
                "lightColor": [1.0, 1.0, 1.0], "lightDistance": 30.0}


def scene_light(outdoor: bool, lights: Sequence[tuple[Sequence[float], float]], eye: np.ndarray) -> SceneLight:
    """The one directional light standing in for the world's ``lights`` ((position, intensity) pairs) at ``eye``."""
    if not lights:
        if outdoor:
            return SceneLight(SUN_DIRECTION, ambient=0.55, diffuse=0.6)
        return SceneLight((0.0, 0.0, 1.0), ambient=0.3, diffuse=0.3)
    total = np.zeros(3)
    weight = 0.0
    for position, intensity in lights:
        offset = np.asarray(position, dtype=float) - eye
        distance = float(np.linalg.norm(offset)) or 1e-6
        w = max(0.0, float(intensity)) / max(1.0, (distance / LIGHT_FALLOFF) ** 2)
        total += w * offset / distance
        weight += w
    unit = total / np.linalg.norm(total) if np.linalg.norm(total) > 1e-9 else np.zeros(3)
    # kept at least 63 deg high: TinyRenderer's shadow map has no depth bias, and a low light
    # covers the floor in shadow-acne stripes
    direction = np.array([0.5 * unit[0], 0.5 * unit[1], max(unit[2], 0.0) + 1.0])
    base = 0.45 if outdoor else 0.25
    return SceneLight((float(direction[0]), float(direction[1]), float(direction[2])), ambient=base + 0.1 * min(weight, 1.0),
                      diffuse=0.2 + 0.5 * min(weight, 1.0))


def linear_depth(depth: np.ndarray, near: float, far: float) -> np.ndarray:
    """Metric distance along the optical axis from PyBullet's depth buffer (0..1)."""
    return far * near / (far - (far - near) * depth)


def fill_sky(rgb: np.ndarray, depth: np.ndarray, sky: Rgb) -> None:
    """Paint ``sky`` where nothing was drawn (depth at the far plane); in place."""
    rgb[depth >= 0.99999] = np.round(np.asarray(sky) * 255).astype(np.uint8)


def add_headlight(rgb: np.ndarray, depth: np.ndarray, near: float, far: float, intensity: float,
                  tan_half_fov: tuple[float, float]) -> np.ndarray:
    """``rgb`` lit by a spot at the camera of ``intensity`` (0..100); returns a new image."""
    height, width = depth.shape
    u = (np.arange(width) + 0.5) / width * 2 - 1
    v = (np.arange(height) + 0.5) / height * 2 - 1
    tx, ty = np.meshgrid(u * tan_half_fov[0], v * tan_half_fov[1])
    cos_angle = 1.0 / np.sqrt(1.0 + tx * tx + ty * ty)
    distance = linear_depth(depth, near, far) / cos_angle  # along the pixel's ray
    gain = HEADLIGHT_GAIN * intensity / 100.0 * cos_angle ** 4 / np.maximum(distance, 0.5) ** 2
    gain[depth >= 0.99999] = 0.0  # the sky is not lit
    return np.clip(rgb * (1.0 + gain[..., None]), 0, 255).astype(np.uint8)


__all__ = ["INDOOR_SKY", "OUTDOOR_SKY", "SceneLight", "add_headlight", "fill_sky", "linear_depth", "scene_light"]
