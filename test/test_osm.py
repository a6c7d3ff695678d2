"""usarsim osm: street worlds from OpenStreetMap extracts; the shipped town; bad files."""
import math

import pybullet as p
import pytest
import yaml

from usarsim.cli import main
from usarsim.config_loading import ConfigError
from usarsim.sim.commands import AckermannDrive
from usarsim.sim.simulator import Simulator
from usarsim.sim.world import build_world, load_world, load_world_file, worlds_dir
from usarsim.worldgen import osm
from usarsim.worldgen.town import town_osm

# one primary road north-south through a 100 m square, one building with 4 levels beside it
SMALL = """<?xml version='1.0' encoding='UTF-8'?>
<osm version="0.6">
  <bounds minlat="10.0" minlon="20.0" maxlat="10.0009" maxlon="20.00091"/>
  <node id="1" lat="10.0" lon="20.000455"/>
  <node id="2" lat="10.0009" lon="20.000455"/>
  <node id="3" lat="10.0004" lon="20.0006"/>
  <node id="4" lat="10.0004" lon="20.0008"/>
  <node id="5" lat="10.0006" lon="20.0008"/>
  <node id="6" lat="10.0006" lon="20.0006"/>
  <way id="10"><nd ref="1"/><nd ref="2"/><tag k="highway" v="primary"/></way>
  <way id="11"><nd ref="3"/><nd ref="4"/><nd ref="5"/><nd ref="6"/><nd ref="3"/>
    <tag k="building" v="yes"/><tag k="building:levels" v="4"/></way>
</osm>
"""


def top_at(client, x, y):
    hit = p.rayTest((x, y, 50.0), (x, y, -1.0), physicsClientId=client)[0]
    return hit[3][2] if hit[0] >= 0 else None


def test_roads_kerbs_buildings_and_gps_origin(tmp_path):
    (tmp_path / "s.osm").write_text(SMALL)
    world = osm.convert(tmp_path / "s.osm", tmp_path / "s.yaml")
    assert world["gps_origin"]["lat"] == pytest.approx(10.00045) and world["gps_origin"]["lon"] == pytest.approx(20.000455)
    spec = load_world_file(tmp_path / "s.yaml")
    client = p.connect(p.DIRECT)
    try:
        build_world(client, spec)
        # the road runs north along y = 0 (lon of the origin); primary: 8 m wide
        assert top_at(client, 10.0, 0.0) == pytest.approx(0.0, abs=1e-6)
        assert top_at(client, 10.0, 3.9) == pytest.approx(0.0, abs=1e-6)
        assert top_at(client, 10.0, 4.2) == pytest.approx(osm.KERB, abs=1e-6)  # pavement beyond the kerb
        # the building east of the road (y < 0): 4 levels of 3 m
        east = (20.0008 + 20.0006) / 2 - 20.000455
        y = -east * 111320 * math.cos(math.radians(10.0))
        assert top_at(client, 0.0, y) == pytest.approx(4 * osm.STOREY, abs=1e-6)
    finally:
        p.disconnect(client)


@pytest.mark.parametrize("text, message", [
    ("<osm version='0.6'><node id='1' lat='1' lon='2'></osm>", "not a readable OSM file"),
    ("this is not xml", "not a readable OSM file"),
    ("<osm version='0.6'><node id='1' lat='1' lon='2'/></osm>", "no roads"),
])
def test_malformed_osm_gets_one_error_naming_the_file(tmp_path, text, message, capsys):
    (tmp_path / "bad.osm").write_text(text)
    with pytest.raises(ConfigError, match=r"bad\.osm.*" + message):
        osm.convert(tmp_path / "bad.osm", tmp_path / "bad.yaml")
    assert main(["osm", str(tmp_path / "bad.osm")]) == 2
    assert message in capsys.readouterr().err
    assert main(["osm", str(tmp_path / "missing.osm")]) == 2
    assert "not found" in capsys.readouterr().err


def test_shipped_town_is_what_the_project_writes(tmp_path):
    assert (worlds_dir() / "town.osm").read_text() == town_osm()
    osm.convert(worlds_dir() / "town.osm", tmp_path / "town.yaml")
    shipped = yaml.safe_load((worlds_dir() / "town.yaml").read_text())
    assert yaml.safe_load((tmp_path / "town.yaml").read_text()) == shipped


def test_cars_drive_the_town_streets():
    spec = load_world("town")
    assert spec.outdoor and len(spec.start_poses) >= 3
    with Simulator("town", physics_rate=100.0) as sim:
        sim.spawn("Sedan", "car", start="Start1")
        sim.run_for(0.5)
        before = sim.ground_truth("car").position
        sim.submit(AckermannDrive("car", 8.0))
        sim.run_for(3.0)
        after = sim.ground_truth("car").position
        assert after[0] - before[0] > 4.0 and abs(after[1] - before[1]) < 0.5  # north along Oak Street
