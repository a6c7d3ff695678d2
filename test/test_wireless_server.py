"""The Wireless Communication Server over real sockets (127.0.0.1, ephemeral ports), robots in a
lockstep simulation of walls the tests build themselves."""
from __future__ import annotations

import logging
import socket
import time

import pytest

from usarsim.protocol.server import ProtocolServer
from usarsim.protocol.wss import WirelessServer
from usarsim.protocol.wss_commands import frame_send
from usarsim.sim.commands import WheelDrive
from usarsim.sim.simulator import Simulator
from usarsim.sim.wireless import path_loss_dbm
from usarsim.sim.world import CommSpec
from socket_helpers import LineReader, closed, receive, wait_for
from wireless_scene import scene, wall
from patience import PATIENCE

# A cut-off that one wall and a few metres break, so robots can drive out of range in seconds.
COMM = CommSpec(cutoff=-58.0, update_rate=10.0)


class Radio:
    """A robot controller: a control connection to the WSS and a port where it accepts its links."""

    def __init__(self, wss: WirelessServer, name: str, source: str = "127.0.0.1") -> None:
        self.name = name
        self.replies = LineReader(wss.port, b";\r\n", source)
        self.control = self.replies.sock
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(PATIENCE)
        self.port = self.listener.getsockname()[1]
        self.joined = False

    def ask(self, command: str | bytes) -> str:
        """Send one control command, return the reply (up to and including its ';')."""
        self.control.sendall(command if isinstance(command, bytes) else command.encode() + b";")
        return self.reply()

    def reply(self) -> str:
        """The next reply, which ends with ';' and a line end (the line end is not returned)."""
        return self.replies.line() + ";"

    def join(self) -> None:
        assert self.ask(f"REGISTER {self.name} 127.0.0.1") == "OK;"
        assert self.ask(f"LISTEN {self.name} {self.port}") == "OK;"
        self.joined = True

    def link(self) -> socket.socket:
        """The link connection the WSS opened to this robot."""
        conn, _ = self.listener.accept()
        conn.settimeout(PATIENCE)
        return conn

    def close(self) -> None:
        self.control.close()
        self.listener.close()


def open_link(a: Radio, b: Radio) -> tuple[socket.socket, socket.socket]:
    """a opens a link to b; returns (a's link socket, b's link socket)."""
    for radio in (a, b):
        if not radio.joined:
            radio.join()
    assert a.ask(f"OPEN {b.name} {b.port} {a.name} {a.port}") == "OK;"
    return a.link(), b.link()


@pytest.fixture
def world():
    sim = Simulator(scene(wall(3.0, y=6.0, length=8.0), comm=COMM), pacing="lockstep")
    wss = WirelessServer(sim, port=0)
    wss.start()
    robots = {name: sim.spawn("P2AT", name, position=xy + (0.0,), rpy=(0.0, 0.0, 1.5708))
              for name, xy in (("A", (0.0, 0.0)), ("B", (4.0, 0.0)), ("C", (0.0, -2.0)), ("D", (4.0, -2.0)))}
    sim.step(1)
    radios = {name: Radio(wss, name) for name in robots}
    yield sim, wss, radios
    for radio in radios.values():
        radio.close()
    wss.stop()
    sim.close()


def test_control_commands_and_their_failures(world):
    sim, wss, radios = world
    a, b = radios["A"], radios["B"]
    assert a.ask("REGISTER A") == "Fail: Incorrect Message;"
    assert a.ask("REGISTER A not-an-ip") == "Fail: Invalid IP address not-an-ip;"
    assert a.ask("register A 127.0.0.1") == "OK;"  # command words are case-insensitive
    assert a.ask("REGISTER A 127.0.0.1") == "OK;"  # again from the same address
    assert b.ask("REGISTER A 127.0.0.1") == "Fail: Robot with name A already registered;"
    assert a.ask("LISTEN Nobody 4000") == "Fail: Robot Nobody not registered;"
    assert a.ask("LISTEN A port") == "Fail: Invalid port port;"
    assert a.ask(f"Listen A {a.port}") == "OK;"
    assert a.ask(f"LISTEN A {a.port}") == f"Fail: Robot with name A already listening at port {a.port};"
    assert a.ask("OPEN B 4000 A") == "Fail: Incorrect Message;"
    assert a.ask(f"OPEN B {b.port} A 1") == f"Fail: B not listening on port {b.port};"
    assert a.ask(f"OPEN B {b.port} A {a.port}") == "Fail: Robot B not registered;"
    signal = sim.wireless.table.signal_between("A", "B")
    assert signal == pytest.approx(path_loss_dbm(4.0, 0, COMM), abs=0.05)
    assert a.ask("getss A B") == f"OK:{signal:.2f};"
    assert a.ask("GETSS A Ghost") == "Fail: Could not calculate signal strength;"
    elsewhere = Radio(wss, "B", source="127.0.0.2")  # B and C run on another address than A
    assert elsewhere.ask("REGISTER B 127.0.0.2") == "OK;" and elsewhere.ask("REGISTER C 127.0.0.2") == "OK;"
    assert a.ask("GETSS B C") == "Fail: Server does not accept third party requests;"
    elsewhere.close()
    assert a.ask("SEND 3 abc") == "Fail: Unknown Message SEND;"  # SEND belongs on a link
    assert a.ask("FOO bar") == "Fail: Unknown Message FOO;"


