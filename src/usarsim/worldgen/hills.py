"""The shipped terrain world's height map, made procedurally (``worlds/hills_heightmap.png``).

Smooth random hills (low-pass filtered noise plus a few broad bumps) around a flat plateau
in the middle, where the collapsed building and the start poses stand. Deterministic in
its seed: ``python -m usarsim.worldgen.hills`` rewrites the PNG byte for byte.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from PIL import Image
from scipy import ndimage

SAMPLES = 129  # per side
PLATEAU = 0.3  # grey level (share of height_scale) of the flat middle
PLATEAU_RADIUS = 0.2  # share of the map's side: flat within it, blending out over as much again


def hills(seed: int = 7, samples: int = SAMPLES) -> np.ndarray:
    """Heights in 0..1 (rows north to south, columns west to east)."""
    rng = np.random.default_rng(seed)
    noise = ndimage.gaussian_filter(rng.standard_normal((samples, samples)), sigma=samples / 14, mode="wrap")
    noise = (noise - noise.min()) / (noise.max() - noise.min())
    u, v = np.meshgrid(np.linspace(-1, 1, samples), np.linspace(-1, 1, samples), indexing="ij")
    bumps = sum(np.exp(-((u - a) ** 2 + (v - b) ** 2) / 0.08) for a, b in rng.uniform(-0.8, 0.8, (4, 2)))
    ground = 0.6 * noise + 0.4 * bumps / max(1.0, float(np.max(bumps)))
    r = np.hypot(u, v)
    blend = np.clip((r - 2 * PLATEAU_RADIUS) / (2 * PLATEAU_RADIUS), 0.0, 1.0)  # 0 on the plateau, 1 beyond
    blend = blend * blend * (3 - 2 * blend)  # smoothstep: no kink where the slope starts
    return np.clip(PLATEAU * (1 - blend) + ground * blend, 0.0, 1.0)


def write_png(path: Path, seed: int = 7) -> None:
    """Write the height map as an 8-bit grey PNG."""
    Image.fromarray(np.round(hills(seed) * 255).astype(np.uint8)).save(path, optimize=True)


if __name__ == "__main__":
    write_png(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("worlds/hills_heightmap.png"))
