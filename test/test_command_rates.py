"""A commanded turn holds whatever rate the command is repeated at: Nav2's controller sends cmd_vel at
20 Hz, teleop tools at 10, a script once. Each robot here gets the same twist at its own rate and
heading, all in one world; the yaw rate it makes must be within 5 % of the command."""
import pytest

from usarsim.ros.commands import twist_to_command
from usarsim.sim.simulator import Simulator

TURN = 0.5  # rad/s
RATES = (1.0, 20.0, 50.0, 100.0)  # Hz of repeated, identical commands
HEADINGS = (0.0, 0.7, 1.6, 2.4)  # rad, one per rate: the yaw loop must not depend on either
SETTLE, MEASURE = 2.0, 2.0  # s of sim time


@pytest.mark.parametrize("class_name", ["P2AT", "Kenaf"])
def test_turn_rate_holds_at_every_command_rate_and_heading(class_name):
    with Simulator("empty", pacing="lockstep", noise=False) as sim:
        robots = []
        for i, (rate, heading) in enumerate(zip(RATES, HEADINGS)):
            robot = sim.spawn(class_name, f"R{i}", position=(6.0 * i, 0.0, 0.0), rpy=(0.0, 0.0, heading))
            robots.append((robot, 1.0 / rate))
        due = [0.0] * len(robots)
        made = [0.0] * len(robots)
        ticks = 0
        while sim.time < SETTLE + MEASURE:
            for i, (robot, period) in enumerate(robots):
                if sim.time >= due[i] - 1e-9:
                    spec = robot.spec
                    sim.submit(twist_to_command(robot.name, (0.0, 0.0, 0.0), (0.0, 0.0, TURN), spec.drive,
                                                robot.drive.accepts, spec.body))
                    due[i] += period
            sim.step(1)
            if sim.time > SETTLE:
                ticks += 1
                for i, (robot, _) in enumerate(robots):
                    made[i] += sim.ground_truth(robot.name).angular_velocity[2]
        for (robot, period), total in zip(robots, made):
            assert total / ticks == pytest.approx(TURN, rel=0.05), (robot.name, f"{1.0 / period:g} Hz")
