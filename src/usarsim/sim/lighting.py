"""How the camera image is lit: the sun or the hall's fill light, the world's lamps, each robot's headlight.

PyBullet's renderers (TinyRenderer and EGL alike) have one directional light (ambient,
diffuse and specular shares and an optional shadow map) and a fixed background; neither
has point or spot lights. So:

- that one light is the **sun** outdoors (pointing toward the world's lights, which stand
  for the sun there, or a high default sun) and a dim **fill light** from above indoors;
- an indoor world's ``lights`` are **point lamps**, and a robot's headlight (``DRIVE {Light
  true}``) a **spot** at its camera: both are added after rendering, per pixel, from the
  pixel's world position and surface normal (sensors/frame_geometry.py): a pixel gains
  ``gain * lambert * cone * (reach / max(d, reach))^2`` of its own colour, d being its
  distance to the lamp, lambert ``max(0, n . l)`` and cone ``cos^k`` of the angle off a
  spot's axis, once per 2 x 2 pixels in frames larger than 320 x 240 (light varies slowly;
  it halves the cost at 640 x 480). Emulated lamps cast no shadows;
- the sky colour replaces the background where the depth buffer is empty.

docs/worlds.md (Appearance) lists what this approximates.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from usarsim.sim.sensors.frame_geometry import FrameGeometry

Rgb = tuple[float, float, float]

OUTDOOR_SKY: Rgb = (0.53, 0.71, 0.92)
INDOOR_SKY: Rgb = (0.18, 0.18, 0.2)  # the hall's dark ceiling above an arena
LAMP_REACH = 3.0  # m: a world lamp nearer than this lights fully; beyond, as 1/d^2
LAMP_GAIN = 1.2  # share of a pixel's colour a lamp of intensity 1 adds within its reach, face on
SUN_DIRECTION = (0.45, -0.3, 1.0)  # toward the sun: high, to the north-east (core frame: y west)
HEADLIGHT_REACH = 0.5  # m
HEADLIGHT_GAIN = 12.0  # at intensity 100 within the reach, on the axis: 3x a pixel's colour at 1 m
HEADLIGHT_CONE = 4.0  # cos^4 fall-off off the axis
INDOOR_FILL = (0.3, 0.2)  # (ambient, diffuse) of the hall's light from above
FINE_SHADING = 320 * 240  # pixels: larger frames shade lamps once per 2 x 2 pixels (light varies slowly)


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


@dataclass(frozen=True)
class Lamp:
    """A light PyBullet cannot draw, added per pixel: a point lamp, or a spot when ``axis`` is set."""

    position: tuple[float, float, float]
    gain: float  # share of a pixel's colour added within ``reach``, face on, on the axis
    reach: float = LAMP_REACH
    axis: tuple[float, float, float] | None = None  # unit direction a spot points along
    cone: float = HEADLIGHT_CONE  # exponent of cos(angle off the axis)


def scene_light(outdoor: bool, lights: Sequence[tuple[Sequence[float], float]], eye: np.ndarray) -> SceneLight:
    """PyBullet's one directional light at ``eye``: the sun outdoors (toward the intensity-weighted
    mean direction of the world's ``lights``, (position, intensity) pairs), the fill light indoors."""
    if not outdoor:
        return SceneLight((0.0, 0.0, 1.0), ambient=INDOOR_FILL[0], diffuse=INDOOR_FILL[1])
    if not lights:
        return SceneLight(SUN_DIRECTION, ambient=0.55, diffuse=0.6)
    total = np.zeros(3)
    for position, intensity in lights:
        offset = np.asarray(position, dtype=float) - eye
        total += max(0.0, float(intensity)) * offset / (float(np.linalg.norm(offset)) or 1e-6)
    unit = total / np.linalg.norm(total) if np.linalg.norm(total) > 1e-9 else np.zeros(3)
    # kept at least 63 deg high: TinyRenderer's shadow map has no depth bias, and a low light
    # covers the floor in shadow-acne stripes
    direction = np.array([0.5 * unit[0], 0.5 * unit[1], max(unit[2], 0.0) + 1.0])
    return SceneLight((float(direction[0]), float(direction[1]), float(direction[2])), ambient=0.55, diffuse=0.6)


def world_lamps(outdoor: bool, lights: Sequence[tuple[Sequence[float], float]]) -> list[Lamp]:
    """The lamps of an indoor world's ``lights`` (outdoors they steer the sun instead)."""
    if outdoor:
        return []
    return [Lamp((float(x), float(y), float(z)), LAMP_GAIN * float(intensity))
            for (x, y, z), intensity in lights if intensity > 0]


def headlight(eye: np.ndarray, forward: np.ndarray, intensity: float) -> Lamp:
    """A robot's headlight of ``intensity`` (0..100): a spot at the camera along its axis."""
    axis = forward / (np.linalg.norm(forward) or 1.0)
    return Lamp((float(eye[0]), float(eye[1]), float(eye[2])), HEADLIGHT_GAIN * intensity / 100.0,
                HEADLIGHT_REACH, (float(axis[0]), float(axis[1]), float(axis[2])))


def add_lamps(rgb: np.ndarray, geometry: FrameGeometry, lamps: Sequence[Lamp]) -> np.ndarray:
    """``rgb`` with the light of ``lamps`` added; the sky is not lit; returns a new image."""
    if not lamps:
        return rgb
    height, width = geometry.distance.shape
    step = 1 if height * width <= FINE_SHADING else 2
    gain = lamp_gain(geometry.every(step), lamps)
    if step > 1:
        gain = np.repeat(np.repeat(gain, step, axis=0), step, axis=1)[:height, :width]
    gain[geometry.sky] = 0.0
    return np.clip(rgb * (1.0 + gain[..., None]), 0, 255).astype(np.uint8)


def lamp_gain(geometry: FrameGeometry, lamps: Sequence[Lamp]) -> np.ndarray:
    """Share of its own colour each pixel gains from ``lamps`` (float32, height x width)."""
    normals = geometry.normals()
    gain = np.zeros(geometry.distance.shape, dtype=np.float32)
    for lamp in lamps:
        to_lamp = np.asarray(lamp.position, dtype=np.float32) - geometry.points
        d = np.maximum(np.sqrt((to_lamp * to_lamp).sum(axis=-1)), 1e-6)
        term = np.maximum((normals * to_lamp).sum(axis=-1), 0.0) / d  # lambert
        term *= lamp.gain * (lamp.reach / np.maximum(d, lamp.reach)) ** 2
        if lamp.axis is not None:
            along = -(to_lamp @ np.asarray(lamp.axis, dtype=np.float32)) / d
            term *= np.maximum(along, 0.0) ** lamp.cone
        gain += term
    return gain


def fill_sky(rgb: np.ndarray, sky_mask: np.ndarray, sky: Rgb) -> None:
    """Paint ``sky`` where nothing was drawn; in place."""
    rgb[sky_mask] = np.round(np.asarray(sky) * 255).astype(np.uint8)


__all__ = ["INDOOR_SKY", "OUTDOOR_SKY", "Lamp", "SceneLight", "add_lamps", "fill_sky", "headlight", "lamp_gain",
           "scene_light", "world_lamps"]
