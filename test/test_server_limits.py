"""Bounded resources of the protocol server and the simulator: memory, threads, queues, idle and stalled clients."""
from __future__ import annotations

import logging
import socket
import threading
import time

import pytest

from patience import PATIENCE
from test_protocol_server import Client
from usarsim.protocol.server import ProtocolServer
from usarsim.sim.commands import WheelDrive
from usarsim.sim.simulator import Simulator


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def test_spawn_remove_cycles_keep_memory_flat():
    # Loading and removing a P2AT leaked ~33 kB inside PyBullet per cycle (+13 MB over these 400).
    with Simulator("yellow", pacing="lockstep") as sim:
        def cycle() -> None:
            robot = sim.spawn("P2AT", position=(2.0, 2.0, 0.0))
            sim.step(2)
            sim.remove(robot.name)

        for _ in range(100):
            cycle()
        before = rss_mb()
        for _ in range(400):
            cycle()
        assert rss_mb() - before < 4.0


def test_reused_body_drives_like_a_fresh_one():
    def drive(warm_up: bool) -> tuple[float, ...]:
        with Simulator("empty", pacing="lockstep", seed=2) as sim:
            if warm_up:  # a robot that was spawned, driven and removed leaves its body for the next one
                other = sim.spawn("P2AT", position=(5.0, 5.0, 0.0))
                sim.submit(WheelDrive(other.name, 3.0, -3.0))
                sim.step(100)
                sim.remove(other.name)
                sim.step(450)  # parked meanwhile (and put back in place twice)
            robot = sim.spawn("P2AT", "R", position=(0.0, 0.0, 0.0))
            sim.submit(WheelDrive(robot.name, 2.0, 1.5))
            sim.step(400)
            truth = sim.ground_truth("R")
            return (*truth.position, *truth.orientation)

    assert drive(True) == pytest.approx(drive(False), abs=1e-6)


@pytest.fixture
def server_factory():
    made: list[tuple[ProtocolServer, Simulator]] = []

    def make(world: str = "empty", pacing: str = "fast", **options) -> ProtocolServer:
        sim = Simulator(world, pacing=pacing, seed=1)
        server = ProtocolServer(sim, port=0, image_port=None, **options)
        server.start()
        made.append((server, sim))
        return server

    yield make
    for server, sim in made:
        server.stop()
        sim.close()


def test_connect_init_disconnect_cycles_keep_threads_bounded(server_factory):
    server = server_factory()

    def cycles(n: int) -> None:
        for i in range(n):
            client = Client(server.port)
            client.init(f"INIT {{ClassName USARBot.P2AT}} {{Location {i % 5},2,0}}")
            client.close()
        deadline = time.monotonic() + PATIENCE
        while (server.connections or server.sim.robots) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert server.connections == 0 and not server.sim.robots

    cycles(5)  # the event loop's executor starts its few workers
    threads_before = threading.active_count()
    cycles(40)
    assert threading.active_count() <= threads_before + 2  # nothing per connection is left running


def test_reply_flood_disconnects_with_a_reason(server_factory, caplog):
    server = server_factory(reply_limit=64 * 1024)
    reader = Client(server.port)
    flooder = socket.socket()
    flooder.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connect: a small window from the start
    flooder.settimeout(60.0)  # a loaded machine may take a while to read the flood; the loop below is bounded
    flooder.connect(("127.0.0.1", server.port))
    try:
        reader.init("INIT {ClassName USARBot.P2AT} {Location 2,2,0}")
        caplog.set_level(logging.WARNING, logger="usarsim.protocol.server")
        line = b"GETSTARTPOSES\r\n" * 200
        with pytest.raises(OSError):  # the server drops the flooder once its unread replies pass the limit
            for _ in range(5000):
                flooder.sendall(line)
        # the reason is logged by the server's thread, maybe just after the socket was reset
        deadline = time.monotonic() + PATIENCE
        while not any("replies unread" in r.getMessage() for r in caplog.records):
            assert time.monotonic() < deadline, "the disconnect was not logged with its reason"
            time.sleep(0.02)
        reader.wait(lambda l: l.startswith("STA "))  # the other client is served on
    finally:
        flooder.close()
        reader.close()


def test_connections_without_init_are_closed_so_others_can_connect(server_factory):
    server = server_factory(max_connections=2, init_timeout=0.5)
    idle = [Client(server.port), Client(server.port)]
    refused = Client(server.port)
    assert refused.line().startswith("ERR {Command CONNECT}")
    for client in idle:
        client.line()  # NFO
        assert "INIT" in client.reply("ERR")  # told why, then closed
        with pytest.raises(ConnectionError):
            client.line()
    late = Client(server.port)
    assert late.line().startswith("NFO ")
    late.init("INIT {ClassName USARBot.P2AT} {Location 2,2,0}")
    for client in [*idle, refused, late]:
        client.close()


