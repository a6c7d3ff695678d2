"""The robot catalogue against the spec: numbers, generated URDFs, and the legged ERS under joint commands."""
import math

import pytest

from usarsim import rotations
from usarsim.sim.urdf import generate_urdf
from usarsim.sim.catalogue import available_robots, load_robot
from usarsim.sim.commands import JointTargets
from usarsim.sim.drives import known_types
from usarsim.sim.readings import RangeReading, TouchReading
from usarsim.sim.simulator import Simulator

# (class, L x W x H m, mass kg, wheel radius m, max wheel spin rad/s) as worlds-and-robots.md a.1-a.5 give them;
# None where the spec has no number.
SPEC_NUMBERS = [
    ("P2DX", (0.44, 0.38, 0.22), 9.0, 0.0825, 1.8 / 0.0825),
    ("ATRVJr", (0.775, 0.622, 0.55), 50.0, 0.1922, 2.0943),
    ("Zerg", (0.3112, 0.4154, 0.1211), None, 0.0606, 6.2832),
    ("Kurt2D", (0.45, 0.29, 0.35), 35.0, None, 4.0 / 0.075),
    ("Hummer", (3.686, 1.799, 2.059), None, 0.3727, 100.0),
    ("Sedan", (4.2779, 1.7883, 1.3238), None, 0.282, 100.0),
    ("SnowStorm", (4.239, 1.72, 1.621), None, None, None),
    ("AirRobot", (0.999, 0.999, 0.194), 1.0, None, None),
    ("ERS", (0.319, 0.18, 0.278), 1.6, None, None),
]


@pytest.mark.parametrize("cls, dims, mass, radius, spin", SPEC_NUMBERS)
def test_catalogue_numbers_match_the_spec(cls, dims, mass, radius, spin):
    spec = load_robot(cls)
    assert spec.dimensions == pytest.approx(dims, abs=1e-4)
    if mass is not None:
        assert spec.mass == pytest.approx(mass)
    if radius is not None:
        assert spec.drive.wheel_radius == pytest.approx(radius)
        assert all(w.radius == pytest.approx(radius) for w in spec.body.wheels)
    if spin is not None:
        assert spec.drive.max_wheel_speed == pytest.approx(spin, rel=0.01)
    # the body fits the catalogue's overall size (sensors and masts may stick out a little)
    assert spec.body.chassis_size[0] <= dims[0] + 1e-6 and spec.body.chassis_size[1] <= dims[1] + 1e-6


def test_simulated_body_mass_is_the_catalogue_mass():
    for cls, *_ in SPEC_NUMBERS:
        spec = load_robot(cls)
        body = spec.body
        total = body.chassis_mass + sum(w.mass for w in body.wheels) + sum(link.mass for link in body.links)
        assert total == pytest.approx(spec.mass, rel=0.06), cls


@pytest.mark.parametrize("cls", [c for c, *_ in SPEC_NUMBERS] + ["StereoP2AT", "Kurt3D"])
def test_shipped_urdf_is_generated_from_the_catalogue(cls):
    """``usarsim urdf`` output and urdf/<Class>.urdf agree (robot_state_publisher sees PyBullet's model)."""
    spec = load_robot(cls)
    assert spec.urdf_path.read_text(encoding="utf-8") == generate_urdf(spec), f"run `usarsim urdf {cls}`"


def test_every_robot_has_a_known_drive_and_lists_its_sensors():
    for cls in available_robots():
        spec = load_robot(cls)
        assert spec.drive.type in known_types()
        assert spec.ground_truth and any(s.type == "GroundTruth" for s in spec.sensors)
        if spec.drive.type in ("ackermann", "serpentine"):
            assert spec.drive.front_steer_joints and spec.drive.max_front_steer > 0
        if spec.drive.type == "aerial":
            assert spec.vehicle_type == "AerialVehicle"


@pytest.fixture(scope="module")
def ers():
    with Simulator("empty", seed=6) as sim:
        robot = sim.spawn("ERS", "dog")
        settle = sim.run_for(0.5)
        standing = sim.ground_truth("dog")
        # spread all four legs sideways (abduction J2, positive = outward on both sides)
        sim.submit(JointTargets("dog", {f"{leg}_J2": 0.5 for leg in ("LF", "RF", "LH", "RH")}))
        crouched_readings = sim.run_for(1.0)
        crouched = sim.ground_truth("dog")
        sim.submit(JointTargets("dog", {"HeadPan": 0.8, "HeadTilt": -5.0}))
        sim.run_for(1.0)
        head = robot.joint_groups["Head"].state()[0]
        legs = robot.joint_groups["Legs"].state()[0]
        yield {"robot": robot, "settle": settle, "standing": standing, "crouched": crouched,
               "crouched_readings": crouched_readings, "head": head, "legs": legs}


def test_ers_stands_on_four_paws(ers):
    touches = {r.sensor: r.touched for r in ers["settle"] if isinstance(r, TouchReading)}
    assert touches == {"PawLF": True, "PawRF": True, "PawLH": True, "PawRH": True}
    assert ers["standing"].position[2] == pytest.approx(-ers["robot"].spec.body.lowest_point(), abs=0.01)


def test_ers_legs_follow_joint_commands(ers):
    # legs of 0.145 m (thigh + shin) spread by 0.5 rad: the torso sinks by ~1.8 cm, level, on all paws
    drop = ers["standing"].position[2] - ers["crouched"].position[2]
    assert drop == pytest.approx(0.145 * (1 - math.cos(0.5)), abs=0.005)
    roll, pitch, _ = rotations.euler_from_quaternion(ers["crouched"].orientation)
    assert abs(roll) < 0.05 and abs(pitch) < 0.05
    assert all(r.touched for r in ers["crouched_readings"][-20:] if isinstance(r, TouchReading))
    assert ers["legs"][1::3] == pytest.approx([0.5] * 4, abs=0.03)


def test_ers_head_moves_within_its_limits(ers):
    tilt, pan, _ = ers["head"]
    assert pan == pytest.approx(0.8, abs=0.03)
    assert tilt == pytest.approx(-1.3, abs=0.05)  # -5 clamped to the joint range


def test_ers_ir_sensors_report_within_their_ranges(ers):
    readings = [r for r in ers["crouched_readings"] if isinstance(r, RangeReading)]
    near = [r.range for r in readings if r.sensor == "IRNear"]
    far = [r.range for r in readings if r.sensor == "IRFar"]
    assert near and far
    assert all(0.0 <= v <= 0.5 + 1e-9 for v in near) and all(0.0 <= v <= 1.5 + 1e-9 for v in far)


def test_sensor_parameters_are_checked_when_the_catalogue_loads(tmp_path):
    # A camera with width 0 is refused at load, with the file and the sensor entry's line.
    import re as _re

    from usarsim.config_loading import ConfigError
    from usarsim.sim.catalogue import load_robot_file, robots_dir

    text = (robots_dir() / "P2AT.yaml").read_text()
    bad, count = _re.subn(r"(\{type: Camera, name: Camera,)", r"\1 params: {width: 0},", text, count=1)
    assert count == 1
    path = tmp_path / "P2AT.yaml"
    path.write_text(bad)
    line = next(i for i, row in enumerate(bad.splitlines(), 1) if "type: Camera" in row)
    with pytest.raises(ConfigError, match=rf"P2AT.yaml:{line}: .*\(Camera\): width and height must be positive"):
        load_robot_file(path)
