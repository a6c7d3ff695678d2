"""Mission packages as joint chains of the catalogue: TalonArm, TeleMaxArm, pan-tilt mounts, the gripper."""
from __future__ import annotations

import math

import numpy as np
import pybullet as p
import pytest

from usarsim.sim.urdf import generate_urdf
from usarsim.sim.catalogue import load_robot
from usarsim.sim.commands import CommandError, JointTargets, SensorCommand
from usarsim.sim.readings import MissionPackageState
from usarsim.sim.simulator import Simulator

OWN_ROBOTS = ["Kenaf", "Tarantula", "Talon", "TeleMax", "Rugbot"]


def link_position(robot, link: str) -> np.ndarray:
    return robot.link_pose(link)[0]


@pytest.mark.parametrize("class_name", OWN_ROBOTS)
def test_joint_groups_match_the_body_chain(class_name):
    spec = load_robot(class_name)
    links = {link.joint_name: link for link in spec.body.links}
    for group in spec.joint_groups:
        for member in group.links:
            assert member.joint in links, f"{group.name}: no body link for {member.joint}"
            body = links[member.joint]
            assert body.joint_type == member.type
            if member.type != "continuous" and member.min <= member.max:
                # the URDF limits (PyBullet enforces them) agree with the group's command limits
                assert (body.lower, body.upper) == pytest.approx((member.min, member.max))


@pytest.mark.parametrize("class_name", OWN_ROBOTS)
def test_shipped_urdf_is_generated_from_the_catalogue(class_name):
    spec = load_robot(class_name)
    assert spec.urdf_path.read_text(encoding="utf-8") == generate_urdf(spec), f"run `usarsim urdf {class_name}`"


def test_telemax_arm_is_a_seven_link_chain_with_a_telescope():
    spec = load_robot("TeleMax")
    arm = next(g for g in spec.joint_groups if g.name == "TeleMaxArm")
    assert arm.kind == "mission_package"
    assert [link.type for link in arm.links] == ["revolute", "revolute", "prismatic", "revolute", "revolute",
                                                  "revolute", "continuous"]
    parents = {link.name: link.parent for link in spec.body.links}
    children = {link.joint_name: link.name for link in spec.body.links}
    chain = [children[link.joint] for link in arm.links]
    for parent, child in zip(chain, chain[1:]):  # each link hangs from the previous one
        assert parents[child] == parent


@pytest.fixture(scope="module")
def telemax():
    with Simulator("empty", seed=5) as sim:
        robot = sim.spawn("TeleMax", "T")
        sim.run_for(0.2)
        yield sim, robot


def test_telemax_arm_starts_folded_in_the_manual_pose(telemax):
    _, robot = telemax
    positions, _, _ = robot.joint_groups["TeleMaxArm"].state()
    assert positions == pytest.approx([0.0, 2.0, 0.0, -2.0, 0.0, 0.0, 0.0], abs=0.02)


def test_telemax_telescope_extends_in_metres_at_its_speed(telemax):
    sim, robot = telemax
    arm = robot.joint_groups["TeleMaxArm"]
    before = link_position(robot, "telemax_lower_arm") - link_position(robot, "telemax_upper_arm")
    sim.submit(JointTargets("T", {"TeleMaxArm:3": 0.3}))
    sim.run_for(1.0)
    positions, _, _ = arm.state()
    link = arm.spec.links[2]
    assert positions[2] <= link.max_speed * 1.0 + 0.01  # m/s limit
    sim.run_for(3.0)
    positions, _, _ = arm.state()
    assert positions[2] == pytest.approx(0.3, abs=0.01)
    after = link_position(robot, "telemax_lower_arm") - link_position(robot, "telemax_upper_arm")
    assert np.linalg.norm(after) - np.linalg.norm(before) == pytest.approx(0.3, abs=0.01)
    sim.submit(JointTargets("T", {"TeleMaxArm:3": 5.0}))  # beyond the telescope's travel
    sim.step(1)
    assert arm.targets[2] == pytest.approx(link.max)


