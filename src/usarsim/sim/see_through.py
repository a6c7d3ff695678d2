"""Glass and grid fences the camera sees through.

TinyRenderer draws every surface opaque (it skips only fully transparent ones), so a frame
with see-through surfaces in view is rendered twice: once as usual, and once with those
surfaces hidden (alpha 0) to get what lies behind them. Glass pixels are then blended
with the colour's alpha; fence pixels show the wire where the fence's texture is dark and
what lies behind elsewhere.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import pybullet as p

Render = Callable[[], tuple[np.ndarray, np.ndarray, np.ndarray]]  # rgb, depth, segmentation


def composite(client: int, render: Render, glass: dict[int, float], fences: set[int],
              colors: dict[int, tuple[float, float, float, float]]) -> tuple[np.ndarray, np.ndarray]:
    """(rgb, depth) of a frame with ``glass`` bodies (alpha each) and ``fences`` drawn see-through."""
    rgb, depth, seg = render()
    bodies = seg & ((1 << 24) - 1)  # the mask packs link indices above bit 24
    glass_px = np.isin(bodies, list(glass)) & (seg >= 0)
    fence_px = np.isin(bodies, list(fences)) & (seg >= 0)
    if not glass_px.any() and not fence_px.any():
        return rgb, depth
    for body in [*glass, *fences]:
        p.changeVisualShape(body, -1, rgbaColor=(*colors[body][:3], 0.0), physicsClientId=client)
    try:
        behind, behind_depth, _ = render()
    finally:
        for body in [*glass, *fences]:
            p.changeVisualShape(body, -1, rgbaColor=colors[body], physicsClientId=client)
    out = rgb.astype(float)
    if glass_px.any():
        alpha = np.vectorize(lambda b: glass.get(int(b), 0.0))(bodies[glass_px])[:, None]
        out[glass_px] = alpha * out[glass_px] + (1 - alpha) * behind[glass_px]
    if fence_px.any():
        lum = out[fence_px].mean(axis=1)
        holes = lum > 0.6 * np.percentile(lum, 99)  # the fence texture: dark wire on a light ground
        idx = np.flatnonzero(fence_px.ravel())[holes]
        flat = out.reshape(-1, 3)
        flat[idx] = behind.reshape(-1, 3)[idx]
        depth = depth.copy()
        depth.ravel()[idx] = behind_depth.ravel()[idx]
    return np.clip(np.round(out), 0, 255).astype(np.uint8), depth


__all__ = ["composite"]
