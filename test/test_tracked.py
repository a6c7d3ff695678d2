"""Tracked robots: rows of rollers as tracks, flippers as a joint group, climbing (lockstep, empty world)."""
from __future__ import annotations

import math

import pybullet as p
import pytest

from fleet_worlds import add_step
from usarsim import rotations
from usarsim.sim.catalogue import load_robot
from usarsim.sim.commands import Flip, JointTargets, WheelDrive
from usarsim.sim.drives.tracked import TrackedDrive, roller_spin_scales
from usarsim.sim.readings import JointStateReading, MissionPackageState, OdometryReading
from usarsim.sim.simulator import Simulator

TRACKED = ["Kenaf", "Tarantula", "Talon", "TeleMax", "Rugbot"]
FLIPPER_JOINTS = ["FRFlipper", "FLFlipper", "RRFlipper", "RLFlipper"]
# the Rugbot's two front flipper tracks turn on one axle: one joint
WITH_FLIPPERS = {"Kenaf": FLIPPER_JOINTS, "Tarantula": FLIPPER_JOINTS, "TeleMax": FLIPPER_JOINTS, "Rugbot": ["FFlipper"]}
# Stair of worlds-and-robots.md c.1 (stair_rise 0.18 m, stair_run 0.28 m), its steps with arena friction.
STAIR_RISE, STAIR_RUN = 0.18, 0.28
KENAF_CLIMBING_POSE = {"FRFlipper": 0.5, "FLFlipper": 0.5, "RRFlipper": -0.2, "RLFlipper": -0.2}


def yaw(sim: Simulator, name: str) -> float:
    return rotations.euler_from_quaternion(sim.ground_truth(name).orientation)[2]


def test_roller_spin_scales_give_one_belt_speed():
    scales = roller_spin_scales(0.1, [0.1, 0.05, 0.08])
    assert scales == pytest.approx([1.0, 2.0, 1.25])
    # surface speed = spin * radius is the same on every roller
    assert [s * r for s, r in zip(scales, [0.1, 0.05, 0.08])] == pytest.approx([0.1] * 3)


@pytest.mark.parametrize("class_name", TRACKED)
def test_catalogue_entry_is_a_tracked_robot(class_name):
    spec = load_robot(class_name)
    assert spec.drive.type == "tracked"
    radii = {w.joint: w.radius for w in spec.body.wheels}
    assert set(spec.drive.left_wheels) <= set(radii) and set(spec.drive.right_wheels) <= set(radii)
    assert len(spec.drive.left_wheels) == len(spec.drive.right_wheels) >= 2
    # DRIVE's spin refers to the sprocket, which is one of the rollers
    assert spec.drive.wheel_radius in {radii[j] for j in spec.drive.left_wheels}


@pytest.mark.parametrize("class_name, joints", WITH_FLIPPERS.items())
def test_flippers_are_a_joint_group_with_the_spec_limits(class_name, joints):
    spec = load_robot(class_name)
    group = next(g for g in spec.joint_groups if g.kind == "flippers")
    assert group.name == "Flippers" and [link.joint for link in group.links] == joints
    for link in group.links:  # spec a.3 proposal: +-pi, 1.0 rad/s
        assert (link.min, link.max) == pytest.approx((-math.pi, math.pi), abs=1e-3)
        assert link.max_speed == pytest.approx(1.0)


@pytest.mark.parametrize("class_name", TRACKED)
def test_drives_forward_turns_left_and_reports_its_sensors(class_name):
    with Simulator("empty", seed=4) as sim:
        robot = sim.spawn(class_name, "R")
        assert isinstance(robot.drive, TrackedDrive)
        for sensor in robot.sensors:
            if hasattr(sensor, "active"):
                sensor.active = True  # cameras render only when asked
        readings = sim.run_for(0.3)
        start = sim.ground_truth("R").position
        spin = 0.5 * robot.spec.drive.max_wheel_speed
        sim.submit(WheelDrive("R", spin, spin))
        readings += sim.run_for(1.5)
        moved = sim.ground_truth("R").position
        ideal = spin * robot.spec.drive.wheel_radius * 1.5
        assert 0.6 * ideal < moved[0] - start[0] < 1.1 * ideal
        assert abs(moved[1] - start[1]) < 0.1 * ideal
        seen = {r.sensor for r in readings}
        missing = {s.name for s in robot.sensors} - seen
        assert not missing, f"{class_name}: no readings from {sorted(missing)}"
        sim.submit(WheelDrive("R", -spin, spin))
        before = yaw(sim, "R")
        sim.run_for(0.5)
        turned = math.atan2(math.sin(yaw(sim, "R") - before), math.cos(yaw(sim, "R") - before))
        assert turned > 0.1  # counter-clockwise seen from above = left


