"""The robot catalogue: every robot spawns, moves under its drive command and publishes its sensors."""
from __future__ import annotations

import math

import pytest

from fleet_worlds import add_step
from usarsim import rotations
from usarsim.sim.catalogue import available_robots, load_robot
from usarsim.sim.commands import AckermannDrive, AerialDrive, JointTargets, WheelDrive
from usarsim.sim.readings import GroundTruthReading
from usarsim.sim.simulator import Simulator

ROBOTS = available_robots()
GROUND = [r for r in ROBOTS if load_robot(r).drive.type in ("skid", "differential", "tracked")]
CARS = [r for r in ROBOTS if load_robot(r).drive.type == "ackermann"]
AERIAL = [r for r in ROBOTS if load_robot(r).drive.type == "aerial"]


def yaw_of(truth: GroundTruthReading) -> float:
    return rotations.euler_from_quaternion(truth.orientation)[2]


def test_catalogue_ships_the_fleet():
    expected = {"P2AT", "P2DX", "ATRVJr", "Hummer", "Sedan", "AirRobot", "Kenaf", "Talon", "TeleMax"}
    assert expected <= set(ROBOTS)
    assert load_robot("P2DX").drive.type == "differential"
    assert load_robot("ATRVJr").drive.type == "skid"


@pytest.mark.parametrize("class_name", ROBOTS)
def test_spawns_and_publishes_its_default_sensors(class_name):
    with Simulator("empty", seed=2) as sim:
        robot = sim.spawn(class_name, "R")
        for sensor in robot.sensors:
            if hasattr(sensor, "active"):  # cameras render only on request
                sensor.active = True
        slowest = max([s.params.scan_interval for s in robot.sensors] + [robot.spec.msg_period])
        readings = sim.run_for(slowest + 0.05)
        seen = {r.sensor for r in readings}
        missing = {s.name for s in robot.sensors} - seen
        assert not missing, f"{class_name}: no readings from {sorted(missing)}"
        assert "State" in seen
        for group in robot.spec.joint_groups:
            assert group.name in seen
        # resting on the floor, upright, not sunk into it
        truth = sim.ground_truth("R")
        roll, pitch, _ = rotations.euler_from_quaternion(truth.orientation)
        assert abs(roll) < 0.05 and abs(pitch) < 0.1
        assert truth.position[2] > -robot.spec.body.lowest_point() - 0.03


@pytest.mark.parametrize("class_name", GROUND)
def test_skid_robots_drive_forward_and_turn_left(class_name):
    spec = load_robot(class_name)
    spin = 0.5 * spec.drive.max_wheel_speed
    with Simulator("empty", seed=2) as sim:
        sim.spawn(class_name, "R")
        sim.run_for(0.3)
        start = sim.ground_truth("R")
        sim.submit(WheelDrive("R", spin, spin))
        sim.run_for(1.5)
        moved = sim.ground_truth("R")
        dx = moved.position[0] - start.position[0]
        ideal = spin * spec.drive.wheel_radius * 1.5
        assert 0.5 * ideal < dx < 1.1 * ideal
        assert abs(moved.position[1] - start.position[1]) < 0.1 * ideal
        sim.submit(WheelDrive("R", 0.0, 0.0))
        sim.run_for(0.5)
        stopped = sim.ground_truth("R")
        # At most half a turn a second: spun at half its top wheel speed, a Kurt3D (8 rad/s in place)
        # is thrown onto its side by its own stick-slip scrub, as a rigid robot that fast would be.
        turn_spin = min(spin, math.pi * spec.drive.track_width / (2.0 * spec.drive.wheel_radius))
        sim.submit(WheelDrive("R", -turn_spin, turn_spin))
        turned, last = 0.0, yaw_of(stopped)
        for _ in range(20):  # accumulate in small steps: fast robots turn more than pi in 1 s
            sim.run_for(0.05)
            now = yaw_of(sim.ground_truth("R"))
            turned += math.atan2(math.sin(now - last), math.cos(now - last))
            last = now
        assert turned > 0.05  # positive: counter-clockwise seen from above (left)
        truth = sim.ground_truth("R")
        assert truth.angular_velocity[2] > 0.05
        roll, pitch, _ = rotations.euler_from_quaternion(truth.orientation)
        assert abs(roll) < 0.2 and abs(pitch) < 0.2  # turned on its wheels, not tumbling


