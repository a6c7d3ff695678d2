"""Outdoor terrain: a height map (PNG or a numeric grid file) built as a PyBullet height field.

A terrain item names an image or a grid of heights, the ground size it covers, the
height of its brightest pixel (``height_scale``) and, optionally, the geodetic position
of its centre (SEAR places its digital elevation models the same way): the world's GPS
origin then follows from the terrain. Row 0 of a grid (the top row of an image) is the
terrain's north edge (+x), column 0 its east edge (-y), so an image looks like a map with
north up and east right... mirrored: see docs/worlds.md (Terrain) for the exact layout.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pybullet as p
from PIL import Image, UnidentifiedImageError

from usarsim.config_loading import ConfigError, confined_path
from usarsim.sim.mesh_files import mesh_visual
from usarsim.sim.textures import TERRAIN_TEXTURE, TEXTURES, TextureBank, terrain_file

Vec3 = tuple[float, float, float]
Rgba = tuple[float, float, float, float]

GRID_SUFFIXES = (".csv", ".txt")
MAX_SAMPLES = 1024  # per side: PyBullet's height field gets slow to build and to ray-test beyond this
MAX_GRID_BYTES = 32 << 20  # a text grid of MAX_SAMPLES^2 heights is about 10 MB
VISUAL_SAMPLES = 257  # per side at most in the drawn mesh: finer costs the renderer, not the look
TILE = 2.0  # m of ground per image of a tiled texture
WHITE: Rgba = (1.0, 1.0, 1.0, 1.0)


@dataclass(frozen=True)
class GeoPoint:
    """Geodetic coordinates (decimal degrees, metres)."""

    lat: float
    lon: float
    alt: float = 0.0


@dataclass(frozen=True)
class TerrainSpec:
    """A height-map terrain. ``center`` (x, y) and ``z`` place its lowest point; ``size`` (x, y) in metres."""

    heightmap: str  # PNG (8- or 16-bit grey) or a CSV / whitespace grid of heights, relative to the world file
    size: tuple[float, float]
    height_scale: float = 1.0  # m: height of the brightest pixel; a grid's numbers are multiplied by it
    center: tuple[float, float] = (0.0, 0.0)
    z: float = 0.0  # world z of height 0
    geo_origin: GeoPoint | None = None  # geodetic position of the terrain's centre at height 0
    friction: float = 1.0
    color: Rgba = (0.45, 0.55, 0.3, 1.0)  # multiplies a tiled texture; the plain colour without one
    # "terrain": grass, dirt and rock by slope and height, drawn from the world's seed; or a tiled
    # texture name (sim/textures.py); "" or "none" for the plain colour
    texture: str = TERRAIN_TEXTURE

    def validate(self, source: str) -> None:
        """Reject sizes the height field cannot use, naming the file and the key."""
        if min(self.size) <= 0:
            raise ConfigError(f"{source}: terrain.size must be positive, got {list(self.size)}")
        if not self.height_scale > 0:
            raise ConfigError(f"{source}: terrain.height_scale must be positive, got {self.height_scale}")
        if self.texture not in ("", "none", TERRAIN_TEXTURE, *TEXTURES):
            known = ", ".join(["none", TERRAIN_TEXTURE, *TEXTURES])
            raise ConfigError(f"{source}: terrain.texture: unknown texture '{self.texture}' (known: {known})")

    def moved(self, offset: Vec3) -> "TerrainSpec":
        """This terrain shifted by the world file's placement."""
        from dataclasses import replace
        return replace(self, center=(self.center[0] + offset[0], self.center[1] + offset[1]), z=self.z + offset[2])


def load_heights(spec: TerrainSpec, world_dir: Path, source: str) -> np.ndarray:
    """Heights in metres above ``spec.z``: rows from north (+x) to south, columns from west (+y) to east."""
    path = confined_path(world_dir, spec.heightmap, source, "terrain.heightmap")
    if not path.is_file():
        raise ConfigError(f"{source}: terrain.heightmap: file {spec.heightmap} not found (looked in {world_dir})")
    if path.suffix.lower() in GRID_SUFFIXES:
        if path.stat().st_size > MAX_GRID_BYTES:
            raise ConfigError(f"{source}: terrain.heightmap: {spec.heightmap} is larger than {MAX_GRID_BYTES >> 20} MiB; "
                              f"use 2..{MAX_SAMPLES} samples per side")
        try:
            grid = np.loadtxt(path, delimiter="," if path.suffix.lower() == ".csv" else None, ndmin=2)
        except ValueError as exc:
            raise ConfigError(f"{source}: terrain.heightmap: {spec.heightmap} is not a grid of numbers ({exc})") from None
        heights = grid * spec.height_scale
    else:
        try:
            with Image.open(path) as image:  # reads the header only: the size is checked before decoding
                if max(image.size) > MAX_SAMPLES:
                    raise ConfigError(f"{source}: terrain.heightmap: {spec.heightmap} is {image.size[1]} x "
                                      f"{image.size[0]}; use 2..{MAX_SAMPLES} samples per side")
                pixels = np.asarray(image.convert("I;16") if image.mode == "I;16" else image.convert("L"), dtype=float)
                peak = 65535.0 if image.mode == "I;16" else 255.0
        except Image.DecompressionBombError:
            raise ConfigError(f"{source}: terrain.heightmap: {spec.heightmap} has far more pixels than a height map; "
                              f"use 2..{MAX_SAMPLES} samples per side") from None
        except (UnidentifiedImageError, OSError) as exc:
            raise ConfigError(f"{source}: terrain.heightmap: {spec.heightmap} is not an image or grid ({exc})") from None
        heights = pixels / peak * spec.height_scale
    if heights.shape[0] < 2 or heights.shape[1] < 2 or max(heights.shape) > MAX_SAMPLES:
        raise ConfigError(f"{source}: terrain.heightmap: {spec.heightmap} is {heights.shape[0]} x {heights.shape[1]}; "
                          f"use 2..{MAX_SAMPLES} samples per side")
    if not np.all(np.isfinite(heights)):
        raise ConfigError(f"{source}: terrain.heightmap: {spec.heightmap} has non-finite heights")
    return heights


