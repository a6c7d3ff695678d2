"""World files: parsing, validation and the built PyBullet geometry."""
import math

import pybullet as p
import pytest

from usarsim.config_loading import ConfigError
from usarsim.sim.commands import CommandError
from usarsim.sim.victims import PARTS
from usarsim.sim.world import available_worlds, build_world, load_world, load_world_file

MINIMAL = """\
name: tiny
description: test world
gps_origin: {lat: 10.0, lon: 20.0}
start_poses:
  - {tag: A, xyz: [0, 0, 0]}
"""


@pytest.fixture
def client():
    cid = p.connect(p.DIRECT)
    yield cid
    p.disconnect(cid)


def write(tmp_path, text):
    path = tmp_path / "w.yaml"
    path.write_text(text)
    return path


def height_at(client, x, y, top=5.0):
    hit = p.rayTest((x, y, top), (x, y, -1.0), physicsClientId=client)[0]
    return top + (-1.0 - top) * hit[2]


def test_shipped_worlds_load_and_have_three_start_poses():
    names = available_worlds()
    assert {"empty", "yellow"} <= set(names)
    for name in names:
        spec = load_world(name)
        assert spec.name == name
        assert len(spec.start_poses) >= 3


def test_every_shipped_world_builds(client):
    for name in available_worlds():
        built = build_world(client, load_world(name))
        assert built.start_pose(built.spec.start_poses[0].tag.lower()) == built.spec.start_poses[0]


def test_unknown_key_names_file_and_line(tmp_path):
    path = write(tmp_path, MINIMAL + "static:\n  - {kind: box, xyz: [0, 0, 0], colour: [1, 0, 0, 1]}\n")
    with pytest.raises(ConfigError, match=r"w\.yaml:7: .*unknown key 'colour'"):
        load_world_file(path)


def test_missing_field_and_wrong_type_are_reported(tmp_path):
    with pytest.raises(ConfigError, match="gps_origin"):
        load_world_file(write(tmp_path, MINIMAL.replace("gps_origin: {lat: 10.0, lon: 20.0}\n", "")))
    with pytest.raises(ConfigError, match=r"w\.yaml:3:.*lat"):
        load_world_file(write(tmp_path, MINIMAL.replace("lat: 10.0", "lat: north")))
    with pytest.raises(ConfigError, match="kind"):
        load_world_file(write(tmp_path, MINIMAL + "static:\n  - {kind: pyramid, xyz: [0, 0, 0]}\n"))


def test_semantic_errors(tmp_path):
    with pytest.raises(ConfigError, match="duplicate start pose"):
        load_world_file(write(tmp_path, MINIMAL + "  - {tag: A, xyz: [1, 0, 0]}\n"))
    with pytest.raises(ConfigError, match="size must be positive"):
        load_world_file(write(tmp_path, MINIMAL + "static:\n  - {kind: box, xyz: [0, 0, 0], size: [1, 0, 1]}\n"))
    with pytest.raises(ConfigError, match="unknown part 'Tail'"):
        load_world_file(write(tmp_path, MINIMAL + "victims:\n  - {id: F, xyz: [0, 0, 0], false_alarm: true, "
                                                  "parts: [Tail]}\n"))
    with pytest.raises(ConfigError, match="above 1000"):
        load_world_file(write(tmp_path, MINIMAL + "rfid_tags:\n  - {id: 5, xyz: [0, 0, 0]}\n"))
    with pytest.raises(ConfigError, match="unknown world 'atlantis'.*yellow"):
        load_world("atlantis")