@pytest.mark.parametrize("class_name", GROUND)
def test_normalized_drive_uses_the_max_wheel_speed(class_name):
    spec = load_robot(class_name)
    with Simulator("empty") as sim:
        robot = sim.spawn(class_name, "R")
        sim.submit(WheelDrive("R", 50.0, -100.0, normalized=True))
        sim.submit(WheelDrive("R", 50.0, -150.0, normalized=True))
        sim.step(1)
        assert robot.drive.command == pytest.approx((0.5 * spec.drive.max_wheel_speed, -spec.drive.max_wheel_speed))


@pytest.mark.parametrize("class_name", CARS)
def test_cars_drive_forward_and_steer_left(class_name):
    spec = load_robot(class_name)
    with Simulator("empty", seed=2) as sim:
        sim.spawn(class_name, "R")
        sim.run_for(0.3)
        start = sim.ground_truth("R")
        sim.submit(AckermannDrive("R", 5.0))
        sim.run_for(1.5)
        straight = sim.ground_truth("R")
        assert straight.position[0] - start.position[0] > 0.5 * 5.0 * spec.drive.wheel_radius * 1.5
        assert abs(yaw_of(straight)) < 0.05
        sim.submit(AckermannDrive("R", 5.0, front_steer=0.3))
        sim.run_for(2.0)
        turned = sim.ground_truth("R")
        assert yaw_of(turned) - yaw_of(straight) > 0.1  # +steer turns left (REP-103)
        assert turned.position[1] > straight.position[1]


def equivalent_bicycle_angle(left: float, right: float) -> float:
    """The single steer angle whose turn centre the two Ackermann wheel angles share."""
    if abs(left) < 1e-6 or abs(right) < 1e-6:
        return (left + right) / 2.0
    return math.atan(2.0 / (1.0 / math.tan(left) + 1.0 / math.tan(right)))


def front_steer_angles(robot, spec) -> tuple[float, float]:
    """Measured (left, right) front knuckle angles."""
    lateral = {link.joint_name: link.xyz[1] for link in spec.body.links}
    by_side = sorted(spec.drive.front_steer_joints, key=lambda j: -lateral[j])
    return robot.joint_position(robot.joint_index(by_side[0])), robot.joint_position(robot.joint_index(by_side[-1]))


@pytest.mark.parametrize("class_name", CARS)
def test_steering_respects_its_limit(class_name):
    spec = load_robot(class_name)
    limit = spec.drive.max_front_steer
    with Simulator("empty") as sim:
        robot = sim.spawn(class_name, "R")
        sim.submit(AckermannDrive("R", 0.0, front_steer=-2.0))  # beyond the limit, turning right
        sim.run_for(1.5)
        left, right = front_steer_angles(robot, spec)
        assert equivalent_bicycle_angle(left, right) == pytest.approx(-limit, abs=0.03)
        assert right < left < 0.0  # Ackermann: the inner (right) wheel turns more
        sim.submit(AckermannDrive("R", 0.0, front_steer=100.0, normalized=True))
        sim.run_for(2.0)
        left, right = front_steer_angles(robot, spec)
        assert equivalent_bicycle_angle(left, right) == pytest.approx(limit, abs=0.03)
        assert left > right > 0.0