def test_rollers_of_a_track_share_one_belt_speed():
    with Simulator("empty") as sim:
        robot = sim.spawn("Kenaf", "R")
        sim.submit(WheelDrive("R", 4.0, 4.0))
        sim.run_for(0.2)
        radii = {w.joint: w.radius for w in robot.spec.body.wheels}
        for joint in robot.spec.drive.left_wheels:
            spin = p.getJointState(robot.body_id, robot.joint_index(joint), physicsClientId=sim.client)[1]
            if joint.startswith("front"):  # flipper rollers in the air turn freely at their target
                assert spin * radii[joint] == pytest.approx(0.4, rel=0.05)


def test_kenaf_odometry_follows_the_tracks():
    with Simulator("empty", seed=1) as sim:
        sim.spawn("Kenaf", "R")
        sim.run_for(0.3)
        start = sim.ground_truth("R").position[0]
        sim.submit(WheelDrive("R", 4.0, 4.0))
        readings = sim.run_for(2.0)
        odo = [r for r in readings if isinstance(r, OdometryReading)][-1]
        truth = [r for r in readings if r.sensor == "GroundTruth" and r.time <= odo.time + 1e-9][-1]
        assert odo.x == pytest.approx(truth.position[0] - start, rel=0.1, abs=0.03)


def test_flippers_obey_limits_and_speed_and_take_group_or_joint_names():
    with Simulator("empty") as sim:
        robot = sim.spawn("Kenaf", "R")
        group = robot.joint_groups["Flippers"]
        sim.submit(JointTargets("R", {"FRFlipper": 4.0, "Flippers:2": -9.0, "RRFlipper": 0.6}))
        readings = sim.run_for(0.5)
        assert group.targets[0] == pytest.approx(math.pi, abs=1e-3)  # clamped to the limit
        assert group.targets[1] == pytest.approx(-math.pi, abs=1e-3)
        positions, velocities, _ = group.state()
        # 1.0 rad/s at most: after 0.5 s no flipper has turned more than 0.5 rad
        assert abs(positions[0]) <= 0.5 + 0.02 and abs(positions[1]) <= 0.5 + 0.02
        assert positions[0] > 0.4 and positions[1] < -0.4  # but they do move at about that speed
        assert max(abs(v) for v in velocities) <= 1.0 + 0.02
        readings += sim.run_for(1.0)
        positions, _, _ = group.state()
        assert positions[2] == pytest.approx(0.6, abs=0.02)  # reached its target
        assert positions[0] <= math.pi + 1e-3
        mis = [r for r in readings if isinstance(r, MissionPackageState) and r.package == "Flippers"]
        assert mis and mis[-1].links == (1, 2, 3, 4)
        joints = [r for r in readings if isinstance(r, JointStateReading)][-1]
        assert set(FLIPPER_JOINTS) <= set(joints.names)


def test_flip_puts_an_upturned_tracked_robot_back_on_its_tracks():
    with Simulator("empty") as sim:
        sim.spawn("Kenaf", "R", position=(0.0, 0.0, 0.3), rpy=(math.pi, 0.0, 0.7))
        sim.run_for(1.0)
        roll = rotations.euler_from_quaternion(sim.ground_truth("R").orientation)[0]
        assert abs(abs(roll) - math.pi) < 0.3  # lying on its back
        sim.submit(Flip("R"))
        sim.run_for(1.0)
        roll, pitch, heading = rotations.euler_from_quaternion(sim.ground_truth("R").orientation)
        assert abs(roll) < 0.05 and abs(pitch) < 0.05
        assert heading == pytest.approx(0.7, abs=0.05)  # keeps its heading


def _climb(class_name: str, flippers: dict[str, float], steps: int, seconds: float) -> tuple[float, float]:
    """Drive at half speed toward a stair of ``steps`` steps 1 m ahead; return (x, rise of the chassis)."""
    with Simulator("empty", seed=1) as sim:
        for k in range(steps):  # each step a box from its front edge to the stair's far end
            add_step(sim, front=1.0 + k * STAIR_RUN, length=3.0 - k * STAIR_RUN, top=STAIR_RISE * (k + 1))
        robot = sim.spawn(class_name, "R", position=(0.0, 0.0, 0.0))
        if flippers:
            sim.submit(JointTargets("R", flippers))
        sim.run_for(1.0)
        z0 = sim.ground_truth("R").position[2]
        spin = 0.5 * robot.spec.drive.max_wheel_speed
        sim.submit(WheelDrive("R", spin, spin))
        sim.run_for(seconds)
        end = sim.ground_truth("R").position
        return float(end[0]), float(end[2] - z0)


def test_kenaf_in_climbing_pose_climbs_stairs_a_p2at_cannot():
    x, rise = _climb("Kenaf", KENAF_CLIMBING_POSE, steps=2, seconds=6.0)
    assert x > 1.0 + STAIR_RUN and rise == pytest.approx(2 * STAIR_RISE, abs=0.03)  # on top of the second step
    x, rise = _climb("P2AT", {}, steps=2, seconds=6.0)
    assert x < 1.0 and abs(rise) < 0.03  # stopped at the first riser


