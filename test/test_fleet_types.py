"""Lisa (omni drive), QRIO (humanoid), Cooper (front-wheel-drive car), any-joint DRIVE, MISPKG
terminal pose (inverse kinematics) and the protocol lines of each.

Tolerances: Lisa strafing at 0.5 m/s for 3 s moves 1.5 m sideways within 10 % and turns less than
0.05 rad; QRIO standing 10 s keeps its pelvis within 2 cm of its height and tilts less than 0.1 rad;
a reachable end pose is reached within 1 cm.
"""
import math
import time

import numpy as np
import pytest

from protocol_client import Client
from usarsim import rotations
from usarsim.protocol.frames import flip_vector
from usarsim.protocol import commands as pc
from usarsim.protocol import grammar as g
from usarsim.protocol import messages as pm
from usarsim.protocol.server import ProtocolServer
from usarsim.ros.commands import twist_to_command
from usarsim.sim import reach
from usarsim.sim.catalogue import load_robot
from usarsim.sim.commands import (AckermannDrive, CommandError, JointTargets, OmniDrive, ReachPose, WheelDrive)
from usarsim.sim.drives.omni import twist_to_wheels
from usarsim.sim.simulator import Simulator
from patience import PATIENCE


def heading(sim, name):
    return rotations.euler_from_quaternion(sim.ground_truth(name).orientation)[2]


@pytest.fixture(scope="module")
def ground():
    """Lisa strafes and turns; QRIO stands and lifts an arm; Cooper drives; a P2AT turns one wheel."""
    out = {}
    with Simulator("empty", seed=4) as sim:
        lisa = sim.spawn("Lisa", "L", position=(0.0, 0.0, 0.0))
        qrio = sim.spawn("QRIO", "Q", position=(5.0, 0.0, 0.0))
        sim.spawn("Cooper", "C", position=(-10.0, -12.0, 0.0))
        p2at = sim.spawn("P2AT", "P", position=(0.0, -6.0, 0.0))
        sim.run_for(0.5)
        out["lisa0"], out["qrio0"], out["cooper0"] = (sim.ground_truth(n) for n in "LQC")
        xy = [(0.28, 0.18), (-0.28, -0.18)]
        sim.submit(OmniDrive("L", tuple(twist_to_wheels(0.0, 0.5, 0.0, xy, lisa.spec.drive))))
        sim.submit(AckermannDrive("C", 10.0, 0.0))
        sim.submit(JointTargets("P", {"left_front_wheel_joint": 3.0}, order=1))  # one wheel, by name
        sim.run_for(1.0)
        out["lisa1"] = sim.ground_truth("L")
        sim.run_for(3.0)
        out["lisa2"], out["cooper2"] = sim.ground_truth("L"), sim.ground_truth("C")
        out["p2at_wheel"] = p2at.joint_position(p2at.joint_index("left_front_wheel_joint"))
        sim.run_for(6.0)
        out["qrio10"] = sim.ground_truth("Q")
        sim.submit(OmniDrive("L", tuple(twist_to_wheels(0.0, 0.0, 0.5, xy, lisa.spec.drive))))
        sim.run_for(1.0)
        yaw0 = heading(sim, "L")
        sim.run_for(2.0)
        out["lisa_turn"] = rotations.wrap_pi(heading(sim, "L") - yaw0) / 2.0
        sim.submit(JointTargets("Q", {"LeftShoulderPitch": -1.5, "HeadPan": 0.5}))
        sim.run_for(1.5)
        out["arm"] = qrio.joint_position(qrio.joint_index("LeftShoulderPitch"))
        out["qrio_after_arm"] = sim.ground_truth("Q")
    return out


def test_lisa_strafes_without_turning(ground):
    start, end = ground["lisa1"], ground["lisa2"]
    assert end.position[1] - start.position[1] == pytest.approx(1.5, rel=0.1)
    assert abs(end.position[0] - start.position[0]) < 0.1
    yaw = rotations.euler_from_quaternion(end.orientation)[2] - rotations.euler_from_quaternion(start.orientation)[2]
    assert abs(yaw) < 0.05


