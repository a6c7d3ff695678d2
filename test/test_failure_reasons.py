"""A failed SET says why: ``RES ... {Status Failed} {Reason ...}``, after the manual's fields."""
from __future__ import annotations

import pytest

from protocol_client import Client
from usarsim.protocol import grammar as g
from usarsim.protocol.server import ProtocolServer
from usarsim.sim.simulator import Simulator


@pytest.fixture(scope="module")
def sim():
    with Simulator("yellow", pacing="realtime") as simulator:
        yield simulator


def reply(server: ProtocolServer, *lines: str) -> str:
    client = Client(server.port)
    try:
        for line in lines[:-1]:
            client.init(line)
        client.send(lines[-1] + "\r\n")
        return client.reply("RES")
    finally:
        client.close()


def test_camera_of_a_robot_that_is_not_there(sim):
    with ProtocolServer(sim, port=0, image_port=0) as server:
        line = reply(server, "SET {Type Camera} {Robot R9} {Client 127.0.0.5}")
    message = g.parse_message(line)
    assert (message.get("Type"), message.get("Status")) == ("Camera", "Failed")  # the manual's fields unchanged
    assert line.endswith("{Status Failed} {Reason no_robot_named_'R9'_(robots:_none_yet)}"), line


def test_camera_without_an_image_server(sim):
    with ProtocolServer(sim, port=0, image_port=None) as server:
        line = reply(server, "SET {Type Camera} {Robot R1}")
    assert "{Status Failed} {Reason this_server_has_no_image_server" in line


def test_camera_name_without_a_robot_and_unknown_camera(sim):
    with ProtocolServer(sim, port=0, image_port=0) as server:
        anonymous = reply(server, "SET {Type Camera} {Name Camera} {Client 127.0.0.6}")
        assert "{Reason no_robot_to_take_camera_'Camera'_from" in anonymous
        line = reply(server, "INIT {ClassName USARBot.P2AT} {Name Why1} {Start Start1}",
                     "SET {Type Camera} {Robot Why1} {Name Nope}")
    assert "{Status Failed} {Reason robot_'Why1'_has_no_camera_named_'Nope'}" in line


def test_device_refusal_reaches_the_wire_and_success_has_no_reason(sim):
    with ProtocolServer(sim, port=0, image_port=None) as server:
        client = Client(server.port)
        try:
            client.init("INIT {ClassName USARBot.P2AT} {Name Why2} {Start Start2}")
            client.send("SET {Type Camera} {Name Camera} {Opcode PanTilt} {Params left,up}\r\n")
            failed = client.reply("RES")
            client.send("SET {Type Odometry} {Opcode Reset}\r\n")
            ok = client.reply("RES")
        finally:
            client.close()
    assert "{Status Failed} {Reason PanTilt_needs_numbers" in failed
    assert "{Status OK}" in ok and "Reason" not in ok
