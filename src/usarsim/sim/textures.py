"""Procedural textures for world surfaces (numpy + Pillow), made at load time; no image assets ship.

Each texture is a small tileable RGB image drawn from a fixed seed, so every run and every
machine sees the same pixels. They are written once per process into a cache folder
(PyBullet loads textures from files) and loaded once per built world.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Callable

import numpy as np
import pybullet as p
from PIL import Image

SIDE = 128  # pixels per texture side


def _noise(seed: int, sigma: float, side: int = SIDE) -> np.ndarray:
    """Smooth tileable noise in 0..1."""
    from scipy import ndimage  # here, not at the top: scipy's import costs more than listing the worlds

    field = ndimage.gaussian_filter(np.random.default_rng(seed).standard_normal((side, side)), sigma, mode="wrap")
    return (field - field.min()) / (np.ptp(field) or 1.0)


def _tint(grey: np.ndarray, rgb: tuple[float, float, float]) -> np.ndarray:
    return np.clip(grey[..., None] * np.array(rgb)[None, None, :] * 255.0, 0, 255).astype(np.uint8)


def concrete() -> np.ndarray:
    # low frequencies only: TinyRenderer samples without mipmaps, so fine grain shimmers into stripes
    grain = 0.78 + 0.14 * _noise(1, 6) + 0.08 * _noise(2, 2.5)
    return _tint(grain, (0.95, 0.94, 0.9))


def plywood() -> np.ndarray:
    """Wood grain along the texture's u axis, with panel seams every half tile."""
    v = np.arange(SIDE)[:, None] / SIDE
    wobble = _noise(3, 10)
    rings = 0.5 + 0.5 * np.sin(2 * np.pi * (v * 14 + 2.5 * wobble))
    grain = 0.78 + 0.14 * rings + 0.06 * _noise(4, 0.7)
    grain[:, :: SIDE // 2] *= 0.6  # seams between sheets
    return _tint(grain, (1.0, 0.86, 0.62))


def wood() -> np.ndarray:
    planks = plywood().astype(float)
    planks[:: SIDE // 4, :] *= 0.55
    return planks.astype(np.uint8)


def brick() -> np.ndarray:
    rows, cols = np.indices((SIDE, SIDE))
    course = rows // 16
    mortar = (rows % 16 < 2) | (((cols + 16 * (course % 2)) % 32) < 2)
    shade = 0.75 + 0.2 * _noise(5, 1.5) + 0.1 * ((course * 7 + (cols + 16 * (course % 2)) // 32 * 3) % 5) / 5
    rgb = _tint(shade, (0.72, 0.33, 0.24))
    rgb[mortar] = (200, 196, 185)
    return rgb


def grass() -> np.ndarray:
    shade = 0.6 + 0.3 * _noise(6, 4) + 0.2 * _noise(7, 0.6)
    return _tint(shade, (0.42, 0.62, 0.28))


def pavement() -> np.ndarray:
    rows, cols = np.indices((SIDE, SIDE))
    slabs = 0.85 + 0.1 * _noise(8, 3)
    slabs[(rows % 32 < 1) | (cols % 32 < 1)] *= 0.65
    return _tint(slabs, (0.8, 0.78, 0.74))


def asphalt() -> np.ndarray:
    return _tint(0.7 + 0.3 * _noise(9, 0.6), (0.32, 0.32, 0.34))


def sand() -> np.ndarray:
    return _tint(0.8 + 0.2 * _noise(10, 2), (0.76, 0.7, 0.52))


def fence() -> np.ndarray:
    """Chain-link style grid: dark wire every 16 pixels on a light ground (see sim/see_through.py)."""
    rows, cols = np.indices((SIDE, SIDE))
    wire = ((rows + cols) % 16 < 2) | ((rows - cols) % 16 < 2)
    grey = np.where(wire, 0.3, 1.0)
    return _tint(grey, (0.85, 0.85, 0.85))


TERRAIN_TEXTURE = "terrain"  # a terrain's own image drawn from its heights (terrain()), not a tile
TEXTURES: dict[str, Callable[[], np.ndarray]] = {
    "concrete": concrete, "plywood": plywood, "wood": wood, "brick": brick, "grass": grass,
    "pavement": pavement, "asphalt": asphalt, "sand": sand, "fence": fence,
}


TERRAIN_PIXEL = 0.12  # m of ground per pixel of a terrain's own texture
TERRAIN_SIDE = (256, 1024)  # bounds of that texture's side in pixels
# terrain colours (linear 0..1): two grasses, dry grass on the heights, dirt, rock
GRASS, LUSH, DRY = np.array((0.36, 0.52, 0.22)), np.array((0.25, 0.42, 0.16)), np.array((0.62, 0.6, 0.34))
DIRT, ROCK = np.array((0.47, 0.37, 0.26)), np.array((0.52, 0.5, 0.47))


def _smoothstep(low: float, high: float, x: np.ndarray) -> np.ndarray:
    t = np.clip((x - low) / (high - low), 0.0, 1.0)
    return t * t * (3 - 2 * t)


def terrain(heights: np.ndarray, size: tuple[float, float], seed: int) -> np.ndarray:
    """One image over a whole height map (rows north to south, columns west to east, as ``heights``):
    grass on gentle ground (lusher low down, drier high up), dirt on steeper or trodden patches,
    rock on steep slopes, every boundary frayed by seeded noise."""
    from scipy import ndimage  # here, not at the top: scipy's import costs more than listing the worlds

    rows = int(np.clip(size[0] / TERRAIN_PIXEL, *TERRAIN_SIDE))
    cols = int(np.clip(size[1] / TERRAIN_PIXEL, *TERRAIN_SIDE))
    zoom = (rows / heights.shape[0], cols / heights.shape[1])
    z = ndimage.zoom(heights, zoom, order=1, mode="nearest", grid_mode=True)
    slope = np.hypot(*np.gradient(z, size[0] / rows, size[1] / cols))  # rise per metre
    level = (z - z.min()) / (np.ptp(z) or 1.0)
    rng = np.random.default_rng(seed)

    def noise(sigma_m: float) -> np.ndarray:  # smooth noise in 0..1 with features ~sigma_m metres wide
        field = ndimage.gaussian_filter(rng.standard_normal((rows, cols)), sigma_m / TERRAIN_PIXEL, mode="reflect")
        return (field - field.min()) / (np.ptp(field) or 1.0)

    patches, fray, grain = noise(6.0), noise(1.5), noise(0.4)
    rock = _smoothstep(0.28, 0.42, slope + 0.3 * (fray - 0.5))
    dirt = np.maximum(_smoothstep(0.15, 0.26, slope + 0.2 * (fray - 0.5)), _smoothstep(0.66, 0.8, patches)) * (1 - rock)
    dry = _smoothstep(0.5, 0.9, level + 0.3 * (patches - 0.5))
    green = LUSH + (GRASS - LUSH) * _smoothstep(0.3, 0.7, patches)[..., None]
    grass_colour = green + (DRY - green) * dry[..., None]
    colour = (grass_colour * (1 - dirt - rock)[..., None] + DIRT * dirt[..., None] + ROCK * rock[..., None])
    colour *= (0.8 + 0.4 * grain)[..., None]  # grain a few pixels wide: no mipmaps, so no finer
    return np.clip(colour * 255.0, 0, 255).astype(np.uint8)


def terrain_file(heights: np.ndarray, size: tuple[float, float], seed: int) -> Path:
    """The PNG of :func:`terrain` for this height map, size and seed (drawn and written on first use)."""
    # named by everything that shapes the image, this module's code included (a change redraws it)
    key = hashlib.sha1(heights.astype(np.float64).tobytes() + repr((heights.shape, tuple(size), seed)).encode()
                       + Path(__file__).read_bytes())
    path = _cache_dir() / f"terrain-{key.hexdigest()[:20]}.png"
    if not path.exists():
        partial = path.with_suffix(f".{os.getpid()}.tmp.png")
        Image.fromarray(terrain(heights, size, seed)).save(partial)
        os.replace(partial, path)
    return path


def _cache_dir() -> Path:
    path = Path(os.environ.get("USARSIM_TEXTURE_CACHE") or Path(tempfile.gettempdir()) / f"usarsim-textures-{os.getuid()}")
    path.mkdir(parents=True, exist_ok=True)
    return path


def texture_file(name: str) -> Path:
    """The PNG of texture ``name`` (drawn and written on first use)."""
    path = _cache_dir() / f"{name}-{SIDE}.png"
    if not path.exists():
        partial = path.with_suffix(f".{os.getpid()}.tmp.png")
        Image.fromarray(TEXTURES[name]()).save(partial)
        os.replace(partial, path)  # atomic: parallel processes never read half a file
    return path


class TextureBank:
    """Textures loaded into one PyBullet client, each once (ids die with the client, so the bank does too)."""

    def __init__(self, client: int) -> None:
        self.client = client
        self._ids: dict[str, int] = {}

    def apply(self, body: int, name: str) -> None:
        """Put texture ``name`` on ``body``'s visual shape ("" or "none": leave it plain)."""
        if not name or name == "none":
            return
        if name not in self._ids:
            self._ids[name] = p.loadTexture(str(texture_file(name)), physicsClientId=self.client)
        p.changeVisualShape(body, -1, textureUniqueId=self._ids[name], physicsClientId=self.client)

    def apply_file(self, body: int, path: Path) -> None:
        """Put the texture image at ``path`` on ``body``'s visual shape."""
        texture = p.loadTexture(str(path), physicsClientId=self.client)
        p.changeVisualShape(body, -1, textureUniqueId=texture, physicsClientId=self.client)


__all__ = ["TEXTURES", "TERRAIN_TEXTURE", "TextureBank", "terrain", "terrain_file", "texture_file"]