def test_lisa_turns_in_place_at_the_commanded_rate(ground):
    assert ground["lisa_turn"] == pytest.approx(0.5, rel=0.15)


def test_qrio_stands_ten_seconds_and_moves_a_joint(ground):
    before, after = ground["qrio0"], ground["qrio10"]
    assert abs(after.position[2] - before.position[2]) < 0.02
    roll, pitch, _ = rotations.euler_from_quaternion(after.orientation)
    assert abs(roll) < 0.1 and abs(pitch) < 0.1
    assert ground["arm"] == pytest.approx(-1.5, abs=0.05)
    assert ground["qrio_after_arm"].position[2] > before.position[2] - 0.02  # still standing


def test_cooper_drives_forward_on_its_front_wheels(ground):
    moved = ground["cooper2"].position[0] - ground["cooper0"].position[0]
    # 10 rad/s on 0.28 m wheels is 2.8 m/s: 11.2 m in 4 s, less the start from rest
    assert moved == pytest.approx(10.0 * 0.28 * 4.0, rel=0.15)
    spec = load_robot("Cooper")
    assert spec.drive.powered_wheels == ["left_front_wheel_joint", "right_front_wheel_joint"]


def test_any_joint_by_name_including_a_wheel(ground):
    # turned by its own velocity command (3 rad/s for 4 s), not the skid drive
    assert ground["p2at_wheel"] == pytest.approx(3.0 * 4.0, rel=0.1)


def test_unknown_joint_names_the_joints():
    with Simulator("empty") as sim:
        sim.spawn("P2AT", "P")
        future = sim.submit(JointTargets("P", {"NoSuchJoint": 1.0}))
        sim.step()
        with pytest.raises(CommandError, match="left_front_wheel_joint"):
            future.result(timeout=PATIENCE)


def test_protocol_forms_of_lisa_and_qrio():
    lisa = load_robot("Lisa")
    line = "DRIVE {WheelNumber 0} {WheelSpeed 3.14} {WheelSteer 0.75} {WheelNumber 1} {WheelSpeed -3.14} {WheelSteer 0.75}"
    assert pc.drive_commands(g.parse_command(line), "L", lisa) == [OmniDrive("L", ((0, 3.14, -0.75), (1, -3.14, -0.75)))]
    assert pm.conf_robot(lisa, "L") == ("CONF {Type GroundVehicle} {Name L} {SteeringType OmniDrive} {Mass 40.0000} "
                                        "{MaxSpeed 10.0000} {MaxTorque 30.0000} {MaxFrontSteer 3.1400} "
                                        "{MaxRearSteer 3.1400}\r\n")
    qrio = load_robot("QRIO")
    assert pm.conf_robot(qrio, "Q") == "CONF {Type LeggedRobot} {Name Q} {SteeringType TwoLegs} {Mass 7.3000}\r\n"
    assert sum(len(grp.links) for grp in qrio.joint_groups) == 22
    steer = pc.drive_commands(g.parse_command("DRIVE {Name left_front_wheel_joint} {Steer 0.2}"), "C", load_robot("Cooper"))
    assert steer == [JointTargets("C", {"left_front_wheel_joint": -0.2}, steer=True)]


def test_cmd_vel_uses_linear_y_on_lisa():
    lisa = load_robot("Lisa")
    cmd = twist_to_command("L", (0.0, 0.3, 0.0), (0.0, 0.0, 0.0), lisa.drive, (OmniDrive,), lisa.body)
    assert [round(s, 6) for _, s, _ in cmd.wheels] == [3.0, 3.0]
    assert [round(a, 6) for _, _, a in cmd.wheels] == [round(math.pi / 2, 6)] * 2


