"""Water volumes: what a world declares for floating, diving and flying robots, and bad input."""
import pybullet as p
import pytest

from usarsim.config_loading import ConfigError
from usarsim.sim.water import WaterSpec, submerged_fraction, water_at
from usarsim.sim.world import build_world, load_world_file

BASE = """\
name: pool
description: a pool
gps_origin: {lat: 10.0, lon: 20.0}
placement: [1.0, 2.0, -3.0]
start_poses:
  - {tag: A, xyz: [0, 0, 0]}
"""


def write(tmp_path, text):
    path = tmp_path / "w.yaml"
    path.write_text(text)
    return path


def test_water_is_placed_and_found_by_point(tmp_path):
    spec = load_world_file(write(tmp_path, BASE + "water:\n  - {center: [5, 0], size: [4, 2], surface: 0.0, "
                                                  "bottom: -2.0, density: 1025.0, current: [0.5, 0, 0]}\n"))
    (water,) = spec.water
    assert water.center == (6.0, 2.0) and (water.surface, water.bottom) == (-3.0, -5.0)
    assert water_at(spec.water, (6.0, 2.0, -4.0)) is water
    assert water_at(spec.water, (6.0, 2.0, -2.9)) is None  # above the surface
    assert water_at(spec.water, (8.5, 2.0, -4.0)) is None  # beside the pool
    assert water.depth((6.0, 2.0, -4.0)) == pytest.approx(1.0)
    assert submerged_fraction(water, -3.5, -2.5) == pytest.approx(0.5)
    assert water.density == 1025.0 and water.current == (0.5, 0.0, 0.0)
    client = p.connect(p.DIRECT)
    try:
        world = build_world(client, spec)
        assert world.water_at((6.0, 2.0, -4.0)) is water
        # drawn, but no collision: a ray passes through the water to nothing
        assert p.rayTest((6.0, 2.0, -3.2), (6.0, 2.0, -4.9), physicsClientId=client)[0][0] == -1
    finally:
        p.disconnect(client)


@pytest.mark.parametrize("item, message", [
    ("{center: [0, 0], size: [0, 2], surface: 0, bottom: -1}", "size must be positive"),
    ("{center: [0, 0], size: [1, 2], surface: -1, bottom: 0}", "surface .* must be above bottom"),
    ("{center: [0, 0], size: [1, 2], surface: 0, bottom: -1, density: -5}", "density must be positive"),
    ("{center: [0, 0], size: [1, .nan], surface: 0, bottom: -1}", "size.*finite"),
    ("{center: [0, 0], size: [1, 2], surface: 0, bottom: -1, salinity: 3}", "unknown key 'salinity'"),
])
def test_bad_water_names_file_and_key(tmp_path, item, message):
    with pytest.raises(ConfigError, match=r"w\.yaml.*" + message):
        load_world_file(write(tmp_path, BASE + f"water:\n  - {item}\n"))


def test_fresh_water_by_default():
    assert WaterSpec((0, 0), (1, 1), 0.0, -1.0).density == 1000.0
