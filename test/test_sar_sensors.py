"""Search-and-rescue sensors: RFID reader and releaser, victim, human motion, sound, 3-D scanner, PTZ.

Most tests place a bare sensor at an exact pose in a small world built in its
own PyBullet client, so expected positions follow from geometry alone.
"""
from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pybullet as p
import pytest

from usarsim import rotations
from usarsim.sim.catalogue import EffecterSpec, Mount, SensorSpec
from usarsim.sim.effecters.rfid_releaser import RfidReleaser
from usarsim.sim.environment import SensorEnvironment
from usarsim.sim.readings import PointCloudReading, RfidReading
from usarsim.sim import raycast
from usarsim.sim.sensors import registry
from usarsim.sim.sensors.human_motion import HumanMotionParams, motion_probability
from usarsim.sim.sensors.rfid import RfidParams, attenuation_range, received_power, split_params
from usarsim.sim.sensors.sound import loudness_at
from usarsim.sim.sensors.ray_grid import grid_directions
from usarsim.sim.sensors.victim import VictimParams
from usarsim.sim.simulator import Simulator
from usarsim.sim.victims import PARTS, SegmentSpec, VictimSpec
from usarsim.sim.world import GpsOrigin, RfidTagSpec, StartPose, WorldSpec, build_world
from usarsim.sim.world_geometry import StaticItem

HEAD_RADIUS = 0.11  # a false-alarm Head is a sphere of this radius resting on the floor


def world_spec(victims=(), tags=(), static=()) -> WorldSpec:
    return WorldSpec(name="test", description="sensor test", gps_origin=GpsOrigin(0.0, 0.0),
                     start_poses=[StartPose("S", (0.0, 0.0, 0.0))], victims=list(victims),
                     rfid_tags=list(tags), static=list(static))


def wall(x: float, surface: str = "default") -> StaticItem:
    """A 0.1 m thick, 4 m wide, 2 m high wall across the +x axis at ``x``."""
    return StaticItem(kind="box", xyz=(x, 0.0, 1.0), size=(0.1, 4.0, 2.0), surface=surface)


def head(x: float, y: float = 0.0, vid: str = "F") -> VictimSpec:
    return VictimSpec(id=vid, xyz=(x, y, 0.0), false_alarm=True, parts=["Head"])


class FakeRobot:
    """Just what a sensor needs of its robot: a name, a message period and a mount pose."""

    def __init__(self, client: int, origin=(0.0, 0.0, HEAD_RADIUS), yaw: float = 0.0) -> None:
        self.name = "T"
        self.client = client
        self.body_id = -1
        self.spec = SimpleNamespace(msg_period=0.2)
        self.origin = np.array(origin, dtype=float)
        self.rot = rotations.rotation_matrix(rotations.quaternion_from_euler((0.0, 0.0, yaw)))

    def mount_pose(self, mount: Mount):
        return self.origin, self.rot


@pytest.fixture
def arena():
    """Factory: build a world in a fresh client; returns (env, world)."""
    clients = []

    def build(**kwargs):
        client = p.connect(p.DIRECT)
        clients.append(client)
        world = build_world(client, world_spec(**kwargs))
        env = SensorEnvironment(client=client, world=world, gravity=-9.81, physics_dt=0.005, seed=0,
                                robot_body_ids=lambda: set(), render_options={})
        return env, world

    yield build
    for client in clients:
        p.disconnect(client)


def make(type_name: str, env, robot=None, seed: int = 0, **params):
    robot = robot or FakeRobot(env.client)
    spec = SensorSpec(type=type_name, name="S", params=params)
    return registry.create(spec, robot, env, np.random.default_rng(seed))


# --- registry ----------------------------------------------------------------------------------

def test_new_families_are_registered_and_validate_params(arena):
    env, _ = arena()
    for name in ("RFID", "VictSensor", "HumanMotion", "Sound", "RangeScanner3D", "RangeImager"):
        assert name in registry.known_types()
    with pytest.raises(ValueError, match="unknown parameter"):
        registry.params_for(SensorSpec(type="RFID", name="R", params={"range": 3}))
    with pytest.raises(ValueError, match="sensing_mode"):
        make("RFID", env, sensing_mode="Telepathy")
    with pytest.raises(ValueError, match="p_detect"):
        make("VictSensor", env, p_detect=1.5)