def _surface_visual(client: int, spec: TerrainSpec, heights: np.ndarray, middle: float, textured: bool) -> int:
    """The drawn ground: a triangle mesh of the heights (PyBullet's height field has no texture
    coordinates in its renderers), in the body's frame (height ``middle`` at z 0), with texture
    coordinates spanning the whole terrain for its own image or one tile per TILE metres."""
    step = max(1, -(-(max(heights.shape) - 1) // (VISUAL_SAMPLES - 1)))
    grid = heights[::step, ::step]
    rows, cols = grid.shape
    u = np.linspace(0.0, 1.0, rows)[:, None] * np.ones((1, cols))  # 0 on the north edge
    v = np.ones((rows, 1)) * np.linspace(0.0, 1.0, cols)[None, :]  # 0 on the west edge
    x = spec.size[0] * (0.5 - u)
    y = spec.size[1] * (0.5 - v)
    vertices = np.stack([x, y, grid - middle], axis=-1).reshape(-1, 3)
    if spec.texture == TERRAIN_TEXTURE:
        uvs = np.stack([v, 1.0 - u], axis=-1).reshape(-1, 2)  # image column = west->east, row 0 = north
    else:
        uvs = np.stack([-y / TILE, x / TILE], axis=-1).reshape(-1, 2)
    gx, gy = np.gradient(grid, -spec.size[0] / (rows - 1), -spec.size[1] / (cols - 1))
    normals = np.stack([-gx, -gy, np.ones_like(grid)], axis=-1)
    normals = (normals / np.linalg.norm(normals, axis=-1, keepdims=True)).reshape(-1, 3)
    corner = (np.arange(rows - 1)[:, None] * cols + np.arange(cols - 1)[None, :]).ravel()
    # counter-clockwise seen from above: (r, c) -> (r, c+1) runs toward -y, (r+1, c) toward -x
    quads = np.stack([corner, corner + cols, corner + 1, corner + 1, corner + cols, corner + cols + 1], axis=-1)
    return mesh_visual(client, [(float(a), float(b), float(c)) for a, b, c in vertices], quads.ravel().tolist(),
                       [(float(a), float(b)) for a, b in uvs] if textured else None,
                       [(float(a), float(b), float(c)) for a, b, c in normals],
                       WHITE if spec.texture == TERRAIN_TEXTURE and textured else spec.color)


def build_terrain(client: int, spec: TerrainSpec, heights: np.ndarray, textures: TextureBank | None = None,
                  seed: int = 0) -> int:
    """The height field body; its height 0 is at world z ``spec.z``. With ``textures`` the ground
    carries ``spec.texture`` (its own image drawn from the heights and ``seed``, or a tile)."""
    rows, cols = heights.shape  # rows north->south (x falling), columns west->east (y falling)
    # PyBullet's field: data[i + j * n_i] at local (x_i, y_j), both rising; its origin is the
    # middle of the height range, so the body is raised by that to keep height 0 at spec.z.
    along_x = heights[::-1, ::-1].T  # [j over y rising][i over x rising] -> index i + j * rows
    mesh_scale = (spec.size[0] / (rows - 1), spec.size[1] / (cols - 1), 1.0)
    shape = p.createCollisionShape(p.GEOM_HEIGHTFIELD, meshScale=mesh_scale,
                                   heightfieldData=along_x.ravel().tolist(), numHeightfieldRows=rows,
                                   numHeightfieldColumns=cols, physicsClientId=client)
    middle = (float(heights.min()) + float(heights.max())) / 2
    textured = textures is not None and spec.texture not in ("", "none")
    visual = _surface_visual(client, spec, heights, middle, textured)
    body = p.createMultiBody(0, shape, visual, (spec.center[0], spec.center[1], spec.z + middle),
                             physicsClientId=client)
    p.changeDynamics(body, -1, lateralFriction=spec.friction, physicsClientId=client)
    if textures is not None and textured:
        if spec.texture == TERRAIN_TEXTURE:
            textures.apply_file(body, terrain_file(heights, spec.size, seed))
        else:
            textures.apply(body, spec.texture)
    return body


def height_at(spec: TerrainSpec, heights: np.ndarray, x: float, y: float) -> float:
    """World z of the terrain at world (x, y), bilinear between samples (for placing things on it)."""
    rows, cols = heights.shape
    u = (spec.center[0] + spec.size[0] / 2 - x) / spec.size[0] * (rows - 1)  # row, from the north edge
    v = (spec.center[1] + spec.size[1] / 2 - y) / spec.size[1] * (cols - 1)  # column, from the west edge
    u, v = float(np.clip(u, 0, rows - 1)), float(np.clip(v, 0, cols - 1))
    i, j = min(int(u), rows - 2), min(int(v), cols - 2)
    fu, fv = u - i, v - j
    top = heights[i, j] * (1 - fv) + heights[i, j + 1] * fv
    bottom = heights[i + 1, j] * (1 - fv) + heights[i + 1, j + 1] * fv
    return spec.z + float(top * (1 - fu) + bottom * fu)


__all__ = ["GeoPoint", "TerrainSpec", "build_terrain", "height_at", "load_heights"]