def test_send_is_binary_safe_ordered_and_close_ends_both(world):
    _, wss, radios = world
    a, b = radios["A"], radios["B"]
    link_a, link_b = open_link(a, b)
    assert wss.links == [("B", "A")]
    payloads = [b"hello", b"semi;colons;\r\n", bytes(range(256)), b"", b"SEND 3 abc;"]
    link_a.sendall(b"".join(frame_send(x) for x in payloads) + b"send 2 no;")  # lower case: not a SEND
    link_a.sendall(frame_send(b"last"))
    expected = b"".join(payloads) + b"last"
    assert receive(link_b, len(expected)) == expected
    link_b.sendall(frame_send(b"back at you"))
    assert receive(link_a, 11) == b"back at you"
    link_b.sendall(b"CLOSE;")
    assert closed(link_a) and closed(link_b)
    assert wss.links == []


def test_link_drops_when_a_robot_drives_behind_the_wall(world):
    sim, wss, radios = world
    a, b = radios["A"], radios["B"]
    link_a, link_b = open_link(a, b)
    link_a.sendall(frame_send(b"in range"))
    assert receive(link_b, 8) == b"in range"
    sim.submit(WheelDrive("B", 4.0, 4.0))  # B faces west (+y): it drives behind the wall at x 3..3.1
    for _ in range(1000):
        sim.step(20)
        if not sim.wireless.table.reachable("A", "B"):
            break
    table = sim.wireless.table
    assert table.walls[table.index("A"), table.index("B")] == 1 and table.signal_between("A", "B") < COMM.cutoff
    assert closed(link_a) and closed(link_b)  # both ends are told: their link is closed
    assert a.ask(f"OPEN B {b.port} A {a.port}") == "Fail: Cannot connect to B;"
    assert a.ask("GETSS A B").startswith("OK:-")


def test_send_below_the_cut_off_is_dropped_and_closes_the_link(world):
    sim, wss, radios = world
    a, b = radios["A"], radios["B"]
    link_a, link_b = open_link(a, b)
    sim.wireless.remove_listener(wss._on_table)  # link updates would close it first: check SEND alone
    sim.remove("B")  # gone from the radio world
    sim.step(1)
    link_a.sendall(frame_send(b"lost"))
    assert closed(link_b) and closed(link_a)
    assert wss.stats.dropped_signal == 1 and wss.stats.delivered == 0


def test_two_links_at_once_and_a_sender_that_disconnects_mid_message(world):
    _, wss, radios = world
    ab_a, ab_b = open_link(radios["A"], radios["B"])
    cd_c, cd_d = open_link(radios["C"], radios["D"])
    for i in range(50):
        ab_a.sendall(frame_send(b"ab%03d" % i))
        cd_c.sendall(frame_send(b"cd%03d" % i))
    assert receive(ab_b, 250) == b"".join(b"ab%03d" % i for i in range(50))
    assert receive(cd_d, 250) == b"".join(b"cd%03d" % i for i in range(50))
    cd_c.sendall(b"SEND 100 only part of it")
    cd_c.close()
    assert closed(cd_d)  # the partial message is discarded and the link closed
    ab_b.sendall(frame_send(b"still here"))
    assert receive(ab_a, 10) == b"still here"
    assert radios["C"].ask("GETSS C D").startswith("OK:-")


def test_garbage_on_the_port_gets_a_fail_and_disturbs_nothing(world):
    _, wss, radios = world
    a, b = radios["A"], radios["B"]
    link_a, link_b = open_link(a, b)
    junk = socket.create_connection(("127.0.0.1", wss.port), timeout=PATIENCE)
    junk.sendall(b"\x00\xff\xfe binary;" + b"x" * 5000 + b";\r\n;;  ;HELLO;")
    replies = b""
    while replies.count(b";\r\n") < 3:
        replies += junk.recv(4096)
    assert replies.split(b";\r\n")[:3] == [b"Fail: Unknown Message (not text, or longer than 1024 bytes)"] * 2 + \
        [b"Fail: Unknown Message HELLO"]
    junk.close()
    link_a.sendall(b"\x07\x07 garbage on a link;" + frame_send(b"fine"))
    assert receive(link_b, 4) == b"fine"
    assert a.ask("GETSS A B").startswith("OK:-")