# Stairs ST1 of the `red` arena in the world frame (worlds/red.yaml: arena x 2.0..3.12, y 6.4..7.6, moved by the
# placement (0, -4.6, -1.988)): first riser at x 2.0, landing x 3.12..4.32 with its top 0.72 m above the floor.
RED_FLOOR, RED_RISER, RED_LANDING, RED_STAIR_Y = -1.988, 2.0, (3.12, 4.32), 2.4
# docs/robots.md "Stairs": (robot's x in the world -> flipper targets); the first entry is set before driving.
TELEMAX_STAIRS = [(-1.0, {"FRFlipper": 0.7, "FLFlipper": 0.7, "RRFlipper": -0.6, "RLFlipper": -0.6}),
                  (RED_RISER, {"FRFlipper": 0.0, "FLFlipper": 0.0}),   # on the first nosing: front tracks along the flight
                  (3.4, {"RRFlipper": 0.0, "RLFlipper": 0.0})]         # on the landing: level


def test_telemax_climbs_the_stairs_of_red_with_its_flipper_sequence():
    with Simulator("red", seed=1) as sim:
        robot = sim.spawn("TeleMax", "T", position=(1.0, RED_STAIR_Y, RED_FLOOR))
        pending = list(TELEMAX_STAIRS)
        sim.submit(JointTargets("T", pending.pop(0)[1]))
        sim.run_for(0.8)
        z0 = sim.ground_truth("T").position[2]
        spin = 0.2 * robot.spec.drive.max_wheel_speed  # 0.26 m/s
        sim.submit(WheelDrive("T", spin, spin))
        while sim.time < 14.0:
            sim.run_for(0.1)
            x = sim.ground_truth("T").position[0]
            while pending and x >= pending[0][0]:
                sim.submit(JointTargets("T", pending.pop(0)[1]))
            if x >= 3.6:  # stop on the landing, before the flight down
                sim.submit(WheelDrive("T", 0.0, 0.0))
                break
        sim.run_for(1.5)
        end = sim.ground_truth("T")
    roll, pitch, _ = rotations.euler_from_quaternion(end.orientation)
    assert not pending and RED_LANDING[0] + 0.3 < end.position[0] < RED_LANDING[1] - 0.3
    assert end.position[2] - z0 == pytest.approx(0.72, abs=0.03)  # standing on the landing
    assert abs(roll) < 0.1 and abs(pitch) < 0.1  # upright


# docs/robots.md "Rugbot over a step": a 0.10 m step 1 m behind the robot, crossed rear first with the
# flipper stretched out level (it trails as a tail, so the robot cannot go over backwards).
RUGBOT_STEP, RUGBOT_STEP_EDGE = 0.10, 1.0
RUGBOT_TAIL, RUGBOT_STOWED = {"FFlipper": 0.0}, {"FFlipper": 1.57}


def _rugbot_reverses_onto_the_step(flipper: dict[str, float]) -> tuple[float, float, float, float]:
    """Back the Rugbot at 30 % speed onto the step; return (x, rise of the chassis, roll, pitch) at the end."""
    with Simulator("empty", seed=1) as sim:
        add_step(sim, front=RUGBOT_STEP_EDGE, length=3.0, top=RUGBOT_STEP)
        robot = sim.spawn("Rugbot", "R", position=(0.0, 0.0, 0.0), rpy=(0.0, 0.0, math.pi))  # rear toward the step
        sim.submit(JointTargets("R", flipper))
        sim.run_for(2.0)
        z0 = sim.ground_truth("R").position[2]
        spin = -0.3 * robot.spec.drive.max_wheel_speed
        sim.submit(WheelDrive("R", spin, spin))
        while sim.time < 14.0 and sim.ground_truth("R").position[0] < RUGBOT_STEP_EDGE + 0.35:
            sim.run_for(0.25)
        sim.submit(WheelDrive("R", 0.0, 0.0))
        sim.run_for(1.0)
        end = sim.ground_truth("R")
    roll, pitch, _ = rotations.euler_from_quaternion(end.orientation)
    return float(end.position[0]), float(end.position[2] - z0), roll, pitch


def test_rugbot_crosses_a_10cm_step_with_its_flipper_as_a_tail_and_not_without():
    x, rise, roll, pitch = _rugbot_reverses_onto_the_step(RUGBOT_TAIL)
    assert x > RUGBOT_STEP_EDGE + 0.3 and rise == pytest.approx(RUGBOT_STEP, abs=0.01)  # on top of the step
    assert abs(roll) < 0.05 and abs(pitch) < 0.05  # upright
    x, _, roll, _ = _rugbot_reverses_onto_the_step(RUGBOT_STOWED)
    assert x < RUGBOT_STEP_EDGE and abs(roll) > 3.0  # flipper folded up: over on its back in front of the step