def lockstep_session(lines: int) -> tuple[float, list[str]]:
    """(sim time before any INIT, the first ``lines`` lines) of a fresh lockstep server."""
    with Simulator("yellow", pacing="lockstep", seed=7) as sim:
        with ProtocolServer(sim, port=0, image_port=None) as server:
            client = Client(server.port)
            client.line()
            time.sleep(0.3)  # a connected client that has not sent INIT yet
            idle_time = sim.time
            client.send("INIT {ClassName USARBot.P2AT} {Name R} {Start Start1}\r\n")
            got = [client.line() for _ in range(lines)]
            client.close()
    return idle_time, got


def test_lockstep_clock_starts_at_the_first_init_and_lines_repeat():
    first_idle, first = lockstep_session(150)
    second_idle, second = lockstep_session(150)
    assert first_idle == second_idle == 0.0
    assert first == second


def test_lockstep_stalled_client_does_not_freeze_the_world(server_factory):
    server = server_factory(world="yellow", pacing="lockstep", lockstep_stall=0.3)
    stalled, live = Client(server.port), Client(server.port)
    try:
        stalled.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stalled.send("INIT {ClassName USARBot.P2AT} {Location 4,-2,0}\r\n")  # and never reads again
        live.init("INIT {ClassName USARBot.P2AT} {Location 6,-2,0}")
        t0 = server.sim.time
        deadline = time.monotonic() + PATIENCE
        while server.sim.time < t0 + 20.0 and time.monotonic() < deadline:
            live.line()
        assert server.sim.time >= t0 + 20.0  # far more than the stalled client's buffers hold
    finally:
        stalled.close()
        live.close()


HUGE = "9" * 5000
BAD_LINES = [
    f"DRIVE {{Left {HUGE}}} {{Right 1}}",
    "DRIVE {Left 1e300} {Right 1}",
    "DRIVE {Left nan} {Right 1}",
    f"DRIVE {{Name FRFlipper}} {{Order {HUGE}}} {{Value 1}}",
    "DRIVE {Name camera_pan_joint} {Order 0} {Value 1e300}",
    "MULTIDRIVE {camera_pan_joint 1e300}",
    "MULTIDRIVE {camera_pan_joint }",
    f"MISPKG {{Name CameraPanTilt}} {{Link {HUGE}}} {{Value 0}}",
    "MISPKG {Name CameraPanTilt} {Link 1} {Value -1e300}",
    "MISPKG {Name CameraPanTilt} {Link 1e300} {Value 0}",
    "SET {Type INS} {Name INS} {Opcode POSE} {Params 1e300,0,0,0,0,0}",
    "SET {Type INS} {Name INS} {Opcode POSE} {Params }",
    f"SET {{Type Joint}} {{Name camera_pan_joint}} {{Opcode Angle}} {{Params {HUGE}}}",
    "SET {Type Camera} {Name Camera} {FOV 1e300}",
    "CAMERA {Rotation 1e300,0,0}",
    "CAMERA {Rotation ,,}",
    f"CAMERA {{Zoom {HUGE}}}",
    "TRACE {On true} {Interval 1e300}",
]


def failed(reply: str) -> bool:
    return reply.startswith("ERR ") or (reply.startswith("RES ") and "Failed" in reply)


def test_huge_and_empty_values_on_every_command_fail_clearly(server_factory, caplog):
    server = server_factory(world="yellow")
    client = Client(server.port)
    try:
        client.line()
        client.init("INIT {ClassName USARBot.P2AT} {Location 2,2,0}")
        caplog.set_level(logging.WARNING)
        for line in BAD_LINES:
            client.send(line + "\r\n")
            reply = client.wait(lambda l: l.startswith(("ERR ", "RES ")))
            assert failed(reply), (line[:60], reply)
        assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
    finally:
        client.close()


@pytest.mark.parametrize("location", ["4.5,1e300,0", "1000,0,0", "0,-1000,0", "0,0,-5000", "nan,0,0", "", "1,2",
                                      f"{HUGE},0,0", "1,2,3,4"])
def test_init_outside_the_world_or_malformed_is_refused(server_factory, location):
    server = server_factory(world="yellow")
    client = Client(server.port)
    try:
        client.line()
        client.send(f"INIT {{ClassName USARBot.P2AT}} {{Location {location}}}\r\n")
        assert client.reply("ERR").startswith("ERR {Command INIT}")
        assert not server.sim.robots
    finally:
        client.close()
