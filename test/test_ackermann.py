"""Car-like vehicles (Hummer, Sedan, SnowStorm): DRIVE {Speed} {FrontSteer} {RearSteer} semantics and limits."""
import math

import numpy as np
import pybullet as p
import pytest

from usarsim import rotations
from usarsim.sim.catalogue import load_robot
from usarsim.sim.commands import AckermannDrive, CommandError, WheelDrive
from usarsim.sim.drives.vehicle import ackermann_geometry, twist_to_ackermann, wheel_positions
from usarsim.sim.readings import OdometryReading, RobotState
from usarsim.sim.simulator import Simulator

CARS = ["Hummer", "Sedan", "SnowStorm"]


def yaw_of(truth) -> float:
    return rotations.euler_from_quaternion(truth.orientation)[2]


# --- pure geometry -----------------------------------------------------------------------

def test_ackermann_inner_wheel_steers_more_and_shares_the_turn_centre():
    wheels = {"lf": (1.3, 0.75), "rf": (1.3, -0.75), "lr": (-1.3, 0.75), "rr": (-1.3, -0.75)}
    geometry = ackermann_geometry(wheels, {"lf", "rf"}, set(), 0.3, 0.0)
    (lf, lf_ratio), (rf, rf_ratio) = geometry["lf"], geometry["rf"]
    assert lf > 0.3 > rf > 0  # left turn: the left (inner) wheel turns more
    # both front wheels' normals meet the rear-axle line at the same point
    wheelbase = 2.6
    assert 0.75 + wheelbase / math.tan(lf) == pytest.approx(-0.75 + wheelbase / math.tan(rf), rel=1e-9)
    assert 0.0 + wheelbase / math.tan(0.3) == pytest.approx(0.75 + wheelbase / math.tan(lf), rel=1e-9)
    # the outer wheels roll on longer arcs: they spin faster than the inner ones
    assert geometry["rr"][1] > 1.0 > geometry["lr"][1]
    assert rf_ratio > lf_ratio
    assert geometry["lr"][0] == geometry["rr"][0] == 0.0


def test_ackermann_straight_and_crab_are_parallel():
    wheels = {"lf": (1.0, 0.5), "rf": (1.0, -0.5), "lr": (-1.0, 0.5), "rr": (-1.0, -0.5)}
    straight = ackermann_geometry(wheels, {"lf", "rf"}, {"lr", "rr"}, 0.0, 0.0)
    assert all(v == (0.0, 1.0) for v in straight.values())
    crab = ackermann_geometry(wheels, {"lf", "rf"}, {"lr", "rr"}, 0.2, 0.2)
    assert all(v == (0.2, 1.0) for v in crab.values())
    # four-wheel steering in opposite phase: the turn centre sits beside the middle of the car
    counter = ackermann_geometry(wheels, {"lf", "rf"}, {"lr", "rr"}, 0.2, -0.2)
    assert counter["lf"][0] == pytest.approx(-counter["lr"][0])


def test_twist_to_ackermann_uses_the_bicycle_model():
    spec = load_robot("Hummer").drive
    speed, steer = twist_to_ackermann(2.0, 0.3, spec)
    assert speed == pytest.approx(2.0 / spec.wheel_radius)
    assert steer == pytest.approx(math.atan(spec.wheelbase * 0.3 / 2.0))
    _, steer = twist_to_ackermann(1.0, 5.0, spec)  # tighter than the car can turn: clamped
    assert steer == pytest.approx(spec.max_front_steer)
    assert twist_to_ackermann(0.0, 1.0, spec) == (0.0, 0.0)  # a car cannot turn in place


def test_wheel_positions_follow_steer_knuckles():
    spec = load_robot("Sedan")
    pos = wheel_positions(spec.body)
    assert pos["left_front_wheel_joint"][0] > 1.0 and pos["left_front_wheel_joint"][1] > 0.5
    assert pos["left_front_wheel_joint"][2] == pytest.approx(pos["left_rear_wheel_joint"][2])


# --- simulated ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def sim():
    with Simulator("empty", seed=4) as s:
        yield s


@pytest.mark.parametrize("cls", CARS)
def test_drive_forward_reverse_and_steer(sim, cls):
    spec = load_robot(cls)
    name = f"{cls}_drive"
    sim.spawn(cls, name, position=(0.0, -25.0 + 25.0 * CARS.index(cls), 0.0))
    sim.run_for(0.3)
    start = sim.ground_truth(name)
    sim.submit(AckermannDrive(name, 8.0))
    sim.run_for(2.0)
    straight = sim.ground_truth(name)
    dx = straight.position[0] - start.position[0]
    assert 0.6 * 8.0 * spec.drive.wheel_radius * 2.0 < dx < 1.02 * 8.0 * spec.drive.wheel_radius * 2.0
    assert abs(straight.position[1] - start.position[1]) < 0.05
    # negative front steer turns right (REP-103: +steer = left)
    sim.submit(AckermannDrive(name, 8.0, front_steer=-0.3))
    sim.run_for(2.0)
    right = sim.ground_truth(name)
    assert yaw_of(right) < -0.2 and right.position[1] < straight.position[1]
    # bicycle model: yaw rate ~ v tan(delta) / L once the wheels have turned
    v = math.hypot(*right.linear_velocity[:2])
    assert right.angular_velocity[2] == pytest.approx(-v * math.tan(0.3) / spec.drive.wheelbase, rel=0.25)
    sim.submit(AckermannDrive(name, -8.0))  # reverse
    sim.run_for(3.0)
    back = sim.ground_truth(name)
    heading = (math.cos(yaw_of(back)), math.sin(yaw_of(back)))
    assert back.linear_velocity[0] * heading[0] + back.linear_velocity[1] * heading[1] < -1.0
    sim.submit(AckermannDrive(name, 0.0))
    sim.run_for(2.0)
    assert math.hypot(*sim.ground_truth(name).linear_velocity[:2]) < 0.1  # wheels held: it brakes
    sim.remove(name)


