"""The AirRobot: velocity-controlled rotorcraft hovering against gravity (DRIVE Altitude/Linear/Lateral/Rotational)."""
import math

import pytest

from usarsim import rotations
from usarsim.sim.catalogue import load_robot
from usarsim.sim.commands import AerialDrive, CommandError, JointTargets, WheelDrive
from usarsim.sim.readings import GpsReading, InsReading, RobotState
from usarsim.sim.simulator import Simulator


def rpy(truth):
    return rotations.euler_from_quaternion(truth.orientation)


@pytest.fixture(scope="module")
def flight():
    """One flight: climb, hover, turn, fly forward and sideways in the turned frame; snapshots kept."""
    out = {}
    with Simulator("empty", seed=8) as sim:
        robot = sim.spawn("AirRobot", "A")
        out["spec"] = robot.spec
        sim.run_for(0.3)
        out["ground"] = sim.ground_truth("A")
        sim.submit(AerialDrive("A", altitude=1.0))
        out["climb_readings"] = sim.run_for(2.0)
        out["climbed"] = sim.ground_truth("A")
        sim.submit(AerialDrive("A"))
        sim.run_for(1.5)
        out["hover_a"] = sim.ground_truth("A")
        sim.run_for(2.0)
        out["hover_b"] = sim.ground_truth("A")
        sim.submit(AerialDrive("A", yaw_rate=0.5))
        sim.run_for(math.pi / 2 / 0.5 + 0.3)  # about a quarter turn, lag included
        sim.submit(AerialDrive("A"))
        sim.run_for(1.0)
        out["turned"] = sim.ground_truth("A")
        sim.submit(AerialDrive("A", linear=2.0))
        sim.run_for(2.0)
        out["forward"] = sim.ground_truth("A")
        sim.submit(AerialDrive("A", lateral=-2.0))  # negative lateral: to the right
        sim.run_for(2.0)
        out["lateral"] = sim.ground_truth("A")
        sim.submit(AerialDrive("A", linear=50.0, lateral=0.0, altitude=-50.0, yaw_rate=9.0))
        sim.step()
        out["clamped"] = robot.drive.command.copy()
        sim.submit(AerialDrive("A", linear=100.0, lateral=-100.0, altitude=50.0, yaw_rate=-100.0, normalized=True))
        sim.step()
        out["normalized"] = robot.drive.command.copy()
        sim.submit(AerialDrive("A", linear=10.0))
        sim.run_for(3.0)
        out["fast"] = sim.ground_truth("A")
        sim.submit(AerialDrive("A", altitude=-5.0))
        sim.run_for(4.0)
        out["landed"] = sim.ground_truth("A")
        sim.submit(AerialDrive("A", altitude=1.0))
        sim.run_for(2.0)
        robot.battery_used = robot.spec.battery_life  # battery empty: the rotors stop
        out["before_cut"] = sim.ground_truth("A")
        out["cut_readings"] = sim.run_for(0.5)
        out["after_cut"] = sim.ground_truth("A")
        future = sim.submit(WheelDrive("A", 1.0, 1.0))
        sim.step()
        out["wheel_error"] = future.exception(timeout=0)
        sim.submit(JointTargets("A", {"CameraTilt:1": 1.0}))
        sim.run_for(1.5)
        out["tilt"] = robot.joint_groups["CameraTilt"].state()[0][0]
    return out


def test_climbs_at_the_commanded_rate(flight):
    rise = flight["climbed"].position[2] - flight["ground"].position[2]
    assert 1.3 < rise < 2.0  # 1 m/s for 2 s behind a 0.3 s first-order lag
    assert abs(flight["climbed"].position[0]) < 0.05 and abs(flight["climbed"].position[1]) < 0.05


def test_hovers_level_against_gravity(flight):
    a, b = flight["hover_a"], flight["hover_b"]
    assert b.position[2] == pytest.approx(a.position[2], abs=0.03)
    assert math.dist(a.position[:2], b.position[:2]) < 0.03
    roll, pitch, _ = rpy(b)
    assert abs(roll) < 0.02 and abs(pitch) < 0.02


def test_positive_rotational_velocity_turns_left(flight):
    yaw = rpy(flight["turned"])[2]
    assert 1.2 < yaw < 2.0  # ~ a quarter turn counter-clockwise