# --- victim sensor -----------------------------------------------------------------------------

def test_victim_grid_is_11_by_11_from_bottom_right():
    dirs, rows, columns = grid_directions(VictimParams())  # the documented 40 deg fields, 4 deg steps
    assert (rows, columns) == (11, 11) and len(dirs) == 121
    assert dirs[0][1] < 0 and dirs[0][2] < 0  # first ray: right (-y) and down (-z)
    assert dirs[60] == pytest.approx([1.0, 0.0, 0.0], abs=1e-6)


def test_victim_sensor_reports_the_hit_point_of_a_false_alarm_part(arena):
    env, _ = arena(victims=[head(4.0)])
    reading = make("VictSensor", env, sigma=0.0).read(1.0)
    assert reading.parts and all(s.part == "Head" and s.victim_id == "F" for s in reading.parts)
    centre = min(reading.parts, key=lambda s: abs(s.position[1]) + abs(s.position[2]))
    # the centre ray meets the sphere's near surface straight ahead
    assert centre.position == pytest.approx((4.0 - HEAD_RADIUS, 0.0, 0.0), abs=1e-3)
    for seen in reading.parts:
        offset = np.array(seen.position) - np.array([4.0, 0.0, 0.0])
        assert np.linalg.norm(offset) == pytest.approx(HEAD_RADIUS, abs=1e-3)


def test_victim_sensor_position_is_in_the_sensor_frame(arena):
    env, _ = arena(victims=[head(0.0, 4.0)])
    robot = FakeRobot(env.client, yaw=math.pi / 2)  # looking along world +y
    reading = make("VictSensor", env, robot=robot, sigma=0.0).read(1.0)
    centre = min(reading.parts, key=lambda s: abs(s.position[1]) + abs(s.position[2]))
    assert centre.position == pytest.approx((4.0 - HEAD_RADIUS, 0.0, 0.0), abs=1e-3)


@pytest.mark.parametrize("case", ["out_of_range", "behind_wall", "outside_fov"])
def test_victim_sensor_misses(arena, case):
    static = [wall(2.0)] if case == "behind_wall" else []
    env, _ = arena(victims=[head(4.0)], static=static)
    robot = FakeRobot(env.client, yaw=math.pi / 2 if case == "outside_fov" else 0.0)
    params = {"distance": 3.5} if case == "out_of_range" else {}
    assert make("VictSensor", env, robot=robot, **params).read(1.0).parts == ()


def test_victim_sensor_sees_through_glass(arena):
    env, _ = arena(victims=[head(4.0)], static=[wall(2.0, surface="transparent")])
    parts = make("VictSensor", env, sigma=0.0).read(1.0).parts
    assert parts and min(s.position[0] for s in parts) == pytest.approx(4.0 - HEAD_RADIUS, abs=1e-3)


def test_victim_sensor_humanoid_parts_dedupe_and_seed(arena):
    env, _ = arena(victims=[VictimSpec(id="V1", xyz=(3.0, 0.0, 0.0), yaw=math.pi, posture="sitting")])
    robot = FakeRobot(env.client, origin=(0.0, 0.0, 0.5))
    every = make("VictSensor", env, robot=robot).read(1.0).parts
    unique = make("VictSensor", env, robot=robot, dedupe=True).read(1.0).parts
    assert {s.part for s in every} <= set(PARTS) and {"Chest", "Head"} <= {s.part for s in every}
    assert len(unique) == len({(s.victim_id, s.part) for s in unique}) < len(every)
    again = make("VictSensor", env, robot=robot).read(1.0).parts
    other = make("VictSensor", env, robot=robot, seed=1).read(1.0).parts
    assert again == every and other != every
    exact = make("VictSensor", env, robot=robot, sigma=0.0).read(1.0).parts
    errors = np.array([a.position for a in every]) - np.array([b.position for b in exact])
    assert 0.003 < errors.std() < 0.02  # Sigma 0.01 m per coordinate


# --- RFID --------------------------------------------------------------------------------------

