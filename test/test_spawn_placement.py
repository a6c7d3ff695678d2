"""Spawning where USARSim clients spawn: every robot at every start pose stands still on the floor;
locations over no floor or inside geometry are refused; a robot that falls out of the world is removed."""
import math

import pybullet as p
import pytest

from usarsim.protocol import frames
from usarsim.sim.catalogue import available_robots
from usarsim.sim.commands import CommandError
from usarsim.sim.readings import RobotLost
from usarsim.sim.robot import spawn_height
from usarsim.sim.simulator import Simulator
from usarsim.sim.world import FALL_LIMIT, SPAWN_HEIGHT, available_worlds

SETTLE, HOLD = 1.0, 5.0  # s: time to land, then time it must stay put


# The humanoid balances on PD-held joints only at the default 200 Hz (at 100 Hz it folds up).
NEEDS_DEFAULT_RATE = {"QRIO"}


@pytest.mark.slow  # 24 classes x 3 starts x 7 worlds x 6 s of sim time: most of the suite's CPU
@pytest.mark.parametrize("world", available_worlds())
@pytest.mark.parametrize("rate", [100.0, 200.0])
def test_every_robot_stays_on_the_floor_at_every_start_pose(world, rate):
    classes = [c for c in available_robots() if (c in NEEDS_DEFAULT_RATE) == (rate == 200.0)]
    with Simulator(world, physics_rate=rate) as sim:
        for class_name in classes:
            # every start pose has room for every robot, the 4.3 m road vehicles included; the 6.5 m
            # submarine gets INIT's clear refusal where it would overlap a wall or its neighbour
            robots = []
            for pose in sim.spec.start_poses:
                try:
                    robots.append((sim.spawn(class_name, f"{class_name}_{pose.tag}", start=pose.tag).name, pose))
                except CommandError as exc:
                    assert class_name == "Submarine" and "inside" in str(exc), (class_name, pose.tag, exc)
            # ... but at some start pose of every world (the submarine too) it is let in
            assert robots, f"{class_name} was refused at every start pose of {world}"
            sim.run_for(SETTLE)
            landed = {name: sim.ground_truth(name).position for name, _ in robots}
            sim.run_for(HOLD)
            for name, pose in robots:
                now = sim.ground_truth(name).position
                # standing on the floor of its start: its lowest point there, give or take the suspension
                # (base_link's height: ground truth is the centre of mass, above it on a blimp or a boat)
                resting = spawn_height(sim.robot(name).spec, pose.xyz[2], clearance=0.0)
                base_z = float(sim.robot(name).link_pose("base_link")[0][2])
                assert abs(base_z - resting) < 0.08, (name, base_z - resting)
                assert math.dist(now, landed[name]) < 0.05, (name, landed[name], now)  # and not moving
                sim.remove(name)


def test_init_at_the_manual_location_stands_on_the_floor():
    with Simulator("yellow") as sim:
        manual = (4.5, 1.9, 1.8)  # USARSim coordinates of the manual's yellow start (§9.4)
        floor = sim.world.floor_below(4.5, -1.9, 0.0)
        assert floor == pytest.approx(-1.8 - SPAWN_HEIGHT, abs=1e-6)
        robot = sim.spawn("P2DX", "R1", position=frames.flip_vector(manual))
        start = sim.ground_truth(robot.name).position
        assert -1.8 - start[2] <= 0.2 + 1e-9  # it appears at most 0.2 m above where it ends up
        sim.run_for(2.0)
        end = sim.ground_truth(robot.name).position
        assert math.dist(start[:2], end[:2]) < 0.02 and abs(start[2] - end[2]) < 0.05


def test_locations_over_no_floor_or_inside_geometry_are_refused():
    with Simulator("yellow") as sim:
        with pytest.raises(CommandError, match="no floor"):
            sim.spawn("P2AT", position=(100.0, 100.0, 0.0))
        wall = next(s for s in sim.spec.static if s.name == "W1")
        with pytest.raises(CommandError, match="inside box 'W1'"):
            sim.spawn("P2AT", position=(wall.xyz[0], wall.xyz[1], sim.spec.floor.z + 0.2))
        assert sim.robots == {}  # nothing was left behind


def test_a_robot_that_falls_out_of_the_world_is_reported_and_removed():
    with Simulator("yellow") as sim:
        robot = sim.spawn("P2AT", "Faller")
        # put it over the void beside the arena's floor slab: it falls
        p.resetBasePositionAndOrientation(robot.body_id, (40.0, 40.0, sim.spec.floor.z), (0, 0, 0, 1),
                                          physicsClientId=sim.client)
        lost = []
        for _ in range(40):
            lost += [r for r in sim.run_for(0.25) if isinstance(r, RobotLost)]
            if lost:
                break
        assert [r.robot for r in lost] == ["Faller"] and "Faller" not in sim.robots
        assert lost[0].position[2] < sim.spec.floor.z - FALL_LIMIT
