"""Soryu: three tracked cars joined by yaw and pitch joints (lockstep, built-in floors and boxes).

Tolerances: straight on the flat at full speed for 3 s it covers 0.37 m/s x 3 s within 10 %, drifts
sideways less than 2 cm and turns less than 0.02 rad; a cmd_vel turn (0.2 m/s, 0.3 rad/s) bends the yaw
joints to the arc's angle and turns at the commanded rate within 15 %; with the joint sequence of
docs/robots.md it climbs a 0.12 m step and ends level on top of it.
"""
import math

import pytest

from fleet_worlds import add_step
from usarsim import rotations
from usarsim.protocol import commands as pc
from usarsim.protocol import grammar as g
from usarsim.protocol import messages as pm
from usarsim.ros.commands import group_command, twist_to_command
from usarsim.sim.catalogue import load_robot
from usarsim.sim.commands import JointTargets, WheelDrive
from usarsim.sim.drives.serpentine import SerpentineDrive, bend_angle
from usarsim.sim.readings import MissionPackageState, RobotState
from usarsim.sim.simulator import Simulator

CARS = ("middle", "front", "rear")
JOINTS = ["FrontYaw", "FrontPitch", "RearYaw", "RearPitch"]
STEP_HEIGHT, RISER = 0.12, 1.0
# docs/robots.md "Soryu": (middle car's centre relative to the riser, m -> joint targets), at half speed.
STEP_SEQUENCE = [(-1.0, {"FrontPitch": 0.6}),                      # front car's nose up before the step
                 (-0.3, {"FrontPitch": -0.6}),                     # front car on top presses down: middle car's nose rises
                 (0.05, {"FrontPitch": 0.0, "RearPitch": -0.6}),   # middle car over: rear car's tail presses down
                 (0.5, {"RearPitch": 0.0})]                        # all cars up: straighten


def yaw(truth) -> float:
    return rotations.euler_from_quaternion(truth.orientation)[2]


def test_catalogue_entry_is_three_tracked_cars_with_yaw_and_pitch_joints():
    spec = load_robot("Soryu")
    assert spec.drive.type == "serpentine" and spec.dimensions == pytest.approx((1.21, 0.122, 0.145))
    for side in (spec.drive.left_wheels, spec.drive.right_wheels):
        assert [sum(j.startswith(car + "_") for j in side) for car in CARS] == [4, 4, 4]
    assert sum(1 for w in spec.body.wheels if w.joint.startswith("front_")) == 8
    links = {link.joint_name: link for link in spec.body.links}
    assert [links[j].axis for j in JOINTS] == [(0, 0, 1), (0, -1, 0), (0, 0, 1), (0, 1, 0)]
    group = next(grp for grp in spec.joint_groups if grp.name == "Joints")
    assert [link.joint for link in group.links] == JOINTS
    assert spec.drive.front_steer_joints == ["FrontYaw"] and spec.drive.rear_steer_joints == ["RearYaw"]


def test_bend_angle_puts_the_cars_on_the_arc():
    # radius 1 m, car centres 0.42 m apart: the chord's angle 2 asin(0.21)
    assert bend_angle(0.5, 0.5, 0.42, 1.0) == pytest.approx(2 * math.asin(0.21))
    assert bend_angle(-0.5, 0.5, 0.42, 1.0) == pytest.approx(-2 * math.asin(0.21))  # reversing: the same arc
    assert bend_angle(0.0, 0.5, 0.42, 1.0) == 0.0  # no forward speed: nothing to steer by
    assert bend_angle(0.01, 5.0, 0.42, 1.0) == 1.0  # clamped to the joint limit


def test_protocol_lines_and_forms():
    spec = load_robot("Soryu")
    assert pm.geo_robot(spec, "S") == ("GEO {Type GroundVehicle} {Name S} {Dimensions 1.2100,0.1220,0.1450} "
                                       "{COG 0.0000,0.0000,0.0000} {WheelRadius 0.0600} {WheelSeparation 0.0870} "
                                       "{WheelBase 0.4200}\r\n")
    assert pm.conf_robot(spec, "S") == ("CONF {Type GroundVehicle} {Name S} {SteeringType SkidSteered} "
                                        "{Mass 10.0000} {MaxSpeed 6.1700} {MaxTorque 2.0000} {MaxFrontSteer 1.0000} "
                                        "{MaxRearSteer 1.0000}\r\n")
    assert pc.drive_commands(g.parse_command("DRIVE {Left 3.0} {Right 3.0}"), "S", spec) == [WheelDrive("S", 3.0, 3.0)]
    assert pc.drive_commands(g.parse_command("DRIVE {Name FrontPitch} {Order 0} {Value 0.5}"), "S", spec) == [
        JointTargets("S", {"FrontPitch": 0.5}, order=0)]
    assert group_command("S", spec.joint_groups[0], [0.1, 0.2, 0.3, 0.4]) == JointTargets(
        "S", {"Joints:1": 0.1, "Joints:2": 0.2, "Joints:3": 0.3, "Joints:4": 0.4})
    geo = pm.geo_mispkg(spec, "Joints")
    assert geo is not None and geo.startswith("GEO {Type MisPkg} {Name Joints} {Link 1}")


