"""The shipped arenas: safe start poses, sane physics at load time, the features they promise."""
import math

import numpy as np
import pybullet as p
import pytest

from usarsim import rotations
from usarsim.protocol import frames
from usarsim.sim.simulator import Simulator
from usarsim.sim.world import SPAWN_HEIGHT, available_worlds, build_world, load_world
from usarsim.sim.world_geometry import step_field_heights

STAIR_RISE, STAIR_RUN = 0.18, 0.28
ORANGE_UPPER_LEVEL = 1.08


@pytest.fixture
def client():
    cid = p.connect(p.DIRECT)
    yield cid
    p.disconnect(cid)


def surface_z(client, x, y, top=5.0):
    hit = p.rayTest((x, y, top), (x, y, -20.0), physicsClientId=client)[0]
    return hit[3][2] if hit[0] >= 0 else None


def penetration(client, a, b):
    """How deep bodies a and b overlap (0 when apart)."""
    points = p.getClosestPoints(a, b, 0.0, physicsClientId=client)
    return max((-c[8] for c in points), default=0.0)


def walls_box(built):
    boxes = np.array([sum(p.getAABB(b, physicsClientId=built.client), ()) for b in built.static_ids])
    return boxes[:, :3].min(axis=0), boxes[:, 3:].max(axis=0)


@pytest.mark.parametrize("name", available_worlds())
def test_p2at_stays_upright_at_every_start_pose(name):
    with Simulator(name) as sim:
        for pose in sim.spec.start_poses:
            robot = sim.spawn("P2AT", start=pose.tag)
            sim.run_for(1.0)
            truth = sim.ground_truth(robot.name)
            roll, pitch, yaw = rotations.euler_from_quaternion(truth.orientation)
            assert abs(roll) < 0.05 and abs(pitch) < 0.05, (pose.tag, roll, pitch)
            assert math.dist(truth.position[:2], pose.xyz[:2]) < 0.03, pose.tag
            assert 0.0 < truth.position[2] - pose.xyz[2] < 0.3, pose.tag  # resting on the floor there
            assert math.hypot(*truth.linear_velocity) < 0.02, pose.tag
            sim.remove(robot.name)


@pytest.mark.parametrize("name", ["yellow", "orange", "red"])
def test_obstacles_rest_without_overlap(name, client):
    built = build_world(client, load_world(name))
    solids = [built.floor_id, *built.static_ids, *built.obstacle_ids]
    for body in built.obstacle_ids:
        for other in solids:
            if other != body:
                assert penetration(client, body, other) < 0.003, (body, other)
    start = [p.getBasePositionAndOrientation(b, physicsClientId=client)[0] for b in built.obstacle_ids]
    p.setGravity(0, 0, -9.81, physicsClientId=client)
    p.setTimeStep(1 / 200, physicsClientId=client)
    for _ in range(400):
        p.stepSimulation(physicsClientId=client)
    for body, before in zip(built.obstacle_ids, start):
        after = p.getBasePositionAndOrientation(body, physicsClientId=client)[0]
        assert math.dist(before, after) < 0.02, built.spec.obstacles[built.obstacle_ids.index(body)].name


@pytest.mark.parametrize("name", ["yellow", "orange", "red"])
def test_victims_and_tags_inside_the_arena_and_not_in_walls(name, client):
    built = build_world(client, load_world(name))
    low, high = walls_box(built)
    for victim in built.victims:
        for part, (x, y, _z) in victim.parts():
            assert low[0] < x < high[0] and low[1] < y < high[1], (victim.id, part)
        for body in victim.body_ids:
            for other in built.static_ids + built.obstacle_ids:
                assert penetration(client, body, other) < 0.01, (victim.id, other)
    dot = p.createCollisionShape(p.GEOM_SPHERE, radius=0.005, physicsClientId=client)
    for tag in built.rfid_tags.values():
        x, y, z = tag.position
        assert low[0] < x < high[0] and low[1] < y < high[1], tag.id
        marker = p.createMultiBody(0, dot, -1, tag.position, physicsClientId=client)
        for other in built.static_ids:
            assert penetration(client, marker, other) < 0.004, (tag.id, other)
        p.removeBody(marker, physicsClientId=client)
        floor = surface_z(client, x, y, top=z)
        assert floor is not None and 0.0 <= z - floor < 0.05, tag.id  # lying on a surface


# The manual's recommended start locations (§9.4), USARSim coordinates: x north, y east, z down,
# the robot appearing at the standard spawn height above the floor
MANUAL_STARTS = {"yellow": (4.5, 1.9, 1.8), "orange": (1.2, 2.3, 1.16), "red": (0.76, 2.3, 1.8)}


@pytest.mark.parametrize("name", sorted(MANUAL_STARTS))
def test_arenas_put_the_manual_start_first_in_usarsim_coordinates(name):
    spec = load_world(name)
    x, y, z = spec.start_poses[0].xyz
    assert frames.flip_vector((x, y, z + SPAWN_HEIGHT)) == pytest.approx(MANUAL_STARTS[name], abs=1e-9)
    assert not spec.outdoor


def test_orange_has_victims_on_two_levels(client):
    spec = load_world("orange")
    build_world(client, spec)
    levels = {round(v.xyz[2] - spec.floor.z, 2) for v in spec.victims if not v.false_alarm}
    assert levels == {0.0, ORANGE_UPPER_LEVEL}
    postures = {v.posture for v in spec.victims if not v.false_alarm}
    assert {"lying", "sitting", "trapped"} <= postures
    assert any(v.segments and v.sound_db for v in spec.victims)
    assert any(v.false_alarm for v in spec.victims)
    for v in spec.victims:  # each stands on a surface at its level
        yaw = v.yaw
        for dx in (-0.6, 0.6):  # beside the body, not on it
            x = v.xyz[0] - math.sin(yaw) * dx
            y = v.xyz[1] + math.cos(yaw) * dx
            assert surface_z(client, x, y) == pytest.approx(v.xyz[2], abs=0.02), v.id


