"""What the camera shows: people-shaped victims, textured terrain, underwater optics, lamps, sensor noise."""
import math

import numpy as np
import pybullet as p
import pytest

from usarsim.config_loading import ConfigError
from usarsim.sim.lighting import OUTDOOR_SKY
from usarsim.sim.sensors.camera import vertical_fov
from usarsim.sim.simulator import Simulator
from usarsim.sim.victims import PARTS, clothes_for
from usarsim.sim.world import build_world, load_world_file

WIDTH, HEIGHT = 160, 120
ROOM = """name: room
description: pictures test
gps_origin: {lat: 1, lon: 2}
start_poses:
  - {tag: Start1, xyz: [0, 0, 0]}
"""


def write(tmp_path, text):
    path = tmp_path / "w.yaml"
    path.write_text(text)
    return str(path)


def view(sim, eye, target, fov_deg=60.0, size=(WIDTH, HEIGHT)):
    """The frame a robot's camera would draw from ``eye`` toward ``target`` (no robot in view)."""
    robot = sim.robots.get("R") or sim.spawn("P2AT", "R", start="Start1")
    camera = next(s for s in robot.sensors if s.spec.type == "Camera")
    eye = np.asarray(eye, dtype=float)
    forward = np.asarray(target, dtype=float) - eye
    forward /= np.linalg.norm(forward)
    up = np.array([0.0, 0.0, 1.0]) if abs(forward[2]) < 0.99 else np.array([1.0, 0.0, 0.0])
    width, height = size
    projection = p.computeProjectionMatrixFOV(math.degrees(vertical_fov(math.radians(fov_deg), width, height)),
                                              width / height, 0.02, 200.0)
    return camera.render_view(eye, forward, up, width, height, projection)[0]


# --- victims ---------------------------------------------------------------------------------
@pytest.mark.parametrize("posture", ["lying", "sitting", "trapped", "standing"])
def test_victims_are_jointed_bodies_resting_on_the_floor(tmp_path, posture):
    spec = load_world_file(write(tmp_path, ROOM + f"victims:\n  - {{id: V, xyz: [2, 0, 0], posture: {posture}}}\n"))
    client = p.connect(p.DIRECT)
    try:
        (victim,) = build_world(client, spec).victims
        names = [name for name, _ in victim.parts()]
        assert len(names) == 15 and set(names) == set(PARTS)
        assert names.count("Arm") == 4 and names.count("Leg") == 4  # upper arm and forearm, thigh and shin
        shapes = {p.getVisualShapeData(b, physicsClientId=client)[0][2] for b in victim.body_ids}
        assert p.GEOM_CAPSULE in shapes and p.GEOM_SPHERE in shapes  # rounded limbs, a round head
        lowest = min(p.getAABB(b, physicsClientId=client)[0][2] for b in victim.body_ids)
        highest = max(p.getAABB(b, physicsClientId=client)[1][2] for b in victim.body_ids)
        assert -0.01 < lowest < 0.05  # lies, sits or stands on the floor, not in it
        assert highest == pytest.approx({"lying": 0.4, "sitting": 0.9, "trapped": 0.3, "standing": 1.70}[posture],
                                        abs=0.12)
    finally:
        p.disconnect(client)


def test_trapped_victims_lie_under_rubble_the_victim_sensor_does_not_report(tmp_path):
    spec = load_world_file(write(tmp_path, ROOM + "victims:\n  - {id: V, xyz: [2, 0, 0], posture: trapped}\n"))
    client = p.connect(p.DIRECT)
    try:
        world = build_world(client, spec)
        (victim,) = world.victims
        assert len(victim.debris_ids) == 2
        legs = [pos for name, pos in victim.parts() if name == "Leg"]
        # straight down onto the shins: the rubble is hit first, and it is no part of the victim
        x, y, _ = legs[-1]
        hit = p.rayTest((x, y, 2.0), (x, y, -0.5), physicsClientId=client)[0]
        assert hit[0] in victim.debris_ids and world.victim_part_at(hit[0], hit[1]) is None
        assert "rubble on victim 'V'" in world.label(hit[0])
    finally:
        p.disconnect(client)


def test_clothes_come_from_the_seed():
    assert clothes_for(3, "V1") == clothes_for(3, "V1")
    dressed = {clothes_for(seed, "V1") for seed in range(12)}
    assert len({c.shirt for c in dressed}) >= 4 and len({c.trousers for c in dressed}) >= 3
    assert clothes_for(3, "V1") != clothes_for(3, "V2") or clothes_for(4, "V1") != clothes_for(4, "V2")