@pytest.fixture(scope="module")
def flat():
    """One Soryu drives straight at full speed, another turns on cmd_vel; joint commands by name."""
    out = {}
    with Simulator("empty", seed=6) as sim:
        straight, turner = (sim.spawn("Soryu", name, position=(0.0, y, 0.0)) for name, y in (("A", 0.0), ("B", 6.0)))
        assert isinstance(turner.drive, SerpentineDrive)
        sim.run_for(0.5)
        out["a0"] = sim.ground_truth("A")
        top = straight.spec.drive.max_wheel_speed
        sim.submit(WheelDrive("A", top, top))
        sim.submit(twist_to_command("B", (0.2, 0.0, 0.0), (0.0, 0.0, 0.3), turner.spec.drive, turner.drive.accepts))
        readings = sim.run_for(1.5)  # the joints bend at 0.5 rad/s
        yaw0 = yaw(sim.ground_truth("B"))
        readings += sim.run_for(1.5)
        out["a3"] = sim.ground_truth("A")
        out["turn_rate"] = rotations.wrap_pi(yaw(sim.ground_truth("B")) - yaw0) / 1.5
        out["bend"] = turner.drive.steer_angles()
        out["sta"] = [r for r in readings if isinstance(r, RobotState) and r.robot == "B"][-1]
        sim.submit(WheelDrive("A", 0.0, 0.0))
        sim.submit(JointTargets("A", {"FrontPitch": 0.4, "Joints:4": -0.3}))
        readings = sim.run_for(1.5)
        out["pitches"] = [straight.joint_position(straight.joint_index(j)) for j in ("FrontPitch", "RearPitch")]
        out["missta"] = [r for r in readings if isinstance(r, MissionPackageState) and r.package == "Joints"][-1]
    return out


def test_drives_straight_on_the_flat(flat):
    start, end = flat["a0"], flat["a3"]
    assert end.position[0] - start.position[0] == pytest.approx(0.37 * 3.0, rel=0.1)
    assert abs(end.position[1] - start.position[1]) < 0.02
    assert abs(rotations.wrap_pi(yaw(end) - yaw(start))) < 0.02


def test_cmd_vel_turns_by_bending_the_yaw_joints(flat):
    expected = bend_angle(0.2, 0.3, 0.42, 1.0)
    front, rear = flat["bend"]
    assert front == pytest.approx(expected, abs=0.02) and rear == pytest.approx(-expected, abs=0.02)
    assert flat["turn_rate"] == pytest.approx(0.3, rel=0.15)
    line = pm.format_reading(flat["sta"])
    assert line.startswith("STA {Type GroundVehicle}") and "{FrontSteer -0.6" in line  # SAE: +right


def test_pitch_joints_move_by_name_and_by_group_link(flat):
    assert flat["pitches"] == pytest.approx([0.4, -0.3], abs=0.02)
    assert flat["missta"].links == (1, 2, 3, 4)


def test_crosses_a_step_with_the_documented_joint_sequence():
    with Simulator("empty", seed=1) as sim:
        add_step(sim, front=RISER, length=3.0, top=STEP_HEIGHT)  # with arena friction
        robot = sim.spawn("Soryu", "S", position=(0.0, 0.0, 0.0))
        sim.run_for(0.5)
        z0 = sim.ground_truth("S").position[2]
        half = 0.5 * robot.spec.drive.max_wheel_speed
        sim.submit(WheelDrive("S", half, half))
        pending = list(STEP_SEQUENCE)
        while sim.time < 13.0:
            sim.run_for(0.1)
            x = sim.ground_truth("S").position[0]
            while pending and x >= RISER + pending[0][0]:
                sim.submit(JointTargets("S", pending.pop(0)[1]))
        end = sim.ground_truth("S")
    assert not pending
    roll, pitch, _ = rotations.euler_from_quaternion(end.orientation)
    assert end.position[0] > RISER + 0.6  # the rear car is past the riser too
    assert end.position[2] - z0 == pytest.approx(STEP_HEIGHT, abs=0.01)  # level on top
    assert abs(roll) < 0.05 and abs(pitch) < 0.05