def test_rfid_attenuation_model_matches_the_reconstruction():
    prm = RfidParams()
    assert float(received_power(1.0, False, prm)) == pytest.approx(-44.0)
    assert attenuation_range(prm) == pytest.approx(6.9, abs=0.05)
    assert attenuation_range(prm, obstructed=True) == pytest.approx(5.9, abs=0.05)


def test_split_params_accepts_the_usual_shapes():
    assert split_params((7,)) == ("7", "")
    assert split_params((7.0,)) == ("7", "")
    assert split_params(("7,hello",)) == ("7", "hello")
    assert split_params(("7", "hello")) == ("7", "hello")
    assert split_params(((7, "a,b"),)) == ("7", "a,b")


def test_rfid_attenuation_range_and_obstacle(arena):
    tags = [RfidTagSpec((2.0, 0.0, 0.02), 1001), RfidTagSpec((6.5, 0.0, 0.02), 1002),
            RfidTagSpec((8.0, 0.0, 0.02), 1003)]
    env, _ = arena(tags=tags)
    reading = make("RFID", env, robot=FakeRobot(env.client, origin=(0.0, 0.0, 0.3))).read(1.0)
    assert [t.tag_id for t in reading.tags] == [1001, 1002]
    assert reading.tags[0].position == pytest.approx((2.0, 0.0, -0.28), abs=1e-9)
    assert reading.tags[0].signal_dbm > reading.tags[1].signal_dbm > -88.0
    # the same tags behind a wall: 6.5 m is now beyond the obstructed range (5.9 m)
    env, _ = arena(tags=tags + [RfidTagSpec((5.5, 0.0, 0.02), 1004)], static=[wall(1.0)])
    seen = make("RFID", env, robot=FakeRobot(env.client, origin=(0.0, 0.0, 0.3))).read(1.0).tags
    assert [t.tag_id for t in seen] == [1001, 1004]


def test_rfid_position_is_in_the_reader_frame(arena):
    env, _ = arena(tags=[RfidTagSpec((2.0, 0.0, 0.02), 1001)])
    robot = FakeRobot(env.client, origin=(0.0, 0.0, 0.3), yaw=math.pi / 2)
    (tag,) = make("RFID", env, robot=robot).read(1.0).tags
    assert tag.position == pytest.approx((0.0, -2.0, -0.28), abs=1e-9)  # to the reader's right


def test_rfid_radius_and_obstacle_modes(arena):
    tags = [RfidTagSpec((2.0, 0.0, 0.02), 1001), RfidTagSpec((5.0, 0.5, 0.02), 1002),
            RfidTagSpec((5.0, -0.5, 0.02), 1003, single_shot=True), RfidTagSpec((7.0, 0.0, 0.02), 1004, single_shot=True)]
    env, _ = arena(tags=tags, static=[wall(1.0)])
    robot = FakeRobot(env.client, origin=(0.0, 0.0, 0.3))
    radius = make("RFID", env, robot=robot, sensing_mode="Radius").read(1.0).tags
    assert [t.tag_id for t in radius] == [1001, 1003]  # single-shot tags reach 6 m, others 3 m
    assert radius[1].single_shot
    assert make("RFID", env, robot=robot, sensing_mode="obstacle").read(1.0).tags == ()


def test_rfid_read_write_erase(arena):
    env, world = arena(tags=[RfidTagSpec((2.0, 0.0, 0.02), 1001), RfidTagSpec((9.0, 0.0, 0.02), 1002, memory="far")])
    reader = make("RFID", env, robot=FakeRobot(env.client, origin=(0.0, 0.0, 0.3)))
    assert reader.command("Read", (1001,)).fields == (("ID", 1001), ("Mem", "0"))
    assert reader.command("Write", ("1001,victim_3_here",)).ok
    assert world.rfid_tags[1001].memory == "victim_3_here"
    assert reader.command("READ", ("1001",)).fields == (("ID", 1001), ("Mem", "victim_3_here"))
    assert reader.command("Write", (1001,)).ok and world.rfid_tags[1001].memory == "0"
    reader.command("Write", ("1001", "x"))
    assert reader.command("Erase", (1001,)).ok and world.rfid_tags[1001].memory == "0"
    far = reader.command("Read", (1002,))
    assert not far.ok and "range" in far.message
    assert not reader.command("Write", ("1002,hack",)).ok and world.rfid_tags[1002].memory == "far"
    assert not reader.command("Read", ("seven",)).ok
    assert not reader.command("Read", ()).ok
    assert not reader.command("Write", ("1001,two words",)).ok
    assert not reader.command("Write", ("1001,{x}",)).ok
    assert not reader.command("Launch", ()).ok
    plain = reader.read(1.0)
    always = make("RFID", env, robot=reader.robot, always_read_memory=True).read(1.0)
    assert isinstance(plain, RfidReading) and not plain.memory_read and always.memory_read


