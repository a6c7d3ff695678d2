"""Occupancy maps for Nav2's map_server: the rule, the file format, the shipped maps."""
import math

import numpy as np
import pytest
import yaml
from PIL import Image

from usarsim.sim import mapgen
from usarsim.sim.world import available_worlds, load_world, load_world_file, worlds_dir

WALL_WORLD = """\
name: wall
description: one wall
gps_origin: {lat: 10.0, lon: 20.0}
floor: {size: [10.0, 10.0]}
start_poses:
  - {tag: A, xyz: [0, 0, 0]}
static:
  - {kind: box, name: W, xyz: [1.1, 0.0, 0.6], size: [0.2, 2.0, 1.2]}
"""

# a 15 degree ramp up onto a 0.5 m platform, and a 0.4 m block standing alone
LEVELS_WORLD = """\
name: levels
description: ramp, platform, block
gps_origin: {lat: 10.0, lon: 20.0}
floor: {size: [12.0, 12.0], center: [2.0, 0.0]}
start_poses:
  - {tag: A, xyz: [-1.0, 0, 0]}
static:
  - {kind: ramp, name: R, xyz: [0.9330, 0.0, 0.0], size: [1.8660, 1.0, 0.5]}
  - {kind: box, name: P, xyz: [3.366, 0.0, 0.25], size: [3.0, 2.0, 0.5]}
  - {kind: box, name: B, xyz: [1.0, 3.0, 0.2], size: [1.0, 1.0, 0.4]}
"""


def load(tmp_path, text):
    path = tmp_path / "w.yaml"
    path.write_text(text)
    return load_world_file(path)


def map_server_cells(pgm_path, meta):
    """Read a map the way nav2_map_server does in trinary mode: -1 / 0 / 100, rows from the bottom."""
    pixels = np.asarray(Image.open(pgm_path), dtype=float)
    occ = pixels / 255.0 if meta["negate"] else (255.0 - pixels) / 255.0
    cells = np.full(pixels.shape, -1)
    cells[occ > meta["occupied_thresh"]] = 100
    cells[occ < meta["free_thresh"]] = 0
    return np.flipud(cells)


def test_one_wall_is_occupied_exactly_where_it_stands(tmp_path):
    paths = mapgen.write_map(load(tmp_path, WALL_WORLD), tmp_path / "out", 0.05)
    assert [p.name for p in paths] == ["wall_map.pgm", "wall_map.yaml"]
    meta = yaml.safe_load(paths[1].read_text())
    cells = map_server_cells(paths[0], meta)
    ox, oy, _ = meta["origin"]
    res = meta["resolution"]
    # bounds: the wall (x 1.0..1.2, y -1..1) and the start pose +- 0.3 m; 0.5 m unknown border
    assert (ox, oy) == pytest.approx((-0.8, -1.5))
    assert cells.shape == (60, 50)
    for row in range(cells.shape[0]):
        for col in range(cells.shape[1]):
            x, y = ox + (col + 0.5) * res, oy + (row + 0.5) * res
            if not (-0.3 < x < 1.2 and -1.0 < y < 1.0):
                expected = -1
            elif 1.0 < x < 1.2:
                expected = 100
            else:
                expected = 0
            assert cells[row, col] == expected, (x, y)


def test_ramps_platform_edges_and_block_tops(tmp_path):
    grid = mapgen.occupancy_map(load(tmp_path, LEVELS_WORLD), 0.05)

    def at(x, y):
        return int(grid.cells[grid.cell_of(x, y)])

    assert at(-0.5, 0.0) == mapgen.FREE  # floor before the ramp
    assert at(0.9, 0.0) == mapgen.FREE  # on the 15 degree slope
    assert at(0.9, 0.49) == mapgen.OCCUPIED  # the ramp's side rises out of the floor
    assert at(3.4, 0.0) == mapgen.FREE  # the platform, reached by the ramp
    assert at(3.4, 0.97) == mapgen.OCCUPIED  # its rim: a 0.5 m drop
    assert at(3.4, 1.1) == mapgen.FREE  # the floor beside it
    assert at(1.0, 3.0) == mapgen.OCCUPIED  # the top of a block no wheel reaches
    assert at(1.0, 2.52) == mapgen.OCCUPIED  # its side
    assert at(1.0, 2.47) == mapgen.FREE