def test_geometry_ramp_stairs_step_field(tmp_path, client):
    text = MINIMAL + """static:
  - {kind: ramp, xyz: [0, 0, 0], size: [2.0, 1.0, 0.5]}
  - {kind: stairs, xyz: [5, 0, 0], size: [1.4, 1.0, 0.9], steps: 5}
  - {kind: step_field, xyz: [10, 0, 0], size: [1.0, 1.0, 0.3], cell: 0.1, seed: 4}
"""
    built = build_world(client, load_world_file(write(tmp_path, text)))
    # ramp rises linearly toward +x: half height at the centre
    assert height_at(client, 0.0, 0.0) == pytest.approx(0.25, abs=0.01)
    assert height_at(client, 0.5, 0.0) == pytest.approx(0.375, abs=0.01)
    # stairs: 5 steps of 0.28 m run and 0.18 m rise
    for i in range(5):
        assert height_at(client, 5 - 0.7 + 0.28 * (i + 0.5), 0.0) == pytest.approx(0.18 * (i + 1), abs=1e-3)
    heights = [height_at(client, 10 - 0.45 + 0.1 * i, 0.05) for i in range(10)]
    assert all(0.0 <= h <= 0.3 for h in heights) and max(heights) - min(heights) > 0.05
    assert len(built.static_ids) == 3


def test_step_field_is_reproducible(tmp_path, client):
    from usarsim.sim.world_geometry import step_field_heights

    spec = load_world_file(write(tmp_path, MINIMAL + "static:\n  - {kind: step_field, xyz: [0, 0, 0], "
                                                     "size: [1, 1, 0.3], seed: 9}\n"))
    a, b = step_field_heights(spec.static[0]), step_field_heights(spec.static[0])
    assert (a == b).all() and a.shape == (10, 10)


def test_yellow_contents(client):
    built = build_world(client, load_world("yellow"))
    assert built.spec.start_poses[0].xyz == pytest.approx((4.5, -1.9, -1.988))  # placed: the manual's start
    glass = [b for b in built.static_ids if built.surface_of(b) == "transparent"]
    assert glass and built.ray_ignore_ids == frozenset(glass)
    assert {1001, 1002, 1003, 1004} <= set(built.rfid_tags) and len(built.rfid_tags) >= 8  # and more in the wings
    assert built.rfid_tags[1003].memory == "victim_V1_north"
    real = [v for v in built.victims if not v.false_alarm]
    fake = [v for v in built.victims if v.false_alarm]
    assert real and fake
    with pytest.raises(CommandError, match="no start pose 'Nowhere'.*Start1"):
        built.start_pose("Nowhere")


def test_victim_parts_and_ray_lookup(tmp_path, client):
    text = MINIMAL + """victims:
  - {id: V, xyz: [3, 0, 0], posture: standing, segments: [{joint: shoulder_left, init: 0, final: 1.5, rate: 1.0}]}
  - {id: F, xyz: [-3, 0, 0], false_alarm: true, parts: [Head, Leg]}
"""
    built = build_world(client, load_world_file(write(tmp_path, text)))
    victim, fake = built.victims
    parts = dict(victim.parts())
    assert set(parts) == set(PARTS)
    assert parts["Head"][2] > parts["Chest"][2] > parts["Pelvis"][2] > parts["Foot"][2] >= 0.0
    assert parts["Head"][2] == pytest.approx(1.61, abs=0.02)
    # a horizontal ray at head height hits the head part
    hit = p.rayTest((0, 0, 1.61), (6, 0, 1.61), physicsClientId=client)[0]
    assert built.victim_part_at(hit[0], hit[1]) == (victim, "Head")
    assert [name for name, _ in fake.parts()] == ["Head", "Leg"]
    assert built.victim_part_at(built.floor_id, -1) is None
    assert len(victim.body_ids) == 15  # head, chest, pelvis; each side: 2 arm parts, hand, 2 leg parts, foot
    # animation: still at t=0, moving at a quarter period; amplitude = span x tip length
    victim.update(0.0)
    assert victim.motion()[0] == pytest.approx(0.0, abs=1e-9)
    period = 2 * 1.5 / 1.0
    victim.update(period / 4)
    speed, amplitude = victim.motion()
    assert speed == pytest.approx(0.5 * 1.5 * (2 * math.pi / period) * 0.71, rel=1e-6)
    assert amplitude == pytest.approx(1.5 * 0.71)  # shoulder to fingertip
    assert fake.motion() == (0.0, 0.0)


def test_released_tags_get_low_ids(client):
    built = build_world(client, load_world("yellow"))
    first, second = built.add_rfid_tag((1.0, 1.0, 0.0)), built.add_rfid_tag((2.0, 1.0, 0.0))
    assert (first.id, second.id) == (0, 1) and first.memory == "0"