def test_rfid_shadowing_is_seeded(arena):
    tags = [RfidTagSpec((x, 0.0, 0.02), 1001 + i) for i, x in enumerate(np.linspace(5.5, 8.0, 12))]
    env, _ = arena(tags=tags)
    robot = FakeRobot(env.client, origin=(0.0, 0.0, 0.3))
    a = [make("RFID", env, robot=robot, sigma=3.0, seed=4).read(1.0) for _ in range(2)]
    assert a[0] == a[1]
    runs = make("RFID", env, robot=robot, sigma=3.0, seed=4)
    counts = {len(runs.read(1.0).tags) for _ in range(20)}
    assert len(counts) > 1  # tags near the edge of range come and go


# --- human motion ------------------------------------------------------------------------------

WAVING = VictimSpec(id="V1", xyz=(3.0, 0.0, 0.0), yaw=math.pi, posture="sitting",
                    segments=[SegmentSpec("shoulder_left", 0.0, 1.2, 0.8)])
PEAK_SPEED_TIME = 0.75  # omega = pi * 0.8 / 1.2; sin(omega * t) = 1 here


def test_motion_probability_formula():
    assert motion_probability(5.0, 0.5, 0.2, 10.0, 0.5, 0.2) == pytest.approx(0.5)
    assert motion_probability(5.0, 0.25, 0.4, 10.0, 0.5, 0.2) == pytest.approx(0.25)
    assert motion_probability(11.0, 1.0, 1.0, 10.0, 0.5, 0.2) == 0.0
    assert motion_probability(1.0, 0.0, 1.0, 10.0, 0.5, 0.2) == 0.0


def test_human_motion_sees_the_closest_moving_victim(arena):
    env, world = arena(victims=[WAVING])
    world.update(PEAK_SPEED_TIME)
    sensor = make("HumanMotion", env, robot=FakeRobot(env.client, origin=(0.0, 0.0, 0.5)), noise=0.0)
    victim, distance = sensor.closest_moving()
    assert victim.id == "V1" and 1.8 < distance < 3.2  # its feet point at the sensor
    speed, amplitude = victim.motion()
    expected = motion_probability(distance, speed, amplitude, HumanMotionParams().max_range, 0.5, 0.2)
    assert sensor.read(1.0).probability == pytest.approx(expected) and expected > 0.3


@pytest.mark.parametrize("case", ["still", "false_alarm", "behind_wall", "outside_fov", "out_of_range"])
def test_human_motion_reports_zero(arena, case):
    victims = {"still": [VictimSpec(id="V2", xyz=(3.0, 0.0, 0.0), posture="sitting")],
               "false_alarm": [head(3.0)]}.get(case, [WAVING])
    env, world = arena(victims=victims, static=[wall(1.5)] if case == "behind_wall" else [])
    world.update(PEAK_SPEED_TIME)
    robot = FakeRobot(env.client, origin=(0.0, 0.0, 0.5), yaw=math.pi / 2 if case == "outside_fov" else 0.0)
    params = {"max_range": 2.0} if case == "out_of_range" else {}
    assert make("HumanMotion", env, robot=robot, **params).read(1.0).probability == 0.0


# --- sound -------------------------------------------------------------------------------------

