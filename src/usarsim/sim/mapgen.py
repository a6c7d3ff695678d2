"""2-D occupancy maps of worlds for Nav2's map_server (``usarsim map``).

The world is built in a private PyBullet DIRECT client and sampled from above with
batched vertical rays: one ray per map cell gives the height of the highest surface
there. A cell is then

- **occupied** when solid rises more than ``STEP`` (0.1 m, the bottom of the band a
  ground robot's laser sweeps) above the lowest surface within ``SLOPE_WINDOW``
  (0.15 m) of it: walls, blocks, victims, stair risers, step-field posts, the rim of
  a raised level and the side of a ramp. A slope gentler than atan(0.1 / 0.15) = 34 deg
  (the 15 deg ramps) stays free.
- **occupied** too when it is a flat top no wheeled robot can reach from the ground
  floor or a start pose over such steps and slopes (the top of a cement block, a stair tread, a
  landing reached only by stairs). A raised level reached by a ramp stays free.
- **free** otherwise; **unknown** outside the arena bounds (the box around the
  static geometry, start poses, victims and tags; 40 m x 40 m around the origin for
  a world without static geometry), in a 0.5 m border around them, and wherever
  no floor lies under the cell.

Movable obstacles and victims count where the world file puts them. Everything is
seen from above, so an overhang counts as solid down to the floor; the shipped
arenas have none a robot could pass under. Map pixel coordinates follow the world
frame (map frame = world frame): the yaml's origin is the world position of the
lower-left pixel's corner, yaw 0.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pybullet as p
import yaml
from PIL import Image
from scipy import ndimage

from usarsim.config_loading import ConfigError
from usarsim.sim.quiet import quiet_stdout
from usarsim.sim.raycast import ray_test
from usarsim.sim.world import WorldSpec, build_world

STEP = 0.1  # m: solid higher than this above the neighbouring floor blocks a ground robot
TOLERANCE = 0.005  # m: a 0.1 m pipe counts as 0.1 m, whatever the ray rounding
SLOPE_WINDOW = 0.15  # m: horizontal reach of the step test (sets the steepest free slope)
BORDER = 0.5  # m of unknown around the arena bounds
EMPTY_EXTENT = 40.0  # m: square mapped around the origin when a world has no static geometry
POINT_MARGIN = 0.3  # m kept around start poses, victims and tags (about half a robot)
OCCUPIED_THRESH = 0.65
FREE_THRESH = 0.25
# Pixel values (negate 0: occupancy = (255 - value) / 255). Unknown is mid-grey rather than
# the usual 205, which map_server would read as free with free_thresh 0.25.
FREE_PIXEL, OCCUPIED_PIXEL, UNKNOWN_PIXEL = 254, 0, 128
# A map of more cells takes gigabytes of ray results (the shipped worlds need at most about 1 million)
MAX_MAP_CELLS = 4_000_000
# OccupancyGrid cell values
FREE, OCCUPIED, UNKNOWN = 0, 100, -1


@dataclass(frozen=True)
class OccupancyMap:
    """A 2-D grid in the world frame: rows along +y (row 0 at the lowest y), columns along +x."""

    cells: np.ndarray  # int8, shape (rows along y, columns along x): FREE, OCCUPIED or UNKNOWN
    resolution: float  # m per cell
    origin: tuple[float, float]  # world (x, y) of the corner of cell (0, 0)

    def cell_of(self, x: float, y: float) -> tuple[int, int]:
        """(row, column) of the cell containing world point (x, y)."""
        return (int(np.floor((y - self.origin[1]) / self.resolution)),
                int(np.floor((x - self.origin[0]) / self.resolution)))


def _snap_down(value: float, resolution: float) -> float:
    return float(np.floor(value / resolution + 1e-9)) * resolution


def _snap_up(value: float, resolution: float) -> float:
    return float(np.ceil(value / resolution - 1e-9)) * resolution


def arena_bounds(spec: WorldSpec, client: int, static_ids: list[int]) -> tuple[float, float, float, float]:
    """(xmin, ymin, xmax, ymax) of the arena: static geometry plus points of interest."""
    if static_ids:
        boxes = np.array([sum(p.getAABB(b, physicsClientId=client), ()) for b in static_ids])
        xmin, ymin = boxes[:, 0].min(), boxes[:, 1].min()
        xmax, ymax = boxes[:, 3].max(), boxes[:, 4].max()
    else:
        half = EMPTY_EXTENT / 2
        xmin, ymin, xmax, ymax = -half, -half, half, half
    points = [s.xyz for s in spec.start_poses] + [v.xyz for v in spec.victims] + [t.xyz for t in spec.rfid_tags]
    for x, y, _ in points:
        xmin, ymin = min(xmin, x - POINT_MARGIN), min(ymin, y - POINT_MARGIN)
        xmax, ymax = max(xmax, x + POINT_MARGIN), max(ymax, y + POINT_MARGIN)
    return float(xmin), float(ymin), float(xmax), float(ymax)


def _surface_heights(client: int, xs: np.ndarray, ys: np.ndarray, z_top: float, z_bottom: float) -> np.ndarray:
    """Height of the highest surface at every (x, y) cell centre; NaN where a ray meets nothing."""
    gx, gy = np.meshgrid(xs, ys)  # rows along y, columns along x
    n = gx.size
    starts = np.column_stack([gx.ravel(), gy.ravel(), np.full(n, z_top)])
    ends = np.column_stack([gx.ravel(), gy.ravel(), np.full(n, z_bottom)])
    hits = ray_test(client, starts, ends)
    fractions = np.fromiter((h[2] if h[0] >= 0 else np.nan for h in hits), dtype=float, count=n)
    return (z_top + (z_bottom - z_top) * fractions).reshape(gx.shape)


def disc(radius: int) -> np.ndarray:
    """Boolean disc footprint of ``radius`` cells for the image filters."""
    offsets = np.arange(-radius, radius + 1)
    return offsets[:, None] ** 2 + offsets[None, :] ** 2 <= radius * radius


def _window_min(heights: np.ndarray, radius: int) -> np.ndarray:
    """Lowest known height within ``radius`` cells (a disc) of every cell."""
    filled = np.where(np.isnan(heights), np.inf, heights)
    return ndimage.minimum_filter(filled, footprint=disc(radius), mode="constant", cval=np.inf)


def reachable(walkable: np.ndarray, seeds: np.ndarray) -> np.ndarray:
    """Cells of ``walkable`` 4-connected to a seed cell (one labelling pass, no Python loop)."""
    labels, _ = ndimage.label(walkable)
    seeded = np.unique(labels[seeds & walkable])
    return np.isin(labels, seeded[seeded > 0])


def _points_extent(spec: WorldSpec) -> tuple[float, float, float, float]:
    """The box around every position in the file: the map covers at least this."""
    points = [i.xyz for i in spec.static] + [s.xyz for s in spec.start_poses] + [v.xyz for v in spec.victims]
    xs, ys = [pt[0] for pt in points] or [0.0], [pt[1] for pt in points] or [0.0]
    return min(xs), min(ys), max(xs), max(ys)


def _check_cells(spec: WorldSpec, bounds: tuple[float, float, float, float], resolution: float) -> None:
    length, width = bounds[2] - bounds[0] + 2 * BORDER, bounds[3] - bounds[1] + 2 * BORDER
    cells = (length / resolution) * (width / resolution)
    if cells > MAX_MAP_CELLS:
        raise ConfigError(f"{spec.source or spec.name}: a map of {length:.0f} m x {width:.0f} m at {resolution:g} m "
                          f"per cell has {cells:.0f} cells, at most {MAX_MAP_CELLS}: give a coarser "
                          "map_resolution (or --resolution)")


def occupancy_map(spec: WorldSpec, resolution: float = 0.05) -> OccupancyMap:
    """The occupancy grid of ``spec``, every level flattened into one (rule in the module docstring)."""
    return occupancy_maps(spec, resolution)[""]


def levels(spec: WorldSpec) -> list[float]:
    """Heights of the raised levels robots start on (start poses more than STEP above the floor), lowest first."""
    raised = sorted({round(s.xyz[2], 3) for s in spec.start_poses if s.xyz[2] > spec.floor.z + STEP + TOLERANCE})
    return [float(z) for z in raised]


def occupancy_maps(spec: WorldSpec, resolution: float = 0.05) -> dict[str, OccupancyMap]:
    """The flattened map under key "" and, for a multi-level world, one map per raised level
    (keys "level1", "level2", ... from :func:`levels`): free only where that level's floor is."""
    if not resolution > 0:
        raise ValueError(f"resolution must be positive, got {resolution}")
    _check_cells(spec, _points_extent(spec), resolution)  # the world's own positions: before building it
    with quiet_stdout():
        client = p.connect(p.DIRECT)
    try:
        world = build_world(client, spec, textures=False)  # looks do not matter to rays
        xmin, ymin, xmax, ymax = arena_bounds(spec, client, world.static_ids)
        _check_cells(spec, (xmin, ymin, xmax, ymax), resolution)
        x0, y0 = _snap_down(xmin - BORDER, resolution), _snap_down(ymin - BORDER, resolution)
        x1, y1 = _snap_up(xmax + BORDER, resolution), _snap_up(ymax + BORDER, resolution)
        cols, rows = int(round((x1 - x0) / resolution)), int(round((y1 - y0) / resolution))
        xs = x0 + (np.arange(cols) + 0.5) * resolution
        ys = y0 + (np.arange(rows) + 0.5) * resolution
        bodies = range(p.getNumBodies(physicsClientId=client))
        z_top = max(p.getAABB(p.getBodyUniqueId(i, physicsClientId=client), physicsClientId=client)[1][2]
                    for i in bodies) + 1.0
        heights = _surface_heights(client, xs, ys, z_top, spec.floor.z - 1.0)
    finally:
        p.disconnect(client)

    known = ~np.isnan(heights)
    radius = max(1, int(np.ceil(SLOPE_WINDOW / resolution - 1e-9)))
    step = known & (heights - _window_min(heights, radius) > STEP + TOLERANCE)
    floor_level = spec.floor.z  # top of the world's floor slab
    ground = known & ~step & (heights <= floor_level + STEP + TOLERANCE)
    # robots also start where the world puts them (a quay above a sea bed, a plateau on a terrain)
    for pose in spec.start_poses:
        row = int(np.floor((pose.xyz[1] - y0) / resolution))
        col = int(np.floor((pose.xyz[0] - x0) / resolution))
        if 0 <= row < rows and 0 <= col < cols and abs(heights[row, col] - pose.xyz[2]) <= STEP + TOLERANCE:
            ground[row, col] = not step[row, col]
    reached = reachable(known & ~step, ground)
    cells = np.full(heights.shape, UNKNOWN, dtype=np.int8)
    cells[known] = OCCUPIED
    cells[reached] = FREE
    inside_x = (xs > xmin) & (xs < xmax)
    inside_y = (ys > ymin) & (ys < ymax)
    cells[~np.outer(inside_y, inside_x)] = UNKNOWN
    origin = (round(x0, 9), round(y0, 9))
    maps = {"": OccupancyMap(cells, float(resolution), origin)}
    for k, level in enumerate(levels(spec), start=1):
        on_level = reached & (np.abs(heights - level) <= STEP + TOLERANCE)
        level_cells = np.where(cells == UNKNOWN, UNKNOWN, OCCUPIED).astype(np.int8)
        level_cells[on_level & (cells == FREE)] = FREE
        maps[f"level{k}"] = OccupancyMap(level_cells, float(resolution), origin)
    return maps


