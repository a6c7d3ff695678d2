"""The UDK-era Wireless Simulation Server over real sockets (127.0.0.1, ephemeral ports): INIT,
GETSS, DNS, REVERSEDNS, relays through allocated ports, links dropping behind a wall."""
from __future__ import annotations

import socket

import pytest

from usarsim.protocol.udk_wss import UdkWirelessServer
from usarsim.protocol.wss import WirelessServer
from usarsim.sim.simulator import Simulator
from usarsim.sim.wireless import path_loss_dbm
from usarsim.sim.world import CommSpec
from patience import PATIENCE
from socket_helpers import LineReader, closed, receive, wait_for
from wireless_scene import scene, wall

COMM = CommSpec(cutoff=-58.0, update_rate=10.0)  # one wall or a few metres break a link


class Controller:
    """A UDK-era robot controller: a control connection and a port where it accepts relays."""

    def __init__(self, port: int) -> None:
        self.replies = LineReader(port, b"\r\n")
        self.control = self.replies.sock
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(PATIENCE)
        self.port = self.listener.getsockname()[1]

    def ask(self, line: str | bytes) -> str:
        """Send one line (``\\r\\n`` added to text), return the reply line without its ``\\r\\n``."""
        self.control.sendall(line if isinstance(line, bytes) else line.encode() + b"\r\n")
        return self.reply()

    def reply(self) -> str:
        return self.replies.line()

    def close(self) -> None:
        self.control.close()
        self.listener.close()


def dns_port(reply: str) -> int:
    assert reply.startswith("DNSREPLY "), reply
    return int(reply.split("{Port ")[1].split("}")[0])


@pytest.fixture
def world():
    sim = Simulator(scene(wall(3.0, y=6.0, length=8.0), comm=COMM), pacing="lockstep")
    udk = UdkWirelessServer(sim, port=0, init_timeout=PATIENCE)
    udk.start()
    for name, xy in (("A", (0.0, 0.0)), ("B", (4.0, 0.0))):
        sim.spawn("P2AT", name, position=xy + (0.0,))
    sim.step(1)
    a, b = Controller(udk.port), Controller(udk.port)
    yield sim, udk, a, b
    a.close()
    b.close()
    udk.stop()
    sim.close()


def join(a: Controller, b: Controller) -> None:
    assert a.ask(f"INIT {{Robot A}} {{Port {a.port}}}") == "INITREPLY {Status OK}"
    assert b.ask(f"INIT {{Robot B}} {{Port {b.port},2323}}") == "INITREPLY {Status OK}"


def test_commands_replies_and_their_errors(world):
    sim, udk, a, b = world
    assert a.ask("GETSS {Robot B}") == "ERROR {Reason Must.Use.INIT.Method.First}"
    assert a.ask("INIT {Robot A} {Port 12,x}") == "ERROR {Reason Ports.List.Must.Be.Integer}"
    assert a.ask("INIT {Port 12}") == "ERROR {Reason Robot.Name.Must.Not.Be.Empty}"
    join(a, b)
    intruder = Controller(udk.port)
    assert intruder.ask("INIT {Robot A} {Port 1}") == "ERROR {Reason Robot.Alread.Exists}"  # sic
    intruder.close()
    assert a.ask("INIT {Robot A} {Port 1}") == "ERROR {Reason Method.Unknown.Or.Can.INIT.only.once}"
    signal = sim.wireless.table.signal_between("A", "B")
    assert signal == pytest.approx(path_loss_dbm(4.0, 0, COMM), abs=0.05)
    assert a.ask("GETSS {Robot B}") == f"SS {{Robot B}} {{Strength {signal:g}}}"
    assert a.ask("GETSS {Robot A}") == "SS {Robot A} {Strength INF} {Error SS.To.Self}"
    assert a.ask("GETSS {Robot Ghost}") == "SS {Robot Ghost} {Strength NaN} {Error Robot.Does.Not.Exist}"
    assert a.ask("GETSS") == "ERROR {Reason Robot.Name.Must.Not.Be.Empty}"
    assert a.ask("DNS {Robot Ghost}") == "DNSREPLY {Robot Ghost} {Port -1} {Error NoSuchRobot}"
    assert a.ask("DNS {Robot A}") == "DNSREPLY {Robot A} {Port -1} {Error NoSuchRobot}"
    assert a.ask("DNS {Robot B} {Port 9}") == "DNSREPLY {Robot B} {Port -1} {Error RobotDoesNotListenOnThisPort}"
    assert a.ask("DNS {Robot B} {Port nine}") == "ERROR {Reason Port.Must.Be.Integer}"
    port = dns_port(a.ask("DNS {Robot B}"))
    assert dns_port(a.ask(f"DNS {{Robot B}} {{Port {b.port}}}")) == port  # the first listed port, same pair
    assert dns_port(a.ask("DNS {Robot B} {Port 2323}")) != port  # another port of B: another allocation
    assert a.ask("REVERSEDNS {Port 4000}") == "REVERSEDNSREPLY {Port 4000} {Error UnknownOrIllegalPort}"
    assert a.ask("REVERSEDNS {Port x}") == "ERROR {Reason Port.Must.Be.Integer}"
    assert a.ask("HELLO") == "ERROR {Reason Method.Unknown.Or.Can.INIT.only.once}"


