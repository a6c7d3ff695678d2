"""Skid-steer and differential robots besides the P2AT: P2DX, ATRVJr, Zerg, Kurt2D/3D (lockstep, flat world)."""
import math

import pytest

from usarsim.sim.catalogue import load_robot
from usarsim.sim.commands import CommandError, JointTargets, WheelDrive
from usarsim.sim.drives import twist_to_wheel_speeds, wheel_speeds_to_twist
from usarsim.sim.readings import EncoderReading, OdometryReading
from usarsim.sim.simulator import Simulator
from usarsim import rotations

WHEELED = ["P2DX", "ATRVJr", "Zerg", "Kurt2D"]


def yaw_of(truth) -> float:
    return rotations.euler_from_quaternion(truth.orientation)[2]


def drive(sim: Simulator, name: str, left: float, right: float, seconds: float, normalized: bool = False):
    sim.submit(WheelDrive(name, left, right, normalized=normalized))
    return sim.run_for(seconds)


@pytest.fixture(scope="module")
def sim():
    with Simulator("empty", seed=5) as s:
        yield s


@pytest.mark.parametrize("cls", WHEELED)
def test_forward_and_turn_left(sim, cls):
    """Equal wheel speeds drive along +x at about r*omega; Left < Right turns left (positive yaw)."""
    spec = load_robot(cls)
    name = f"{cls}_fwd"
    sim.spawn(cls, name, position=(0.0, 20.0 * WHEELED.index(cls) - 40.0, 0.0))
    sim.run_for(0.3)
    start = sim.ground_truth(name)
    omega = min(spec.drive.max_wheel_speed, 0.5 / spec.drive.wheel_radius)  # ~0.5 m/s
    drive(sim, name, omega, omega, 2.0)
    end = sim.ground_truth(name)
    dx, dy = end.position[0] - start.position[0], end.position[1] - start.position[1]
    ideal = omega * spec.drive.wheel_radius * 2.0
    assert 0.75 * ideal < dx < 1.05 * ideal, (cls, dx, ideal)
    assert abs(dy) < 0.05 * ideal
    assert abs(yaw_of(end)) < 0.05
    drive(sim, name, 0.0, 0.0, 0.5)
    before = yaw_of(sim.ground_truth(name))
    drive(sim, name, -omega / 2, omega / 2, 1.5)
    turned = math.remainder(yaw_of(sim.ground_truth(name)) - before, 2 * math.pi)
    ideal_yaw = 1.5 * omega * spec.drive.wheel_radius / spec.drive.wheel_separation
    # skid steering loses much of the ideal rate to tyre scrub (long-wheelbase 6-wheelers most)
    assert 0.1 < turned < 1.05 * ideal_yaw, cls
    drive(sim, name, 0.0, 0.0, 0.5)
    sim.remove(name)


@pytest.mark.parametrize("cls", ["P2DX", "Zerg"])
def test_speed_limit_and_normalized(sim, cls):
    """Commands beyond MaxSpeed are clamped; Normalized 100 is MaxSpeed."""
    spec = load_robot(cls)
    name = f"{cls}_lim"
    robot = sim.spawn(cls, name, position=(30.0, 0.0, 0.0))
    sim.run_for(0.2)
    drive(sim, name, 10 * spec.drive.max_wheel_speed, 10 * spec.drive.max_wheel_speed, 1.0)
    wheel = robot.joint_index(spec.drive.left_wheels[0])
    spin = robot.drive.command[0]
    assert spin == pytest.approx(spec.drive.max_wheel_speed)
    import pybullet as p
    actual = p.getJointState(robot.body_id, wheel, physicsClientId=sim.client)[1]
    assert actual <= spec.drive.max_wheel_speed * 1.02
    drive(sim, name, 100.0, -50.0, 0.1, normalized=True)
    assert robot.drive.command == pytest.approx((spec.drive.max_wheel_speed, -spec.drive.max_wheel_speed / 2))
    sim.remove(name)


def test_p2dx_caster_follows_and_encoders_count(sim):
    """The passive caster swivels freely: the P2DX spins in place about its axle without drifting."""
    robot = sim.spawn("P2DX", "dx", position=(-30.0, 0.0, 0.0))
    sim.run_for(0.3)
    start = sim.ground_truth("dx")
    readings = drive(sim, "dx", -4.0, 4.0, 2.0)
    end = sim.ground_truth("dx")
    # ideal yaw rate r*(wr-wl)/b = 0.0825*8/0.33 = 2 rad/s; the caster drags a little
    rate = robot.spec.drive.wheel_radius * 8.0 / robot.spec.drive.wheel_separation
    turned = rate * 2.0
    assert math.dist(start.position[:2], end.position[:2]) < 0.12
    left = [r for r in readings if isinstance(r, EncoderReading) and r.sensor == "EncoderLeft"]
    right = [r for r in readings if isinstance(r, EncoderReading) and r.sensor == "EncoderRight"]
    assert left[-1].ticks < 0 < right[-1].ticks
    # 4 rad/s for 2 s at 1 degree per tick: ~458 ticks each way
    assert abs(right[-1].ticks - left[0].ticks) > 300
    spun = abs(math.remainder(yaw_of(end) - yaw_of(start), 2 * math.pi))
    assert spun > 0.3 or turned > 2 * math.pi  # it turned (modulo full turns)
    odo = [r for r in readings if isinstance(r, OdometryReading)]
    assert odo, "P2DX publishes odometry"
    sim.remove("dx")


def test_kurt3d_scanner_sides_tilts_the_laser(sim):
    robot = sim.spawn("Kurt3D", "k3", position=(0.0, 40.0, 0.0))
    sim.submit(JointTargets("k3", {"ScannerSides": 0.5}))
    sim.run_for(1.0)
    assert robot.joint_groups["ScannerSides"].state()[0][0] == pytest.approx(0.5, abs=0.02)
    _, rot = robot.mount_pose(next(s for s in robot.spec.sensors if s.name == "Scanner").mount)
    assert rot[2, 0] == pytest.approx(-math.sin(0.5), abs=0.03)  # the beam plane points down
    sim.submit(JointTargets("k3", {"ScannerSides": 3.0}))
    sim.run_for(2.5)
    assert robot.joint_groups["ScannerSides"].state()[0][0] <= 0.7854 + 0.02  # limit
    sim.remove("k3")


def test_ackermann_commands_are_refused_by_skid_robots(sim):
    from usarsim.sim.commands import AckermannDrive

    sim.spawn("Zerg", "z", position=(0.0, -40.0, 0.0))
    future = sim.submit(AckermannDrive("z", 1.0, 0.2))
    sim.step()
    with pytest.raises(CommandError):
        future.result(timeout=0)
    sim.remove("z")


def test_twist_round_trip_with_catalogue_geometry():
    spec = load_robot("ATRVJr").drive
    left, right = twist_to_wheel_speeds(0.2, 0.3, spec)
    assert wheel_speeds_to_twist(left, right, spec) == pytest.approx((0.2, 0.3))
    left, right = twist_to_wheel_speeds(5.0, 0.0, spec)  # beyond MaxSpeed: scaled, ratio kept
    assert max(abs(left), abs(right)) == pytest.approx(spec.max_wheel_speed)
