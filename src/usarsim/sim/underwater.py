"""How water looks to a camera: wavelength-dependent absorption, haze with distance, the surface.

PyBullet's renderers draw a water volume as an opaque box at best and show the sky from
under it, so the volume is left out of the render (sim/water.py draws it fully transparent)
and its optics are applied to the frame per pixel (sensors/frame_geometry.py gives each
pixel's ray and distance). For the length ``L`` a pixel's ray runs through water, each
colour channel c follows the usual single-scattering image model:

    I_c = J_c * exp(-b_c * (L + z)) + V_c * (1 - exp(-b_c * L))

J being the colour rendered in air, ``b`` the water's ``attenuation`` per metre (red is
lost first, then blue, green carries furthest in coastal water), z the depth of the point
seen (daylight reaching it has crossed that much water too) and V the veiling light: the
water's colour, dimmer with the camera's depth. Seen from below, the surface is a bright
veil inside Snell's window (48.6 deg about the vertical) and reflects the dark water
outside it: no sky below the surface. Seen from above, the surface reflects the sky by
Schlick's Fresnel term and is see-through elsewhere.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from usarsim.sim.sensors.frame_geometry import FrameGeometry
from usarsim.sim.water import WaterSpec

CRITICAL_ANGLE = math.asin(1.0 / 1.333)  # rad from the vertical: Snell's window of water
FRESNEL_R0 = 0.02  # reflectance of water seen face on
WINDOW_GAIN = 1.8  # brightness of Snell's window against the veil around it


def _water_path(spec: WaterSpec, geometry: FrameGeometry) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(path length in the volume, ray parameter where it enters, where it leaves) per pixel."""
    low = np.array([spec.center[0] - spec.size[0] / 2, spec.center[1] - spec.size[1] / 2, spec.bottom], np.float32)
    high = np.array([spec.center[0] + spec.size[0] / 2, spec.center[1] + spec.size[1] / 2, spec.surface], np.float32)
    rays = geometry.rays
    with np.errstate(divide="ignore", invalid="ignore"):
        inverse = 1.0 / np.where(np.abs(rays) < 1e-9, 1e-9, rays)
        t0 = (low - geometry.eye) * inverse
        t1 = (high - geometry.eye) * inverse
    enter = np.maximum(np.minimum(t0, t1).max(axis=-1), 0.0)
    leave = np.minimum(np.maximum(t0, t1).min(axis=-1), geometry.distance)
    return np.maximum(leave - enter, 0.0), enter, leave


def apply_water(rgb: np.ndarray, geometry: FrameGeometry, volumes: Sequence[WaterSpec], sky: Sequence[float]) -> np.ndarray:
    """``rgb`` (drawn without the water) seen through ``volumes``; returns a new image (or ``rgb``)."""
    out: np.ndarray | None = None
    for spec in volumes:
        path, enter, leave = _water_path(spec, geometry)
        wet = path > 0
        if not wet.any():
            continue
        image = rgb.astype(np.float32) if out is None else out
        b = np.asarray(spec.attenuation, dtype=np.float32)
        eye_depth = max(0.0, spec.surface - float(geometry.eye[2]))
        veil = np.asarray(spec.color[:3], dtype=np.float32) * 255.0 * np.exp(-0.5 * b * eye_depth)
        rays_z = geometry.rays[..., 2]
        # the surface seen from below: where the ray leaves the volume through the top
        exit_z = geometry.eye[2] + rays_z * leave
        through_top = wet & (rays_z > 0) & (np.abs(exit_z - spec.surface) < 1e-3) & (leave < geometry.distance)
        hidden = geometry.sky | through_top  # beyond the water there is only more water or the surface
        point_depth = np.clip(spec.surface - geometry.points[..., 2], 0.0, None)
        point_depth[hidden] = 0.0
        transmit = np.exp(-b * path[..., None])
        lit = np.exp(-b * point_depth[..., None])
        seen = image * transmit * lit + veil * (1.0 - transmit)
        if through_top.any():
            window = (rays_z > math.cos(CRITICAL_ANGLE)).astype(np.float32)[..., None]
            glow = veil * (1.0 + (WINDOW_GAIN - 1.0) * window)
            seen = np.where(through_top[..., None], glow * transmit + veil * (1.0 - transmit), seen)
        seen = np.where((geometry.sky & wet)[..., None] & ~through_top[..., None], veil, seen)
        from_above = wet & (geometry.eye[2] > spec.surface) & (enter > 0)
        if from_above.any():
            cos_incidence = np.clip(-rays_z, 0.0, 1.0)[..., None]
            reflect = FRESNEL_R0 + (1.0 - FRESNEL_R0) * (1.0 - cos_incidence) ** 5
            seen = np.where(from_above[..., None], (1.0 - reflect) * seen + reflect * np.asarray(sky, np.float32) * 255.0,
                            seen)
        out = np.where(wet[..., None], seen, image)
    return rgb if out is None else np.clip(np.round(out), 0, 255).astype(np.uint8)


__all__ = ["apply_water"]