def test_a_slow_receiver_loses_messages_but_blocks_nobody(world):
    sim, _, radios = world
    wss = WirelessServer(sim, port=0, queue_bytes=64 * 1024)
    wss.start()
    try:
        slow = {n: Radio(wss, n) for n in ("A", "B", "C", "D")}
        a_link, b_link = open_link(slow["A"], slow["B"])
        c_link, d_link = open_link(slow["C"], slow["D"])
        b_link.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        chunk = frame_send(b"x" * 60000)
        for _ in range(200):  # 12 MB at a receiver that never reads: the sender is never blocked
            a_link.sendall(chunk)
            c_link.sendall(frame_send(b"ping"))
            assert receive(d_link, 4) == b"ping"
        deadline = time.monotonic() + PATIENCE
        while wss.stats.dropped_full == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert wss.stats.dropped_full > 0
        for radio in slow.values():
            radio.close()
    finally:
        wss.stop()


def test_comstation_over_the_text_protocol_relays_for_the_wss(world):
    sim, wss, radios = world
    sim.remove("C")
    sim.remove("D")
    protocol = ProtocolServer(sim, port=0, image_port=None, run_simulator=False)
    protocol.start()
    try:
        station = socket.create_connection(("127.0.0.1", protocol.port), timeout=PATIENCE)
        reader = station.makefile("rb")
        reader.readline()  # NFO
        station.sendall(b"INIT {ClassName USARBot.ComStation} {Name Relay} {Location 3.05,-4,-2.5}\r\n")
        deadline = time.monotonic() + PATIENCE
        while "Relay" not in sim.wireless.stations and time.monotonic() < deadline:
            time.sleep(0.01)
        station.sendall(b"GETGEO {Type ComStation}\r\nGETCONF {Type ComStation}\r\nDRIVE {Left 1} {Right 1}\r\n")
        assert reader.readline() == b"GEO {Type ComStation} {Name Relay} {Location 3.0500,-4.0000,-2.5000}\r\n"
        assert reader.readline().startswith(b"CONF {Type ComStation} {Name Relay} {ePdo -49.6700} {eDo 2.0000}")
        assert reader.readline().startswith(b"ERR {Command DRIVE}")
        twin = socket.create_connection(("127.0.0.1", protocol.port), timeout=PATIENCE)
        twin_reader = twin.makefile("rb")
        twin_reader.readline()  # NFO
        twin.sendall(b"INIT {ClassName USARBot.ComStation} {Name Relay} {Location 0,0,0}\r\n")
        assert twin_reader.readline() == b"ERR {Command INIT} {Reason a_ComStation_named_'Relay'_already_exists}\r\n"
        twin_reader.close()
        twin.close()
        sim.step(1)
        assert sim.wireless.table.route("A", "B") == ("A", "B")
        sim.submit(WheelDrive("B", 4.0, 4.0))  # behind the wall; the station on its mast sees over it
        for _ in range(200):
            sim.step(20)
            if not sim.wireless.table.direct("A", "B"):
                break
        sim.step(1)
        assert sim.wireless.table.route("A", "B") == ("A", "Relay", "B")
        link_a, link_b = open_link(radios["A"], radios["B"])
        link_a.sendall(frame_send(b"relayed"))
        assert receive(link_b, 7) == b"relayed"
        reader.close()
        station.close()  # the station leaves with its connection; the link goes with it
        deadline = time.monotonic() + PATIENCE
        while "Relay" in sim.wireless.stations and time.monotonic() < deadline:
            time.sleep(0.01)
        assert "Relay" not in sim.wireless.stations
        sim.step(1)
        assert closed(link_a) and closed(link_b)
    finally:
        protocol.stop()


def test_connections_that_never_register_time_out_and_the_limit_holds(world):
    sim, _, _ = world
    wss = WirelessServer(sim, port=0, register_timeout=0.3, max_sessions=3)
    wss.start()
    try:
        idle = [Radio(wss, f"I{i}") for i in range(3)]
        refused = Radio(wss, "X")
        assert refused.reply() == "Fail: Too many connections (at most 3);"
        for radio in idle:  # said nothing: closed with the reason, the slot freed
            assert radio.reply() == "Fail: No REGISTER within 0.3 s;"
            assert closed(radio.control)
        wait_for(lambda: wss.slots.active == 0, "the slots to free")
        late = Radio(wss, "A")
        late.join()  # a robot that registers in time stays
        assert late.ask("GETSS A B").startswith("OK:-")
        for radio in (*idle, refused, late):
            radio.close()
    finally:
        wss.stop()