def test_orange_ramp_is_15_degrees_and_stairs_climb_to_the_upper_level(client):
    spec = load_world("orange")
    build_world(client, spec)
    ramp = next(s for s in spec.static if s.kind == "ramp")
    assert math.degrees(math.atan2(ramp.size[2], ramp.size[0])) == pytest.approx(15.0, abs=0.05)
    x0 = ramp.xyz[0] - ramp.size[0] / 2
    z1, z2 = surface_z(client, x0 + 1.0, ramp.xyz[1]), surface_z(client, x0 + 3.0, ramp.xyz[1])
    assert math.degrees(math.atan2(z2 - z1, 2.0)) == pytest.approx(15.0, abs=0.1)
    assert surface_z(client, x0 + ramp.size[0] + 0.3, ramp.xyz[1]) == pytest.approx(spec.floor.z + ORANGE_UPPER_LEVEL)
    stairs = next(s for s in spec.static if s.kind == "stairs")
    assert stairs.size[2] == pytest.approx(ORANGE_UPPER_LEVEL)
    assert stairs.size[2] / stairs.step_count == pytest.approx(STAIR_RISE)
    assert stairs.size[0] / stairs.step_count == pytest.approx(STAIR_RUN)


def test_red_has_stairs_and_step_fields():
    spec = load_world("red")
    stairs = [s for s in spec.static if s.kind == "stairs"]
    fields = [s for s in spec.static if s.kind == "step_field"]
    assert len(stairs) >= 1 and len(fields) >= 2
    for s in stairs:
        assert s.size[2] / s.step_count == pytest.approx(STAIR_RISE)
        assert s.size[0] / s.step_count == pytest.approx(STAIR_RUN)
    for f in fields:
        assert f.cell == pytest.approx(0.1) and f.min_height == 0.0 and f.size[2] == pytest.approx(0.3)
    assert len(spec.obstacles) <= 120  # rubble stays cheap enough for many robots


@pytest.mark.parametrize("name", ["orange", "red"])
def test_every_step_field_post_is_built(name, client):
    spec = load_world(name)
    build_world(client, spec)
    for item in (s for s in spec.static if s.kind == "step_field"):
        heights = step_field_heights(item)
        nx, ny = heights.shape
        x0, y0 = item.xyz[0] - item.size[0] / 2, item.xyz[1] - item.size[1] / 2
        floor = spec.floor.z
        starts = [(x0 + (i + 0.5) * item.cell, y0 + (j + 0.5) * item.cell, floor + 2.0)
                  for i in range(nx) for j in range(ny)]
        hits = p.rayTestBatch(starts, [(x, y, floor - 0.5) for x, y, _ in starts], physicsClientId=client)
        tops = np.array([h[3][2] for h in hits]).reshape(nx, ny) - floor
        assert np.allclose(tops, np.maximum(heights, 0.005), atol=1e-6), item.name


# (start tag, distance to the first thing ahead) as documented in each arena's header comment
CLEAR_STRETCHES = {"orange": ("Start1", 6.3), "red": ("Start1", 4.24), "yellow": ("Start1", 3.0)}


@pytest.mark.parametrize("name", sorted(CLEAR_STRETCHES))
def test_documented_clear_stretch_is_clear(name, client):
    spec = load_world(name)
    build_world(client, spec)
    tag, length = CLEAR_STRETCHES[name]
    pose = next(s for s in spec.start_poses if s.tag == tag)
    x, y, z = pose.xyz
    yaw = pose.rpy[2]
    ahead, left = (math.cos(yaw), math.sin(yaw)), (-math.sin(yaw), math.cos(yaw))
    side = 0.8 if name != "yellow" else 0.3
    starts, ends = [], []
    for offset in np.linspace(-side, side, 5):
        for height in (0.02, 0.15, 0.4):
            sx, sy = x + left[0] * offset, y + left[1] * offset
            starts.append((sx, sy, z + height))
            ends.append((sx + ahead[0] * (length - 0.02), sy + ahead[1] * (length - 0.02), z + height))
    assert all(h[0] < 0 for h in p.rayTestBatch(starts, ends, physicsClientId=client))


# the arenas before they were grown to full size: (area spanned by the walls m^2, wall length m)
SKETCH_SIZE = {"yellow": (110.1, 63.8), "orange": (194.8, 89.0), "red": (142.4, 52.8)}


@pytest.mark.parametrize("name", sorted(SKETCH_SIZE))
def test_arenas_are_full_size(name, client):
    spec = load_world(name)
    built = build_world(client, spec)
    walls = [s for s in spec.static if s.kind == "box" and s.size[2] >= 1.0 and min(s.size[:2]) <= 0.15]
    length = sum(max(s.size[:2]) for s in walls)
    low, high = walls_box(built)
    area = (high[0] - low[0]) * (high[1] - low[1])
    old_area, old_length = SKETCH_SIZE[name]
    assert area >= 3 * old_area and length >= 3 * old_length, (area, length)
    assert len(spec.victims) >= 6 and len(spec.rfid_tags) >= 8
    # victims and tags spread through the arena, not only in its old core
    xs = [v.xyz[0] for v in spec.victims] + [t.xyz[0] for t in spec.rfid_tags]
    assert max(xs) - min(xs) >= 0.6 * (high[0] - low[0])