def test_yaml_is_what_map_server_loads(tmp_path):
    pgm, meta_path = mapgen.write_map(load(tmp_path, WALL_WORLD), tmp_path, 0.1)
    meta = yaml.safe_load(meta_path.read_text())
    assert set(meta) == {"image", "mode", "resolution", "origin", "negate", "occupied_thresh", "free_thresh"}
    assert meta["image"] == pgm.name and (meta_path.parent / meta["image"]).exists()
    assert meta["mode"] == "trinary"
    assert isinstance(meta["resolution"], float) and meta["resolution"] == 0.1
    assert len(meta["origin"]) == 3 and all(isinstance(v, float) for v in meta["origin"])
    assert meta["negate"] == 0 and isinstance(meta["negate"], int)
    assert (meta["occupied_thresh"], meta["free_thresh"]) == (0.65, 0.25)
    raw = pgm.read_bytes()
    assert raw.startswith(b"P5") and b"255" in raw[:20]
    # every pixel value is one map_server reads as intended (unknown must not read as free)
    cells = map_server_cells(pgm, meta)
    assert set(np.unique(cells)) == {-1, 0, 100}
    values = set(np.unique(np.asarray(Image.open(pgm))))
    assert values == {mapgen.FREE_PIXEL, mapgen.OCCUPIED_PIXEL, mapgen.UNKNOWN_PIXEL}


def test_map_frame_is_the_world_frame(tmp_path):
    grid = mapgen.occupancy_map(load(tmp_path, WALL_WORLD), 0.05)
    row, col = grid.cell_of(1.1, 0.5)
    assert grid.cells[row, col] == mapgen.OCCUPIED
    assert grid.origin[0] + (col + 0.5) * grid.resolution == pytest.approx(1.125)
    assert grid.origin[1] + (row + 0.5) * grid.resolution == pytest.approx(0.525)
    image = mapgen.map_image(grid)  # row 0 of the image is the largest y
    assert image[grid.cells.shape[0] - 1 - row, col] == mapgen.OCCUPIED_PIXEL


@pytest.mark.slow  # rebuilds every shipped world's map
def test_shipped_maps_are_up_to_date(tmp_path):
    for name in available_worlds():
        spec = load_world(name)
        written = mapgen.write_map(spec, tmp_path, spec.map_resolution)
        for pgm, meta in zip(written[::2], written[1::2]):
            shipped = worlds_dir() / pgm.name
            assert shipped.exists(), f"{shipped} missing: run `usarsim map`"
            fresh, old = np.asarray(Image.open(pgm)), np.asarray(Image.open(shipped))
            # a handful of cells may flip where a surface sits exactly on a threshold and the
            # platform's ray arithmetic rounds differently; an edited world changes more
            assert fresh.shape == old.shape and np.count_nonzero(fresh != old) <= 10, \
                f"{shipped} is stale: run `usarsim map {name}`"
            assert (worlds_dir() / meta.name).read_text() == meta.read_text()


def test_orange_has_one_map_per_level():
    spec = load_world("orange")
    assert mapgen.levels(spec) == [pytest.approx(spec.floor.z + 1.08)]
    maps = mapgen.occupancy_maps(spec, 0.1)
    assert set(maps) == {"", "level1"}
    upper = next(s for s in spec.start_poses if s.tag == "Upper")
    ground = spec.start_poses[0]

    def at(grid, pose):
        return int(grid.cells[grid.cell_of(*pose.xyz[:2])])
    assert at(maps[""], upper) == at(maps[""], ground) == mapgen.FREE  # flattened: both free
    assert at(maps["level1"], upper) == mapgen.FREE and at(maps["level1"], ground) == mapgen.OCCUPIED


def test_start_poses_are_free_in_the_shipped_maps():
    for name in available_worlds():
        meta = yaml.safe_load((worlds_dir() / f"{name}_map.yaml").read_text())
        cells = map_server_cells(worlds_dir() / meta["image"], meta)
        for pose in load_world(name).start_poses:
            col = math.floor((pose.xyz[0] - meta["origin"][0]) / meta["resolution"])
            row = math.floor((pose.xyz[1] - meta["origin"][1]) / meta["resolution"])
            assert cells[row, col] == 0, (name, pose.tag)