def test_victim_pictures_differ_by_seed_and_repeat_by_seed(tmp_path):
    world = write(tmp_path, ROOM + "victims:\n  - {id: V, xyz: [2, 0, 0], posture: sitting, yaw: 3.14159}\n")

    def picture(seed):
        with Simulator(world, seed=seed) as sim:
            return view(sim, (0.3, 0.0, 0.9), (2.0, 0.0, 0.4))
    assert np.array_equal(picture(1), picture(1))
    assert any(not np.array_equal(picture(1), picture(seed)) for seed in (2, 3, 4))


# --- terrain ---------------------------------------------------------------------------------
def colours(image, step=8):
    """Distinct colours of an image quantised to ``step`` levels per channel."""
    return len(np.unique((image // step).reshape(-1, 3), axis=0))


def test_aerial_view_of_the_hills_shows_grass_dirt_and_more():
    with Simulator("hills", seed=1) as sim:
        image = view(sim, (10.0, 20.0, 60.0), (10.01, 20.0, 0.0), fov_deg=80.0).astype(float)
    r, g, b = image[..., 0], image[..., 1], image[..., 2]
    grass = (g > r + 15) & (g > b + 15)
    dirt = (r > g - 3) & (r > b + 15)
    assert grass.mean() > 0.3 and dirt.mean() > 0.01  # mostly green, with brown patches
    assert colours(image.astype(np.uint8)) > 60  # not one flat green


def test_terrain_texture_follows_the_seed():
    def aerial(seed):
        with Simulator("hills", seed=seed) as sim:
            return view(sim, (-30.0, -30.0, 40.0), (-30.01, -30.0, 0.0), fov_deg=60.0)
    assert np.array_equal(aerial(1), aerial(1))
    assert not np.array_equal(aerial(1), aerial(2))


def test_steep_ground_is_rock_and_gentle_ground_grass(tmp_path):
    # a grid that is flat in the north half and a 45 degree slope in the south half
    grid = np.zeros((41, 41))
    grid[20:, :] = np.arange(21)[:, None] * 0.5  # 0.5 m per 0.5 m sample
    np.savetxt(tmp_path / "g.csv", grid, delimiter=",")
    outdoors = ROOM.replace("gps_origin:", "outdoor: true\ngps_origin:").replace("xyz: [0, 0, 0]", "xyz: [5, 5, 0]")
    world = write(tmp_path, outdoors + "terrain: {heightmap: g.csv, size: [20, 20], center: [0, 0], z: 0}\n")
    with Simulator(world, seed=1) as sim:
        flat = view(sim, (5.0, 0.0, 12.0), (5.01, 0.0, 0.0), fov_deg=30.0).astype(float)  # north: flat
        steep = view(sim, (-5.0, 0.0, 22.0), (-5.01, 0.0, 0.0), fov_deg=30.0).astype(float)  # south: slope

    def greenness(image):
        return float((image[..., 1] - (image[..., 0] + image[..., 2]) / 2).mean())
    assert greenness(flat) > 20 > greenness(steep) + 15  # grass where flat, grey-brown rock where steep


# --- water -----------------------------------------------------------------------------------
def test_under_the_harbour_there_is_no_sky_and_the_water_tints():
    sky = np.round(np.asarray(OUTDOOR_SKY) * 255)
    with Simulator("harbour", seed=1) as sim:
        up = view(sim, (5.0, 0.0, -3.4), (8.0, 0.0, 0.0))  # 3.4 m deep, looking up toward the surface
        ahead = view(sim, (5.0, 0.0, -3.0), (15.0, 0.0, -3.2))
    for image in (up, ahead):
        assert not np.any(np.all(image == sky, axis=-1))  # no sky below the surface
        r, g, b = (image[..., c].astype(float).mean() for c in range(3))
        assert g > r + 20 and b > r + 20  # red is absorbed first: blue-green


def test_the_sea_bed_fades_into_the_water_with_distance():
    with Simulator("harbour", seed=1) as sim:
        veil = np.asarray(sim.world.spec.water[0].color[:3]) * 255
        near = view(sim, (5.0, 0.0, -3.0), (5.01, 0.0, -4.0), fov_deg=20.0).astype(float)  # 1 m above the bed
        far = view(sim, (5.0, 0.0, -0.8), (5.01, 0.0, -4.0), fov_deg=20.0 / 3.2).astype(float)  # 3.2 m, same patch

    def off_veil(image):
        return float(np.abs(image - veil).mean())
    assert off_veil(far) < off_veil(near) - 3  # further through water: closer to the water's own colour


def test_the_basin_seen_from_above_shows_what_lies_under_the_water_tinted():
    with Simulator("harbour", seed=1) as sim:
        car = sim.world.spec.static[[item.name for item in sim.world.spec.static].index("sunken_car")].xyz
        over_car = view(sim, (car[0], car[1], 1.0), (car[0] + 0.01, car[1], car[2]), fov_deg=20.0).astype(float)
        over_bed = view(sim, (car[0] - 6.0, car[1], 1.0), (car[0] - 5.99, car[1], -4.0), fov_deg=20.0).astype(float)
    # not an opaque sheet: the sunken car shows through, unlike the bare bed beside it
    assert np.abs(over_car.mean(axis=(0, 1)) - over_bed.mean(axis=(0, 1))).max() > 8
    for image in (over_car, over_bed):
        r, g, b = (image[..., c].mean() for c in range(3))
        assert g > r and b > r  # under 2.5 to 3.5 m of water: red lost first


# --- lamps -----------------------------------------------------------------------------------
def test_an_indoor_lamp_lights_a_pool_that_fades_with_distance(tmp_path):
    world = ROOM + "static:\n  - {kind: box, name: wall, xyz: [4, 0, 1.5], size: [0.2, 12, 3], texture: none}\n"
    lit = write(tmp_path, world + "lights:\n  - {xyz: [3.0, 3.0, 1.5], intensity: 1.0}\n")
    with Simulator(lit, noise=False) as sim:
        image = view(sim, (0.0, 0.0, 1.5), (4.0, 0.0, 1.5), fov_deg=90.0).astype(float).mean(axis=-1)
    row = image[HEIGHT // 2]
    left, middle, right = row[WIDTH // 8], row[WIDTH // 2], row[-WIDTH // 8]
    # the lamp stands in front of the wall's left (+y) part: brightest there, darker away from it
    assert left > middle + 10 > right + 10


def test_two_lamps_light_two_pools(tmp_path):
    world = ROOM + "static:\n  - {kind: box, name: wall, xyz: [4, 0, 1.5], size: [0.2, 12, 3], texture: none}\n"
    lit = write(tmp_path, world + "lights:\n  - {xyz: [3.0, 3.0, 1.5], intensity: 1.0}\n"
                                  "  - {xyz: [3.0, -3.0, 1.5], intensity: 1.0}\n")
    with Simulator(lit, noise=False) as sim:
        row = view(sim, (0.0, 0.0, 1.5), (4.0, 0.0, 1.5), fov_deg=90.0).astype(float).mean(axis=-1)[HEIGHT // 2]
    left, middle, right = row[WIDTH // 8], row[WIDTH // 2], row[-WIDTH // 8]
    assert left > middle + 10 and right > middle + 10


# --- noise -----------------------------------------------------------------------------------
def noisy_frame(world, seed, read_noise, shot_noise, noise=True):
    with Simulator(world, seed=seed, noise=noise) as sim:
        robot = sim.spawn("P2AT", "R", start="Start1")
        sim.run_for(0.1)
        camera = next(s for s in robot.sensors if s.spec.type == "Camera")
        clean = camera.render_image()
        camera.params.read_noise, camera.params.shot_noise = read_noise, shot_noise
        frame = np.frombuffer(camera.render(), dtype=np.uint8).reshape(clean.shape)
        return clean, frame


def test_camera_noise_is_seeded_and_grows_with_the_signal():
    clean, frame = noisy_frame("yellow", 5, 2.0, 0.05)
    _, again = noisy_frame("yellow", 5, 2.0, 0.05)
    _, other = noisy_frame("yellow", 6, 2.0, 0.05)
    assert np.array_equal(frame, again) and not np.array_equal(frame, other)
    error = frame.astype(float) - clean
    inside = (clean > 20) & (clean < 235)  # away from the clipping ends
    assert abs(error[inside].mean()) < 0.3
    dark, bright = inside & (clean < 60), inside & (clean > 100)
    assert 2.0 < error[dark].std() < error[bright].std() < 4.0  # sqrt(2^2 + 0.05 v)


def test_camera_noise_is_off_by_default_and_with_noise_switched_off():
    clean, frame = noisy_frame("yellow", 5, 0.0, 0.0)
    assert np.array_equal(clean, frame)
    clean, frame = noisy_frame("yellow", 5, 2.0, 0.05, noise=False)
    assert np.array_equal(clean, frame)


def test_bad_attenuation_names_file_and_key(tmp_path):
    with pytest.raises(ConfigError, match=r"w\.yaml.*water.*attenuation must be three finite numbers >= 0"):
        load_world_file(write(tmp_path, ROOM + "water:\n  - {center: [0, 0], size: [2, 2], surface: 0, bottom: -1, "
                                               "attenuation: [0.5, -1, 0.2]}\n"))