def test_sound_follows_the_inverse_square_law(arena):
    assert loudness_at(60.0, 2.0) == pytest.approx(60.0 - 6.0206, abs=1e-3)
    loud = VictimSpec(id="A", xyz=(4.0, 0.0, 0.0), sound_db=60.0)
    env, world = arena(victims=[loud])
    robot = FakeRobot(env.client, origin=tuple(np.array(world.victims[0].position) - [4.0, 0.0, 0.0]))
    sensor = make("Sound", env, robot=robot, noise=0.0)
    first = sensor.read(1.0)
    assert first.loudness == pytest.approx(60.0 - 20.0 * math.log10(4.0)) and first.duration == 0.0
    assert sensor.read(2.5).duration == pytest.approx(1.5)


def test_sound_reports_the_loudest_and_silence(arena):
    near = VictimSpec(id="near", xyz=(1.0, 0.0, 0.0), sound_db=50.0)
    far = VictimSpec(id="far", xyz=(10.0, 0.0, 0.0), sound_db=60.0)
    env, _ = arena(victims=[near, far, VictimSpec(id="mute", xyz=(0.5, 2.0, 0.0))])
    sensor = make("Sound", env, robot=FakeRobot(env.client, origin=(0.0, 0.0, 0.12)), noise=0.0)
    assert sensor.loudest()[0] == "near"
    env, _ = arena(victims=[VictimSpec(id="mute", xyz=(1.0, 0.0, 0.0))])
    silent = make("Sound", env).read(1.0)
    assert silent.loudness == 0.0 and silent.duration == 0.0


# --- 3-D scanner -------------------------------------------------------------------------------

def test_range_scanner_3d_one_batch_grid_and_geometry(arena, monkeypatch):
    env, _ = arena(static=[wall(3.0)])
    sensor = make("RangeImager", env, robot=FakeRobot(env.client, origin=(0.0, 0.0, 1.0)),
                  horizontal_fov=math.pi, horizontal_step=math.pi / 18, vertical_fov=0.4, vertical_step=0.1)
    calls = []
    original = raycast.p.rayTestBatch
    monkeypatch.setattr(raycast.p, "rayTestBatch", lambda *a, **k: calls.append(1) or original(*a, **k))
    cloud = sensor.read(1.0)
    assert isinstance(cloud, PointCloudReading) and len(calls) == 1
    assert (cloud.rows, cloud.columns) == (5, 19) and len(cloud.points) == len(cloud.ranges) == 95
    centre = 2 * 19 + 9  # middle row, middle column: straight ahead
    assert cloud.ranges[centre] == pytest.approx(2.95, abs=1e-3)
    assert cloud.points[centre] == pytest.approx((2.95, 0.0, 0.0), abs=1e-3)
    assert cloud.ranges[2 * 19] == 20.0  # rightmost beam (-90 deg) misses the 4 m wide wall
    assert cloud.points[2 * 19] == pytest.approx((0.0, -20.0, 0.0), abs=1e-6)
    # the level row: every hit lies on the wall plane x = 2.95, within its 4 m width
    row = list(zip(cloud.points, cloud.ranges))[2 * 19:3 * 19]
    on_wall = [pt for pt, r in row if r < 20.0]
    assert len(on_wall) == 7 and all(pt[0] == pytest.approx(2.95, abs=1e-3) and abs(pt[1]) < 2.0 for pt in on_wall)
    # lower rows reach the floor 1 m below the sensor
    assert min(pt[2] for pt in cloud.points) == pytest.approx(-1.0, abs=1e-3)


# --- on a real robot: releaser, reader, PTZ -------------------------------------------------------

@pytest.fixture(scope="module")
def sim():
    with Simulator(world_spec(), seed=2) as simulator:
        simulator.spawn("P2AT", "R1")
        simulator.run_for(0.5)
        yield simulator


def test_releaser_drops_tags_the_reader_then_sees(sim):
    robot = sim.robot("R1")
    releaser = RfidReleaser(EffecterSpec(type="RFIDReleaser", name="Dropper", params={"num_tags": 2}), robot)
    first, second, third = (releaser.command("Release", ()) for _ in range(3))
    assert first.ok and second.ok and not third.ok
    assert (first.fields, second.fields) == ((("ID", 0),), (("ID", 1),))
    assert releaser.command("TagsRemaining", ()).fields == (("TagsRemaining", 0),)
    base = robot.base.position
    tag = sim.world.rfid_tags[0]
    assert tag.position[:2] == pytest.approx(tuple(base[:2]), abs=1e-6) and tag.position[2] == pytest.approx(0.02, abs=0.01)
    spec = SensorSpec(type="RFID", name="Reader", mount=Mount("base_link", (0.0, 0.0, 0.15)))
    reader = registry.create(spec, robot, sim.env, np.random.default_rng(0))
    assert [t.tag_id for t in reader.read(sim.time).tags] == [0, 1]
    with pytest.raises(ValueError, match="unknown parameter"):
        RfidReleaser(EffecterSpec(type="RFIDReleaser", name="D", params={"tags": 3}), robot)