def map_image(grid: OccupancyMap) -> np.ndarray:
    """The PGM pixels of ``grid``: row 0 at the top (the largest y), as map_server expects."""
    pixels = np.full(grid.cells.shape, UNKNOWN_PIXEL, dtype=np.uint8)
    pixels[grid.cells == FREE] = FREE_PIXEL
    pixels[grid.cells == OCCUPIED] = OCCUPIED_PIXEL
    return np.flipud(pixels)


def write_map(spec: WorldSpec, out_dir: Path, resolution: float = 0.05) -> list[Path]:
    """Write ``<name>_map.pgm`` and ``<name>_map.yaml`` into ``out_dir`` (and ``<name>_level<k>_map.*``
    for each raised level of a multi-level world); returns the paths written."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    heights = dict(zip([f"level{k}" for k in range(1, len(levels(spec)) + 1)], levels(spec)))
    for key, grid in occupancy_maps(spec, resolution).items():
        stem = f"{spec.name}_{key}_map" if key else f"{spec.name}_map"
        pgm, meta = out_dir / f"{stem}.pgm", out_dir / f"{stem}.yaml"
        Image.fromarray(map_image(grid)).save(pgm)
        info = {
            "image": pgm.name,
            "mode": "trinary",
            "resolution": float(resolution),
            "origin": [float(grid.origin[0]), float(grid.origin[1]), 0.0],
            "negate": 0,
            "occupied_thresh": OCCUPIED_THRESH,
            "free_thresh": FREE_THRESH,
        }
        what = f"level {key[5:]} (floor at z = {heights[key]:g} m)" if key else "all levels flattened"
        header = (f"# Occupancy map of world '{spec.name}', {what}, for Nav2's map_server; map frame = world frame.\n"
                  f"# Generated by `usarsim map {spec.name}` from worlds/{spec.name}.yaml: do not edit.\n")
        meta.write_text(header + yaml.safe_dump(info, sort_keys=False, default_flow_style=None), encoding="utf-8")
        written += [pgm, meta]
    return written


__all__ = ["OccupancyMap", "arena_bounds", "disc", "levels", "map_image", "occupancy_map", "occupancy_maps", "reachable",
           "write_map"]
