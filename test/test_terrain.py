"""Height-map terrain: layout, GPS origin from the terrain, bad input, GPS fix outdoors vs indoors."""
import numpy as np
import pybullet as p
import pytest
from PIL import Image

from usarsim.config_loading import ConfigError
from usarsim.sim.simulator import Simulator
from usarsim.sim.terrain import height_at, load_heights
from usarsim.sim.world import build_world, load_world, load_world_file, worlds_dir
from usarsim.worldgen.hills import hills

BASE = """\
name: t
description: terrain test
start_poses:
  - {tag: A, xyz: [0, 0, 0]}
"""


def write(tmp_path, text, grid=None):
    if grid is not None:
        np.savetxt(tmp_path / "g.csv", grid, delimiter=",")
    path = tmp_path / "w.yaml"
    path.write_text(text)
    return path


def test_grid_rows_run_north_to_south_and_columns_west_to_east(tmp_path):
    grid = np.zeros((5, 7))
    grid[0, :] = 1.0  # north edge
    grid[:, 0] += 2.0  # west edge
    spec = load_world_file(write(tmp_path, BASE + "gps_origin: {lat: 1, lon: 2}\nterrain: {heightmap: g.csv, "
                                 "size: [4, 6], height_scale: 1.0, center: [10, 20], z: -1.0}\nfloor: {z: -5.0}\n", grid))
    client = p.connect(p.DIRECT)
    try:
        build_world(client, spec)
        heights = load_heights(spec.terrain, tmp_path, "w")

        def ray_z(x, y):
            return p.rayTest((x, y, 10), (x, y, -10), physicsClientId=client)[0][3][2]
        # bilinear between the samples around each point (north row +1, west column +2, z = -1 at 0)
        for x, y, expected in [(11.9, 20.0, -0.1), (8.1, 20.0, -1.0), (10.0, 22.9, 0.8), (11.9, 22.9, 1.7)]:
            assert ray_z(x, y) == pytest.approx(expected, abs=1e-6)
            assert height_at(spec.terrain, heights, x, y) == pytest.approx(expected, abs=1e-6)
        assert ray_z(11.99, 20.0) == pytest.approx(0.0, abs=0.02) and ray_z(10.0, 22.99) == pytest.approx(1.0, abs=0.03)
    finally:
        p.disconnect(client)


def test_gps_origin_follows_the_terrain_geo_origin(tmp_path):
    spec = load_world_file(write(tmp_path, BASE + "terrain: {heightmap: g.csv, size: [4, 6], center: [1000, 0], "
                                 "geo_origin: {lat: 30.0, lon: -96.0, alt: 50}}\n", np.zeros((3, 3))))
    # the terrain centre is 1 km north of the world origin: the origin is 1 km south of 30 N
    assert spec.gps_origin.lat == pytest.approx(30.0 - 1000 / 110852.0, abs=1e-4)
    assert spec.gps_origin.lon == pytest.approx(-96.0) and spec.gps_origin.alt == pytest.approx(50.0, abs=0.2)


@pytest.mark.parametrize("terrain, grid, message", [
    ("{heightmap: missing.png, size: [4, 4]}", None, r"terrain\.heightmap: file missing\.png not found"),
    ("{heightmap: g.csv, size: [4, .nan]}", np.zeros((3, 3)), r"terrain\.size.*finite"),
    ("{heightmap: g.csv, size: [4, -1]}", np.zeros((3, 3)), r"terrain\.size must be positive"),
    ("{heightmap: g.csv, size: [4, 4], height_scale: 0}", np.zeros((3, 3)), r"height_scale must be positive"),
    ("{heightmap: g.csv, size: [4, 4]}", np.zeros((1, 3)), r"terrain\.heightmap: g\.csv is 1 x 3"),
    ("{heightmap: w.yaml, size: [4, 4]}", None, r"terrain\.heightmap: w\.yaml is not an image"),
])
def test_bad_terrain_names_file_and_key(tmp_path, terrain, grid, message):
    path = write(tmp_path, BASE + f"gps_origin: {{lat: 1, lon: 2}}\nterrain: {terrain}\n", grid)
    with pytest.raises(ConfigError, match=r"w\.yaml.*" + message):
        build_world(p.connect(p.DIRECT), load_world_file(path))


def test_one_gps_origin_only(tmp_path):
    path = write(tmp_path, BASE + "gps_origin: {lat: 1, lon: 2}\nterrain: {heightmap: g.csv, size: [4, 4], "
                 "geo_origin: {lat: 1, lon: 2}}\n", np.zeros((3, 3)))
    with pytest.raises(ConfigError, match="exactly one"):
        load_world_file(path)


def test_shipped_height_map_is_the_generators():
    shipped = np.asarray(Image.open(worlds_dir() / "hills_heightmap.png"))
    assert np.array_equal(shipped, np.round(hills() * 255).astype(np.uint8))


def gps_fix(world):
    with Simulator(world, physics_rate=100.0) as sim:
        robot = sim.spawn("P2AT", "R", start=sim.spec.start_poses[0].tag)
        gps = next(s for s in robot.sensors if s.spec.type == "GPS")
        sim.run_for(0.5)
        return gps.read(sim.time)


def test_gps_fix_on_the_hills_none_indoors():
    outdoors, indoors = gps_fix("hills"), gps_fix("yellow")
    assert outdoors.fix and outdoors.satellites >= 4
    assert not indoors.fix and indoors.satellites == 0
    origin = load_world("hills").terrain.geo_origin
    assert outdoors.latitude == pytest.approx(origin.lat, abs=2e-4)  # Start1 is 14 m south of the centre
