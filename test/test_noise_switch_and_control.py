"""The core's no-noise switch, and what the simulation_interfaces services rest on: props from a URDF,
teleporting entities, resetting and pausing."""
import json
import math

import pytest

from usarsim.cli import main
from usarsim.sim.commands import CommandError, WheelDrive
from usarsim.sim.readings import EncoderReading, GroundTruthReading, InsReading, OdometryReading, RangeReading, RangeScan
from usarsim.sim.simulator import Simulator
from usarsim import rotations

COMPARED = (RangeScan, RangeReading, InsReading, EncoderReading, OdometryReading)
BOX = """<robot name="box"><link name="box"><inertial><mass value="1"/>
<inertia ixx="0.02" iyy="0.02" izz="0.02" ixy="0" ixz="0" iyz="0"/></inertial>
<collision><geometry><box size="0.3 0.3 0.3"/></geometry></collision></link></robot>"""


def drive_readings(seed: int, noise: bool) -> list:
    with Simulator("yellow", seed=seed, noise=noise) as sim:
        sim.spawn("P2AT", "bot")
        sim.submit(WheelDrive("bot", 2.0, 1.5))
        return [r for r in sim.step(400) if isinstance(r, COMPARED)]


def test_noise_off_reads_the_same_whatever_the_seed():
    assert drive_readings(1, noise=True) != drive_readings(2, noise=True), "noise on: the seed matters"
    assert drive_readings(1, noise=False) == drive_readings(2, noise=False), "noise off: no random draw is left"


def test_noise_off_ins_reads_the_true_attitude():
    with Simulator("yellow", noise=False) as sim:
        sim.spawn("P2AT", "bot")
        sim.submit(WheelDrive("bot", 2.0, -2.0))
        readings = sim.step(300)
    ins = [r for r in readings if isinstance(r, InsReading)][-1]
    truth = next(r for r in readings if isinstance(r, GroundTruthReading) and r.time == ins.time)
    assert ins.rpy[2] == pytest.approx(rotations.euler_from_quaternion(truth.orientation)[2], abs=1e-6)


def test_run_command_no_noise(tmp_path):
    outputs = []
    for seed in ("1", "2"):
        path = tmp_path / f"run{seed}.jsonl"
        assert main(["run", "--world", "yellow", "--duration", "0.5", "--seed", seed, "--no-noise", "-o", str(path)]) == 0
        outputs.append([json.loads(line) for line in path.read_text().splitlines()
                        if json.loads(line)["type"] in ("Sonar", "RangeScanner", "INS")])
    assert outputs[0] and outputs[0] == outputs[1]


def test_props_set_state_reset_and_pause():
    with Simulator("empty", pacing="fast") as sim:
        sim.spawn("P2AT", "bot")
        sim.step(5)
        sim.spawn_prop("box", BOX, (2.0, 0.0, 0.5))
        with pytest.raises(CommandError, match="already exists"):
            sim.spawn_prop("bot", BOX, (0.0, 0.0, 1.0))
        with pytest.raises(CommandError, match="not found"):
            sim.spawn_prop("other", "/nowhere/thing.urdf", (0.0, 0.0, 1.0))
        sim.step(200)
        position, _, _, _ = sim.entity_state("box")
        assert position[2] == pytest.approx(0.15, abs=0.02), "the prop fell onto the floor"
        sim.set_state("bot", position=(3.0, 3.0, 0.3), orientation=(0.0, 0.0, math.sin(0.5), math.cos(0.5)))
        sim.step(1)
        assert sim.ground_truth("bot").position[:2] == pytest.approx((3.0, 3.0), abs=0.01)
        sim.spawn("P2AT", "late")
        sim.reset()
        assert sim.entity_names() == ["bot"] and sim.time == 0.0
        assert sim.ground_truth("bot").position[:2] == pytest.approx(sim.spec.start_poses[0].xyz[:2], abs=0.01)
        sim.play()
        assert sim.playing
        sim.stop()
        paused = sim.time
        assert not sim.playing and sim.time == paused


def test_serve_has_the_no_noise_switch():
    from usarsim.cli import build_parser

    assert build_parser().parse_args(["serve", "--no-noise"]).noise is False
    assert build_parser().parse_args(["serve"]).noise is True