def test_a_registration_cannot_be_taken_over_by_another_connection(world):
    _, wss, radios = world
    a, b = radios["A"], radios["B"]
    a.join()
    assert b.ask("REGISTER A 127.0.0.1") == "Fail: Robot with name A already registered;"
    assert b.ask(f"LISTEN A {b.port}") == "Fail: Robot A registered by another connection;"
    assert wss.registry.listening == {("A", a.port): wss.registry.robots["A"][1]}
    b.control.close()  # B leaving takes nothing of A's
    b.replies = LineReader(wss.port, b";\r\n")
    b.control = b.replies.sock
    b.join()
    link_a, link_b = open_link(a, b)
    link_a.sendall(frame_send(b"still A"))
    assert receive(link_b, 7) == b"still A"


def test_open_connects_only_to_the_robots_own_controllers(world):
    sim, _, _ = world
    protocol_port = socket.create_server(("127.0.0.1", 0))  # stands for the simulator's protocol port
    wss = WirelessServer(sim, port=0, reserved_ports={protocol_port.getsockname()[1]})
    wss.start()
    try:
        a, b = Radio(wss, "A"), Radio(wss, "B")
        assert a.ask("REGISTER A 10.0.0.7").startswith("Fail: Invalid IP address 10.0.0.7 (a robot registers")
        a.join()
        assert b.ask("REGISTER B 127.0.0.1") == "OK;"
        door = protocol_port.getsockname()[1]
        assert b.ask(f"LISTEN B {door}") == "OK;"
        assert a.ask(f"OPEN B {door} A {a.port}") == f"Fail: Invalid port {door} (a port of the simulator);"
        assert a.ask(f"OPEN B {wss.port} A {a.port}") == f"Fail: Invalid port {wss.port} (a port of the simulator);"
        protocol_port.settimeout(0.2)
        with pytest.raises(socket.timeout):
            protocol_port.accept()  # nothing was let through
        a.close()
        b.close()
    finally:
        wss.stop()
        protocol_port.close()


def test_half_sent_messages_hold_at_most_the_buffer_budget(world):
    sim, _, _ = world
    budget = 256 * 1024
    wss = WirelessServer(sim, port=0, buffer_bytes=budget)
    wss.start()
    try:
        radios = {n: Radio(wss, n) for n in ("A", "B", "C", "D")}
        ab_a, ab_b = open_link(radios["A"], radios["B"])
        cd_c, cd_d = open_link(radios["C"], radios["D"])
        ab_a.sendall(b"SEND 200000 " + b"x" * 1000)  # admitted: 200 000 bytes reserved
        wait_for(lambda: wss.buffered == 200000, "the first SEND to be admitted")
        cd_c.sendall(b"SEND 200000 " + b"y" * 200000 + b";")  # no room left: read past, never held
        cd_c.sendall(frame_send(b"ping"))
        assert receive(cd_d, 4) == b"ping"
        assert wss.stats.dropped_memory == 1 and wss.buffered == 200000
        ab_a.close()  # a message cut off half way gives its reservation back
        assert closed(ab_b)
        wait_for(lambda: wss.buffered == 0, "the reservation to be released")
        for radio in radios.values():
            radio.close()
    finally:
        wss.stop()


def test_control_bytes_alone_get_a_fail_not_a_traceback(world, caplog):
    _, wss, radios = world
    a = radios["A"]
    assert a.ask(b"\x1c\x1d\x1e\x1f;") == "Fail: Unknown Message (not text, or longer than 1024 bytes);"
    assert a.ask(b"\x1c;") == "Fail: Unknown Message (not text, or longer than 1024 bytes);"
    a.join()
    assert not [r for r in caplog.records if r.exc_info]


def test_garbage_on_a_link_logs_a_bounded_amount(world, caplog):
    _, wss, radios = world
    link_a, link_b = open_link(radios["A"], radios["B"])
    caplog.set_level(logging.WARNING, logger="usarsim.protocol.wss")
    link_a.sendall(b"junk!;" * 5000 + frame_send(b"after"))
    assert receive(link_b, 5) == b"after"  # every piece of garbage was read before it
    warnings = [r for r in caplog.records if r.name == "usarsim.protocol.wss" and r.levelno == logging.WARNING]
    assert 1 <= len(warnings) <= 10
