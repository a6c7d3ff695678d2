"""TRACE: the robot's trail at the given interval and colour, as readings and in `usarsim run` output."""
import io
import json

import pytest

from usarsim.runner import Scenario, run_scenario
from usarsim.sim.commands import CommandError, SetTrace, WheelDrive
from usarsim.sim.readings import TracePoint
from usarsim.sim.simulator import Simulator


def test_trace_drops_points_at_the_interval_in_its_colour_and_keeps_the_trail():
    with Simulator("empty") as sim:
        robot = sim.spawn("P2AT", "T")
        sim.submit(WheelDrive("T", 3.0, 3.0))
        assert [r for r in sim.run_for(1.0) if isinstance(r, TracePoint)] == []  # off until asked
        sim.submit(SetTrace("T", True, 0.5, "Cyan"))
        points = [r for r in sim.run_for(2.0) if isinstance(r, TracePoint)]
        assert [round(p.time - points[0].time, 3) for p in points] == [0.0, 0.5, 1.0, 1.5]
        assert {p.color for p in points} == {"Cyan"} and [p.index for p in points] == [0, 1, 2, 3]
        assert points[-1].position[0] > points[0].position[0] + 0.3  # it follows the robot north
        assert robot.trace.points == [p.position for p in points]
        sim.submit(SetTrace("T", False))
        assert [r for r in sim.run_for(1.0) if isinstance(r, TracePoint)] == []
        assert len(robot.trace.points) == 4  # the trail is kept


def test_trace_refuses_bad_values():
    with pytest.raises(CommandError, match="interval"):
        SetTrace("T", True, -1.0)
    with pytest.raises(CommandError, match="colour"):
        SetTrace("T", True, 1.0, "Pink")


def test_run_output_has_trace_records():
    out = io.StringIO()
    run_scenario(Scenario(world="empty", duration=1.0, drive=(2.0, 2.0), trace=(0.25, "Blue")), out)
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    trace = [r for r in records if r["type"] == "Trace"]
    assert len(trace) == 4 and trace[0]["values"]["color"] == "Blue" and len(trace[0]["values"]["position"]) == 3