def test_telemax_turret_pans_the_arm(telemax):
    sim, robot = telemax
    arm = robot.joint_groups["TeleMaxArm"]
    sim.submit(JointTargets("T", {"TeleMaxArm:1": 0.5}))
    readings = sim.run_for(3.5)
    positions, _, _ = arm.state()
    assert positions[0] == pytest.approx(0.5, abs=0.02)
    tip = link_position(robot, "telemax_gripper_palm") - link_position(robot, "telemax_turret")
    assert math.atan2(tip[1], tip[0]) == pytest.approx(0.5, abs=0.05)  # arm now points 0.5 rad to the left
    mis = [r for r in readings if isinstance(r, MissionPackageState) and r.package == "TeleMaxArm"][-1]
    assert mis.links == tuple(range(1, 8)) and mis.values[0] == pytest.approx(positions[0], abs=0.02)


@pytest.fixture(scope="module")
def talon():
    with Simulator("empty", seed=6) as sim:
        robot = sim.spawn("Talon", "T")
        sim.run_for(0.2)
        yield sim, robot


def test_talon_arm_moves_within_speed_and_limits(talon):
    sim, robot = talon
    arm = robot.joint_groups["TalonArm"]
    sim.submit(JointTargets("T", {"TalonArm:1": 9.0}))  # MISPKG {Link 1} {Value 9}: beyond its range
    sim.run_for(1.0)
    assert arm.targets[0] == pytest.approx(arm.spec.links[0].max)
    positions, velocities, _ = arm.state()
    assert 0.1 < positions[0] <= arm.spec.links[0].max_speed * 1.0 + 0.02
    assert abs(velocities[0]) <= arm.spec.links[0].max_speed + 0.01
    # order 1 (speed) is clamped to the link's max speed too
    sim.submit(JointTargets("T", {"TalonArm:3": 2.0}, order=1))
    sim.run_for(1.0)
    _, velocities, _ = arm.state()
    assert velocities[2] == pytest.approx(arm.spec.links[2].max_speed, abs=0.01)
    sim.submit(JointTargets("T", {"TalonArm:3": 0.0}, order=1))
    sim.step(1)


def test_gripper_grasps_lifts_and_releases_an_object(talon):
    sim, robot = talon
    gripper = robot.effecters["Gripper"]
    sim.submit(JointTargets("T", {"TalonArm:1": 2.2, "TalonArm:2": 1.6, "TalonArm:3": 0.0}))
    ok = sim.submit(SensorCommand("T", device="Gripper", opcode="Open", params=(3.0,)))
    sim.run_for(14.0)
    assert ok.result().ok and ok.result().fields == (("Open", pytest.approx(1.57)),)  # clamped to MaxAngle
    assert gripper.opening() == pytest.approx(1.57, abs=0.02)
    _grasp_lift_and_drop(sim, robot, close=SensorCommand("T", device="Gripper", opcode="Close"),
                         open_=SensorCommand("T", device="Gripper", opcode="Open", params=(1.0,)))


def test_gripper_group_commands_grasp_and_release_like_its_opcodes():
    # the ROS bridge's Gripper/command topic and MISPKG drive the finger joints, not the Open opcode
    def fingers(opening: float) -> JointTargets:
        return JointTargets("T", {"Gripper:1": opening / 2, "Gripper:2": opening / 2})

    with Simulator("empty", seed=6) as sim:
        robot = sim.spawn("Talon", "T")
        sim.submit(JointTargets("T", {"TalonArm:1": 2.2, "TalonArm:2": 1.6, "TalonArm:3": 0.0}))
        sim.submit(fingers(1.57))
        sim.run_for(14.0)
        assert robot.effecters["Gripper"].opening() == pytest.approx(1.57, abs=0.02)
        _grasp_lift_and_drop(sim, robot, close=fingers(0.0), open_=fingers(1.0))