def test_camera_pan_tilt_moves_the_mount(sim):
    camera = sim.robot("R1").sensor("Camera")
    result = camera.command("PanTilt", (0.5, 1.0))
    assert result.ok and dict(result.fields) == pytest.approx({"Pan": 0.5, "Tilt": 0.4})  # tilt limit 0.4
    sim.run_for(4.0)
    _, rot = sim.robot("R1").mount_pose(camera.spec.mount)
    axis = rot[:, 0]
    assert math.atan2(axis[1], axis[0]) == pytest.approx(0.5, abs=0.02)  # panned left
    assert math.asin(-axis[2]) == pytest.approx(0.4, abs=0.02)  # tilted down
    assert not camera.command("PanTilt", ("left",)).ok
    assert camera.command("FOV", (1.0,)).fields == (("FOV", 1.0),)
    camera.command("PanTilt", (0.0, 0.0))


# --- through the simulator's own sampling, in a shipped arena --------------------------------------

SAR_SUITE = [
    SensorSpec(type="RFID", name="RFID", mount=Mount("base_link", (0.0, 0.0, 0.15))),
    SensorSpec(type="VictSensor", name="VictSensor", mount=Mount("camera_tilt", (0.03, 0.0, 0.0))),
    SensorSpec(type="HumanMotion", name="Motion", mount=Mount("base_link", (0.25, 0.0, 0.1))),
    SensorSpec(type="Sound", name="Sound", mount=Mount("base_link", (0.0, 0.0, 0.15))),
    SensorSpec(type="RangeScanner3D", name="Scanner3D", mount=Mount("base_link", (0.2, 0.0, 0.2)),
               params={"horizontal_step": 0.05, "vertical_step": 0.05}),
]


def yellow_sar_run(seed: int) -> tuple[list, object]:
    with Simulator("yellow", seed=seed) as simulator:
        robot = simulator.spawn("P2AT", "R1", start="Start1")
        for spec in SAR_SUITE:
            sensor = registry.create(spec, robot, simulator.env, registry_rng(seed, spec.name))
            sensor.on_spawned(simulator.time)
            robot.sensors.append(sensor)
        readings = [r for r in simulator.run_for(1.2) if r.sensor in {s.name for s in SAR_SUITE}]
        tags = {t.id: t.position for t in simulator.world.rfid_tags.values()}
        return readings, (tags, robot.mount_pose(SAR_SUITE[0].mount))


def registry_rng(seed: int, name: str) -> np.random.Generator:
    from usarsim.sim.noise import sensor_rng

    return sensor_rng(seed, "R1", name)


def test_sar_sensors_in_yellow_are_sampled_consistent_and_seeded():
    readings, (tags, (origin, rot)) = yellow_sar_run(seed=5)
    kinds = {r.kind for r in readings}
    assert {"RFID", "VictSensor", "HumanMotion", "Sound", "RangeScanner3D"} <= kinds
    rfid = [r for r in readings if r.kind == "RFID"][-1]
    assert rfid.tags, "a tag of yellow lies within reach of Start1"
    for seen in rfid.tags:  # reported positions are the world's tags seen from the reader
        expected = rot.T @ (np.array(tags[seen.tag_id]) - origin)
        assert seen.position == pytest.approx(tuple(expected), abs=0.02)
    clouds = [r for r in readings if r.kind == "RangeScanner3D"]
    assert len(clouds) == 2 and clouds[0].time == pytest.approx(0.0, abs=0.01)  # 1 s interval
    again, _ = yellow_sar_run(seed=5)
    assert again == readings
