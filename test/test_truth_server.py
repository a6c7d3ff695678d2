"""The ground-truth (USARTruth) server against known poses, over 127.0.0.1."""
from __future__ import annotations

import math

import pytest

from usarsim.protocol import truth_wire as tw
from usarsim.protocol.truth_server import TruthServer
from usarsim.sim.simulator import Simulator
from usarsim.sim.victims import VictimSpec
from usarsim.sim.world_geometry import ObstacleSpec
from socket_helpers import LineReader, closed
from wireless_scene import scene

BOX_URDF = """<robot name="crate"><link name="base"><inertial><mass value="1"/>
<inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial>
<collision><geometry><box size="0.4 0.4 0.4"/></geometry></collision></link></robot>"""


class TruthClient(LineReader):
    def __init__(self, port: int) -> None:
        super().__init__(port, b"\r\n")

    def ask(self, request: bytes) -> list[str]:
        """Send a request, return the answer's lines up to (not including) {End}."""
        self.sock.sendall(request)
        lines = []
        while (line := self.line()) != "{End}":
            lines.append(line)
        return lines


def fields(line: str) -> dict[str, str]:
    return {k: v for k, _, v in (seg.partition(" ") for seg in line.strip("{}").split("} {"))}


def vector(text: str) -> tuple[float, ...]:
    return tuple(float(v) for v in text.split(","))


@pytest.fixture
def world():
    spec = scene(victims=[VictimSpec("V1", (5.0, 1.0, 0.0), yaw=0.5)],
                 obstacles=[ObstacleSpec("box", (2.0, -3.0, 0.03), name="brick")])
    sim = Simulator(spec, pacing="lockstep")
    sim.spawn("P2AT", "R1", position=(1.0, 2.0, 0.0), rpy=(0.0, 0.0, 1.0))
    sim.spawn("P2AT", "R2", position=(-3.0, 0.0, 0.0))
    sim.spawn_prop("crate", BOX_URDF, (0.0, -6.0, 0.2))
    sim.step(20)
    truth = TruthServer(sim, port=0)
    truth.start()
    yield sim, truth
    truth.stop()
    sim.close()


def test_every_robot_victim_and_object_at_its_true_pose(world):
    sim, truth = world
    client = TruthClient(truth.port)
    robots = [fields(line) for line in client.ask(b"{Class USARBot.P2AT}\r\n")]
    assert [r["Name"] for r in robots] == ["R1", "R2"] and {r["Class"] for r in robots} == {"P2AT"}
    for row in robots:
        exact = sim.ground_truth(row["Name"])
        x, y, z = vector(row["Location"])
        assert (x, -y, -z) == pytest.approx(exact.position, abs=1e-4)  # SAE: y and z flipped
        assert float(row["Time"]) == pytest.approx(sim.time, abs=1e-4)
    assert vector(robots[0]["Location"])[:2] == pytest.approx((1.0, -2.0), abs=0.02)
    assert vector(robots[0]["Rotation"])[2] == pytest.approx(-1.0, abs=0.02)
    everything = {fields(line)["Name"]: fields(line) for line in client.ask(b"{Class Actor}\r\n")}
    assert set(everything) == {"R1", "R2", "V1", "brick", "crate"}
    victim = everything["V1"]
    assert victim["Class"] == "Victim"
    assert vector(victim["Location"]) == (5.0, -1.0, 0.0) and vector(victim["Rotation"])[2] == -0.5
    assert vector(everything["brick"]["Location"])[:2] == pytest.approx((2.0, 3.0), abs=0.01)
    assert vector(everything["crate"]["Location"])[:2] == pytest.approx((0.0, 6.0), abs=0.01)
    assert everything["crate"]["Class"] == "Prop" and everything["brick"]["Class"] == "Obstacle"


def test_requests_by_name_class_default_and_unknown(world):
    _, truth = world
    client = TruthClient(truth.port)
    assert [fields(x)["Name"] for x in client.ask(b"\r\n{Class Pawn}\n")] == ["R1", "R2"]
    assert [fields(x)["Name"] for x in client.ask(b"GET {name R2}\r\n")] == ["R2"]  # no class: robots
    assert [fields(x)["Name"] for x in client.ask(b"{class victim} {name V1}\r\n")] == ["V1"]
    assert client.ask(b"{Class USARPhysObj.partc}\r\n") == []
    assert client.ask(b"{Name nobody}\r\n") == []
    assert client.ask(b"x" * 5000 + b"\r\n") == ["{Error Request.Longer.Than.1024.Bytes}"]
    garbage = client.ask(b"\x00\xff\x1c{Class\r\n")  # no complete {...}: as if nothing was asked
    assert [fields(x)["Name"] for x in garbage] == ["R1", "R2"]


def test_idle_connections_time_out_and_the_limit_holds(world):
    sim, _ = world
    truth = TruthServer(sim, port=0, idle_timeout=0.3, max_clients=2)
    truth.start()
    try:
        idle = [TruthClient(truth.port), TruthClient(truth.port)]
        extra = TruthClient(truth.port)
        assert extra.line() == "{Error Too.Many.Connections.(at.most.2)}" and extra.line() == "{End}"
        for client in idle:
            assert closed(client.sock)  # by the server
        late = TruthClient(truth.port)
        assert [fields(x)["Name"] for x in late.ask(b"{Name R1}\r\n")] == ["R1"]
    finally:
        truth.stop()


def test_rotation_and_location_lines_parse_like_the_original_client():
    thing = tw.Thing("P3AT_0", ("P3AT", "Pawn", "Actor"), 29.97391, (0.67, 2.3, -0.00001), (-0.0, 0.46, math.pi))
    assert tw.format_thing(thing) == (b"{Name P3AT_0} {Class P3AT} {Time 29.9739} {Location 0.6700,2.3000,0.0000} "
                                      b"{Rotation 0.0000,0.4600,3.1416}\r\n")
    assert tw.parse_request("  {class USARPhysObj.partc} {name part_c_5}  ") == tw.Request("USARPhysObj.partc",
                                                                                         "part_c_5")