def _grasp_lift_and_drop(sim, robot, close, open_) -> None:
    """With the arm low and the gripper open: grasp a box between the fingers, lift it, drop it."""
    gripper = robot.effecters["Gripper"]
    # a 4 cm box on a pedestal between the open fingers
    palm_pos, palm_rot = robot.link_pose("talon_gripper_palm")
    centre = palm_pos + palm_rot @ np.array([0.10, 0.0, 0.0])
    c = sim.client
    box = p.createMultiBody(0.1, p.createCollisionShape(p.GEOM_BOX, halfExtents=[0.02] * 3, physicsClientId=c),
                            basePosition=centre.tolist(), physicsClientId=c)
    p.createMultiBody(0, p.createCollisionShape(p.GEOM_BOX, halfExtents=[0.03, 0.03, centre[2] / 2 - 0.01],
                                                physicsClientId=c),
                      basePosition=[centre[0], centre[1], centre[2] / 2 - 0.03], physicsClientId=c)
    sim.run_for(0.3)
    sim.submit(close)
    sim.run_for(1.5)
    assert gripper.grasped == box
    assert 0.0 < gripper.opening() < 1.0  # stopped on the box, not closed through it
    resting = p.getBasePositionAndOrientation(box, physicsClientId=c)[0][2]
    sim.submit(JointTargets("T", {"TalonArm:1": 1.8}))
    sim.run_for(3.0)
    lifted = p.getBasePositionAndOrientation(box, physicsClientId=c)[0][2]
    assert lifted > resting + 0.1  # carried by the arm
    sim.submit(open_)
    sim.run_for(1.5)
    assert gripper.grasped is None
    assert p.getBasePositionAndOrientation(box, physicsClientId=c)[0][2] < lifted - 0.1  # dropped


def test_gripper_refuses_bad_opcodes_and_values(talon):
    sim, _ = talon
    results = [sim.submit(SensorCommand("T", device="Gripper", opcode=op, params=params))
               for op, params in (("Squeeze", ()), ("Open", ("wide",)), ("Open", ("nan",)))]
    sim.step(1)
    assert [r.result().ok for r in results] == [False, False, False]
    with pytest.raises(CommandError):  # a NaN number never reaches the simulator
        SensorCommand("T", device="Gripper", opcode="Open", params=(float("nan"),))


def test_gripper_fingers_are_a_mission_package_too(talon):
    sim, _ = talon
    readings = sim.run_for(0.4)
    mis = [r for r in readings if isinstance(r, MissionPackageState) and r.package == "Gripper"]
    assert mis and mis[-1].links == (1, 2)


def test_kenaf_pan_tilt_camera_follows_multidrive_and_camera_commands():
    with Simulator("empty") as sim:
        robot = sim.spawn("Kenaf", "K")
        camera = robot.sensor("Camera")
        # MULTIDRIVE {kenafCameraPan 1.0} {kenafCameraTilt 0.3}: joint names straight from the manual
        sim.submit(JointTargets("K", {"kenafCameraPan": 1.0, "kenafCameraTilt": 0.3}))
        sim.run_for(6.5)
        _, rot = robot.mount_pose(camera.spec.mount)
        assert math.atan2(rot[1, 0], rot[0, 0]) == pytest.approx(1.0, abs=0.03)  # looks 1 rad to the left
        assert rot[2, 0] == pytest.approx(-math.sin(0.3), abs=0.03)  # and tilted down
        result = sim.submit(SensorCommand("K", device="Camera", opcode="PanTilt", params=(0.0, 0.0)))
        sim.run_for(6.5)
        assert result.result().ok
        _, rot = robot.mount_pose(camera.spec.mount)
        assert rot[0, 0] == pytest.approx(1.0, abs=1e-3)  # back to straight ahead