def test_state_reports_steer_and_limits_apply(sim):
    spec = load_robot("Hummer")
    robot = sim.spawn("Hummer", "hs", position=(40.0, 0.0, 0.0))
    sim.submit(AckermannDrive("hs", 500.0, front_steer=0.2, rear_steer=0.4))
    sim.step()
    assert robot.drive.command == pytest.approx((spec.drive.max_wheel_speed, 0.2, 0.0))  # MaxSpeed, no rear steer
    sim.submit(AckermannDrive("hs", 3.0, front_steer=0.2))
    readings = sim.run_for(1.0)
    state = [r for r in readings if isinstance(r, RobotState)][-1]
    assert state.vehicle_type == "GroundVehicle"
    assert state.front_steer == pytest.approx(0.2, abs=0.02)
    assert state.rear_steer == 0.0
    sim.submit(AckermannDrive("hs", -100.0, front_steer=-100.0, normalized=True))
    sim.step()
    assert robot.drive.command == pytest.approx((-spec.drive.max_wheel_speed, -spec.drive.max_front_steer, 0.0))
    sim.submit(AckermannDrive("hs", 0.0, front_steer=0.0))
    future = sim.submit(WheelDrive("hs", 1.0, 1.0))  # a car has no skid drive
    sim.step()
    with pytest.raises(CommandError):
        future.result(timeout=0)
    sim.remove("hs")


def test_sedan_rear_wheels_roll_freely_and_odometry_follows(sim):
    robot = sim.spawn("Sedan", "sd", position=(-40.0, 0.0, 0.0))
    sim.run_for(0.3)
    start = sim.ground_truth("sd").position
    sim.submit(AckermannDrive("sd", 6.0))
    readings = sim.run_for(2.0)
    travelled = sim.ground_truth("sd").position[0] - start[0]
    rear = robot.joint_index("left_rear_wheel_joint")
    spin = p.getJointState(robot.body_id, rear, physicsClientId=sim.client)[1]
    assert spin == pytest.approx(6.0, rel=0.1)  # unpowered, turned by the ground
    odo = [r for r in readings if isinstance(r, OdometryReading)][-1]
    assert odo.x == pytest.approx(travelled, rel=0.1, abs=0.1)
    sim.remove("sd")


@pytest.mark.parametrize("cls", ["Hummer", "Sedan"])
def test_full_throttle_reaches_the_catalogue_top_speed_and_launches_straight(cls):
    """No velocity damping holds a car back, and traction control keeps the tyres gripping: from rest at
    full throttle, zero steer, the car reaches max_wheel_speed x wheel_radius and keeps its heading."""
    spec = load_robot(cls).drive
    top = spec.max_wheel_speed * spec.wheel_radius
    with Simulator("empty", seed=4) as sim:
        sim.spawn(cls, "car", position=(-95.0, 0.0, 0.0))  # the floor is 200 m long: a 110 m run-up
        sim.run_for(0.3)
        sim.submit(AckermannDrive("car", spec.max_wheel_speed))
        headings = []
        for _ in range(17):
            sim.run_for(0.5)
            headings.append(yaw_of(sim.ground_truth("car")))
        end = sim.ground_truth("car")
    assert math.hypot(*end.linear_velocity[:2]) == pytest.approx(top, rel=0.01)
    assert max(abs(h) for h in headings) < math.radians(1.0)
    assert abs(end.position[1]) < 0.3


@pytest.mark.parametrize("class_name", ["Hummer", "Sedan"])
def test_odometry_reports_the_chassis_frame_over_a_quarter_turn(class_name):
    """REP-105's odom -> base_link is the chassis frame's pose, not the rear axle's (1.3 m behind it
    on a Hummer: 1.8 m off, 12 % of the path, after a quarter turn)."""
    from usarsim.ros.commands import twist_to_command

    with Simulator("empty", pacing="lockstep", noise=False) as sim:
        car = sim.spawn(class_name, "C", position=(0.0, 0.0, 0.0), rpy=(0.0, 0.0, 0.4))
        start, start_rot = (a.copy() for a in car.link_pose("base_link"))
        sim.submit(twist_to_command("C", (3.0, 0.0, 0.0), (0.0, 0.0, 0.3), car.spec.drive, car.drive.accepts,
                                    car.spec.body))
        odometry, path, previous = None, 0.0, start
        while sim.time < 0.5 * math.pi / 0.3:
            odometry = next((r for r in sim.step(1) if isinstance(r, OdometryReading)), odometry)
            here = car.link_pose("base_link")[0].copy()
            path += float(np.linalg.norm(here[:2] - previous[:2]))
            previous = here
        moved = (start_rot.T @ (previous - start))[:2]
        assert math.dist(moved, (odometry.x, odometry.y)) < 0.02 * path, (moved, odometry)