def test_linear_and_lateral_are_body_frame(flight):
    # after the quarter turn the nose points along +y (world), its right side along +x
    yaw = rpy(flight["turned"])[2]
    f0, f1, l1 = flight["turned"].position, flight["forward"].position, flight["lateral"].position
    moved = (f1[0] - f0[0], f1[1] - f0[1])
    assert moved[0] * math.cos(yaw) + moved[1] * math.sin(yaw) > 2.5
    side = (l1[0] - f1[0], l1[1] - f1[1])
    assert side[0] * math.sin(yaw) - side[1] * math.cos(yaw) > 2.0  # to the right


def test_limits_and_normalized(flight):
    spec = flight["spec"].drive
    assert list(flight["clamped"]) == pytest.approx([spec.max_linear_speed, 0.0, -spec.max_altitude_speed,
                                                     spec.max_yaw_rate])
    assert list(flight["normalized"]) == pytest.approx([spec.max_linear_speed, -spec.max_lateral_speed,
                                                        0.5 * spec.max_altitude_speed, -spec.max_yaw_rate])
    speed = math.hypot(*flight["fast"].linear_velocity[:2])
    assert speed == pytest.approx(spec.max_linear_speed, rel=0.05)


def test_descends_onto_the_ground_and_rests(flight):
    assert flight["landed"].position[2] == pytest.approx(flight["ground"].position[2], abs=0.03)


def test_empty_battery_stops_the_rotors(flight):
    fall = flight["before_cut"].position[2] - flight["after_cut"].position[2]
    assert fall > 0.5  # free fall for 0.5 s: ~1.2 m minus the initial climb rate
    states = [r for r in flight["cut_readings"] if isinstance(r, RobotState)]
    assert states and states[-1].battery == 0


def test_own_state_sensors_and_camera_tilt(flight):
    states = [r for r in flight["climb_readings"] if isinstance(r, RobotState)]
    assert states and all(s.vehicle_type == "AerialVehicle" for s in states)
    assert {type(r) for r in flight["climb_readings"]} >= {InsReading, GpsReading}
    ins = [r for r in flight["climb_readings"] if isinstance(r, InsReading)][-1]
    assert ins.position[2] > flight["ground"].position[2] + 0.5  # the INS sees the climb
    gps = [r for r in flight["climb_readings"] if isinstance(r, GpsReading)][-1]
    assert gps.fix  # open sky in the empty world
    assert isinstance(flight["wheel_error"], CommandError)
    assert flight["tilt"] == pytest.approx(1.0, abs=0.05)


def test_catalogue_limits_match_the_spec():
    spec = load_robot("AirRobot")
    assert spec.vehicle_type == "AerialVehicle"
    assert (spec.drive.max_altitude_speed, spec.drive.max_linear_speed, spec.drive.max_lateral_speed) == (5.0, 5.0, 5.0)
    assert spec.drive.max_yaw_rate == pytest.approx(1.5708)
    assert spec.mass == 1.0 and spec.payload == 0.2


def test_accelerating_tilts_the_airframe_and_the_response_time_is_the_catalogues():
    """A multirotor pushes along its rotor axis only: to accelerate at a it pitches nose down atan(a / g);
    its speed reaches 63 % of a step command after the catalogue's response_time."""
    with Simulator("empty", seed=8) as sim:
        sim.spawn("AirRobot", "A")
        sim.submit(AerialDrive("A", altitude=1.0))
        sim.run_for(2.0)
        sim.submit(AerialDrive("A"))
        sim.run_for(2.0)
        start = sim.time
        sim.submit(AerialDrive("A", linear=2.0))
        samples = []  # (time since the command, forward speed, pitch)
        for _ in range(200):
            sim.step()
            truth = sim.ground_truth("A")
            samples.append((sim.time - start, truth.linear_velocity[0], rpy(truth)[1]))
        response_time = load_robot("AirRobot").drive.response_time
    reached = next(t for t, v, _ in samples if v >= 0.632 * 2.0)
    assert reached == pytest.approx(response_time, abs=0.02)
    dt = samples[1][0] - samples[0][0]
    tilts = [(pitch, (samples[k + 1][1] - samples[k - 1][1]) / (2 * dt))
             for k, (_, _, pitch) in enumerate(samples[1:-1], start=1)]
    pitch, acceleration = max(tilts, key=lambda pa: pa[1])
    assert acceleration > 4.0  # the step asks for several m/s^2
    assert pitch == pytest.approx(math.atan2(acceleration, 9.81), abs=math.radians(3.0))