@pytest.mark.parametrize("class_name", AERIAL)
def test_aerial_climbs_hovers_and_flies(class_name):
    spec = load_robot(class_name)
    with Simulator("empty", seed=2) as sim:
        sim.spawn(class_name, "R")
        sim.run_for(0.3)
        ground = sim.ground_truth("R").position[2]
        sim.submit(AerialDrive("R", altitude=1.0))
        sim.run_for(2.0)
        up = sim.ground_truth("R").position[2]
        assert 1.2 < up - ground < 2.1  # 1 m/s after a first-order lag
        sim.submit(AerialDrive("R"))
        sim.run_for(1.5)  # velocity decays with the response time
        hover = sim.ground_truth("R")
        sim.run_for(2.0)
        later = sim.ground_truth("R")
        assert later.position[2] == pytest.approx(hover.position[2], abs=0.03)  # hovers against gravity
        roll, pitch, _ = rotations.euler_from_quaternion(later.orientation)
        assert abs(roll) < 0.05 and abs(pitch) < 0.05
        sim.submit(AerialDrive("R", linear=20.0, lateral=0.0, yaw_rate=0.0))
        sim.run_for(2.0)
        fast = sim.ground_truth("R")
        assert fast.linear_velocity[0] == pytest.approx(spec.drive.max_linear_speed, rel=0.1)  # clamped
        sim.submit(AerialDrive("R", yaw_rate=0.5))
        sim.run_for(1.0)
        assert sim.ground_truth("R").angular_velocity[2] == pytest.approx(0.5, abs=0.1)  # + = left


def test_flippers_obey_speed_and_limits():
    with Simulator("empty") as sim:
        robot = sim.spawn("Kenaf", "R")
        group = robot.joint_groups["Flippers"]
        sim.submit(JointTargets("R", {"FRFlipper": 5.0, "Flippers:3": -0.5}))
        sim.run_for(1.0)
        limit = group.spec.links[0].max
        assert group.targets[0] == pytest.approx(limit)  # clamped to the joint limit
        positions, _, _ = group.state()
        assert positions[0] == pytest.approx(group.spec.links[0].max_speed * 1.0, abs=0.1)  # speed-limited
        assert positions[2] == pytest.approx(-0.5, abs=0.05)


def test_arm_prismatic_link_respects_its_range():
    with Simulator("empty") as sim:
        robot = sim.spawn("TeleMax", "R")
        arm = robot.joint_groups["TeleMaxArm"]
        positions, _, _ = arm.state()
        assert positions[1] == pytest.approx(arm.spec.links[1].initial, abs=0.05)  # folded initial pose
        sim.submit(JointTargets("R", {"TeleMaxArm:3": 2.0}))
        sim.run_for(1.0)
        assert arm.targets[2] == pytest.approx(arm.spec.links[2].max)
        positions, _, _ = arm.state()
        assert 0.05 < positions[2] <= arm.spec.links[2].max + 1e-3


def _drive_at_step(class_name: str, spin: float, flippers: dict[str, float], height: float = 0.18) -> tuple[float, float]:
    """Drive toward a ``height`` step 0.75 m ahead for 5 s; return (x, z rise of the chassis)."""
    with Simulator("empty", seed=1) as sim:
        add_step(sim, front=0.75, length=6.0, top=height)  # 6 m long: nothing in 5 s drives off its far end
        sim.spawn(class_name, "R", position=(0.0, 0.0, 0.0))
        if flippers:
            sim.submit(JointTargets("R", flippers))
        sim.run_for(1.0)
        z0 = sim.ground_truth("R").position[2]
        sim.submit(WheelDrive("R", spin, spin))
        sim.run_for(5.0)
        end = sim.ground_truth("R").position
        return end[0], end[2] - z0


def test_kenaf_climbs_a_step_that_stops_a_p2at():
    # front flippers raised onto the edge, rear flippers pressed down to lift the tail
    climbing_pose = {"FRFlipper": 0.5, "FLFlipper": 0.5, "RRFlipper": -0.3, "RLFlipper": -0.3}
    x, rise = _drive_at_step("Kenaf", load_robot("Kenaf").drive.max_wheel_speed, climbing_pose)
    assert x > 1.0 and rise == pytest.approx(0.18, abs=0.03)
    x, rise = _drive_at_step("P2AT", 6.4, {})
    assert x < 0.75 and abs(rise) < 0.03


@pytest.mark.parametrize("class_name", ROBOTS)
def test_shipped_urdf_matches_its_catalogue_entry(class_name):
    from usarsim.sim.urdf import generate_urdf

    spec = load_robot(class_name)
    assert spec.urdf_path.read_text(encoding="utf-8") == generate_urdf(spec), \
        f"urdf/{class_name}.urdf is stale: run `usarsim urdf {class_name}`"