def test_mispkg_terminal_pose_over_the_protocol():
    """A pose the arm can reach (forward kinematics of a known configuration) is reached within 1 cm;
    one 5 m away answers RES Failed and moves nothing."""
    with Simulator("empty", pacing="fast", seed=5) as sim, ProtocolServer(sim, port=0, image_port=None) as srv:
        client = Client(srv.port, timeout=PATIENCE)
        client.init("INIT {ClassName USARBot.TeleMax} {Name T} {Location 0,0,0}")
        robot = sim.robot("T")
        group = robot.joint_groups["TeleMaxArm"].spec
        solver = robot.env.reach.for_robot(robot.spec)
        joints = reach.robot_joint_positions(robot)
        joints.update({group.links[0].joint: 0.4, group.links[1].joint: 1.2, group.links[3].joint: -1.0})
        target, _ = solver.end_pose(group, joints)
        x, y, z = flip_vector(target)
        client.send(f"MISPKG {{Name TeleMaxArm}} {{Location {x:.4f},{y:.4f},{z:.4f}}}\r\n")
        assert "{Type MisPkg} {Name TeleMaxArm} {Status OK}" in client.reply("RES")
        end = next(link.name for link in robot.spec.body.links if link.joint_name == group.links[-1].joint)
        deadline = time.monotonic() + PATIENCE
        while time.monotonic() < deadline:
            with sim.lock:
                pos, _ = robot.link_pose(end)
                base_pos, base_rot = robot.link_pose("base_link")
                error = float(np.linalg.norm(base_rot.T @ (pos - base_pos) - target))
                moving = any(abs(robot.joint_position(i) - t) > 1e-3 for i, t in
                             zip(robot.joint_groups["TeleMaxArm"].indices, robot.joint_groups["TeleMaxArm"].targets))
            if not moving:
                break
            time.sleep(0.2)
        assert error < 0.01
        client.send("MISPKG {Name TeleMaxArm} {Location 5,0,-1}\r\n")
        assert "{Status Failed}" in client.reply("RES")
        client.send("MISPKG {Name TeleMaxArm} {Rotation 0,0,1}\r\n")
        assert client.reply("ERR").startswith("ERR")
        client.close()


def test_solver_refuses_an_unreachable_pose_without_moving():
    with Simulator("empty") as sim:
        robot = sim.spawn("TeleMax", "T")
        before = reach.robot_joint_positions(robot)
        future = sim.submit(ReachPose("T", "TeleMaxArm", (4.0, 0.0, 1.0)))
        sim.step()
        result = future.result(timeout=PATIENCE)
        assert not result.ok and dict(result.fields)["Error"] > 1.0
        after = reach.robot_joint_positions(robot)
        assert max(abs(after[k] - before[k]) for k in before) < 1e-3
        future = sim.submit(ReachPose("T", "NoArm", (0.5, 0.0, 0.5)))
        sim.step()
        with pytest.raises(CommandError, match="no joint group"):
            future.result(timeout=PATIENCE)


def test_every_vehicle_type_has_its_drive():
    kinds = {load_robot(c).drive.type for c in ("Submarine", "Passarola", "Lisa", "QRIO", "Cooper")}
    assert kinds == {"nautic", "blimp", "omni", "legged", "ackermann"}
    with pytest.raises(CommandError):
        WheelDrive("x", math.inf, 0.0)


def test_omni_drive_normalized_scales_spin_and_steer_to_their_limits():
    with Simulator("empty", seed=1) as sim:
        lisa = sim.spawn("Lisa", "L", position=(0.0, 0.0, 0.0))
        sim.submit(OmniDrive("L", ((0, 50.0, -100.0), (1, None, 20.0)), normalized=True))
        sim.step(1)
        drive, spec = lisa.drive, lisa.spec.drive
        assert drive.speeds[0] == pytest.approx(0.5 * spec.max_wheel_speed)
        assert drive.steers[0] == pytest.approx(-spec.max_steer) and drive.steers[1] == pytest.approx(0.2 * spec.max_steer)
        assert drive.speeds[1] == 0.0  # None keeps the wheel's speed