def connect_through(port: int, b: Controller, message: bytes) -> tuple[socket.socket, socket.socket, int]:
    """Connect to an allocated port, let B accept, check ``message`` gets across: (caller's
    socket, B's socket, the port B sees the relay come from)."""
    to_b = socket.create_connection(("127.0.0.1", port), timeout=PATIENCE)
    at_b, (_, remote_port) = b.listener.accept()
    at_b.settimeout(PATIENCE)
    to_b.sendall(message)
    assert receive(at_b, len(message)) == message
    return to_b, at_b, remote_port


def test_two_robots_exchange_data_through_an_allocated_port(world):
    _, udk, a, b = world
    join(a, b)
    port = dns_port(a.ask("DNS {Robot B}"))
    assert udk.listening("A", "B")  # before the reply: a client may connect at once
    to_b, at_b, remote_port = connect_through(port, b, b"hello")
    assert b.ask(f"REVERSEDNS {{Port {remote_port}}}") == f"REVERSEDNSREPLY {{Port {remote_port}}} {{Robot A}}"
    payload = bytes(range(256)) * 64 + b"\r\n;{}"
    to_b.sendall(payload)
    assert receive(at_b, len(payload)) == payload  # raw bytes, no framing
    at_b.sendall(b"reply from B")
    assert receive(to_b, 12) == b"reply from B"
    assert udk.relays == [("A", "B")]
    at_b.close()
    assert closed(to_b)  # one side closing ends the relay
    wait_for(lambda: not udk.relays, "the relay to close")


def test_a_link_drops_behind_the_wall_and_the_port_listens_again_in_range(world):
    sim, udk, a, b = world
    join(a, b)
    port = dns_port(a.ask("DNS {Robot B}"))
    to_b, at_b, _ = connect_through(port, b, b"in range")
    sim.set_state("B", position=(4.0, 6.0, 0.2))  # behind the wall (x 3..3.1, y 2..10) seen from A
    sim.step(40)
    table = sim.wireless.table
    assert table.walls[table.index("A"), table.index("B")] == 1
    assert table.signal_between("A", "B") < COMM.cutoff
    assert closed(to_b) and closed(at_b)
    wait_for(lambda: not udk.listening("A", "B"), "the allocated port to stop listening")
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=PATIENCE)
    assert a.ask("GETSS {Robot B}").startswith("SS {Robot B} {Strength -")
    assert udk.stats.pairs_broken == 1
    sim.set_state("B", position=(4.0, 0.0, 0.2))
    sim.step(40)
    wait_for(lambda: udk.listening("A", "B"), "the same port to listen again")
    assert dns_port(a.ask("DNS {Robot B}")) == port
    connect_through(port, b, b"back")


def test_a_robot_that_is_not_in_the_simulation_is_kicked_out(world):
    sim, udk, a, _ = world
    assert a.ask("INIT {Robot Ghost} {Port 5}") == "INITREPLY {Status OK}"
    sim.step(40)  # link updates: the original drops robots its position poll does not see
    assert closed(a.control)
    wait_for(lambda: "Ghost" not in udk.robots, "the registration to go")
    assert udk.stats.robots_kicked == 1


def test_garbage_gets_one_error_line_each_and_disturbs_nobody(world):
    _, udk, a, b = world
    join(a, b)
    junk = Controller(udk.port)
    assert junk.ask(b"\x00\xff\xfe binary\r\n") == "ERROR {Reason Must.Use.INIT.Method.First}"
    assert junk.ask(b"\x1c\x1d\x1e\x1f\r\n") == "ERROR {Reason Must.Use.INIT.Method.First}"
    assert junk.ask(b"x" * 10000 + b"\r\n") == "ERROR {Reason Message.Too.Long}"
    assert junk.ask(b"{}}{ {{\n") == "ERROR {Reason Must.Use.INIT.Method.First}"
    junk.close()
    assert a.ask(b"\x1c\x1f\r\n") == "ERROR {Reason Method.Unknown.Or.Can.INIT.only.once}"
    assert b.ask("GETSS {Robot A}").startswith("SS {Robot A} {Strength -")


def test_idle_connections_time_out_and_the_connection_limit_holds(world):
    sim, _, _, _ = world
    udk = UdkWirelessServer(sim, port=0, init_timeout=0.3, max_sessions=2)
    udk.start()
    try:
        idle = [Controller(udk.port), Controller(udk.port)]
        third = Controller(udk.port)
        assert third.reply() == "ERROR {Reason Too.Many.Connections}"
        assert closed(third.control)
        for conn in idle:  # never sent INIT: closed, with the reason
            assert conn.reply() == "ERROR {Reason No.INIT.Within.0.3.s}"
            assert closed(conn.control)
        wait_for(lambda: udk.slots.active == 0, "the slots to free")
        late = Controller(udk.port)
        assert late.ask("INIT {Robot A} {Port 7}") == "INITREPLY {Status OK}"
        for conn in (*idle, third, late):
            conn.close()
    finally:
        udk.stop()


def test_a_udk_client_on_the_3_1_3_port_reads_an_error_line(world):
    sim, _, _, _ = world
    wss = WirelessServer(sim, port=0)
    wss.start()
    try:
        client = Controller(wss.port)
        assert client.ask("INIT {Robot A} {Port 7}") == "Fail: Unknown Message INIT;"
        client.close()
    finally:
        wss.stop()
