"""The WSS wire formats alone: control-command splitting, the registry, the link parser."""
from __future__ import annotations

from usarsim.protocol import wss_commands as wc


def test_control_commands_end_with_a_semicolon_or_a_line_end():
    splitter = wc.ControlSplitter(limit=24)
    assert splitter.feed(b"REGISTER R1 127.0.0.1;LIS") == ["REGISTER R1 127.0.0.1"]
    assert splitter.feed(b"TEN R1 6000\r\n;;  ;") == ["LISTEN R1 6000"]
    assert splitter.feed(b"\xff\xfe;" + b"x" * 40 + b";GETSS A B;") == [None, None, "GETSS A B"]


def test_every_reply_ends_with_a_line_end():
    assert wc.ok() == b"OK;\r\n"
    assert wc.fail("Unknown Message INIT") == b"Fail: Unknown Message INIT;\r\n"
    assert wc.check_signal(-61.234) == b"OK:-61.23;\r\n" and wc.check_signal(None).startswith(b"Fail")


def test_registry_rules():
    reg = wc.Registry()
    assert reg.register("R1", "127.0.0.1", owner=1) == wc.ok()
    assert reg.register("R1", "127.0.0.1", owner=1) == wc.ok()  # again, same connection
    assert reg.register("R1", "10.0.0.1", owner=1) == wc.fail("Robot with name R1 already registered")
    assert reg.register("R2", "nowhere", owner=2) == wc.fail("Invalid IP address nowhere")
    assert reg.listen("R1", "6000", owner=1) == wc.ok()
    assert reg.listen("R1", "6000", owner=1) == wc.fail("Robot with name R1 already listening at port 6000")
    assert reg.listen("R1", "70000", owner=1) == wc.fail("Invalid port 70000")
    reg.forget(1)
    assert reg.ip_of("R1") is None and not reg.listening


def test_a_name_belongs_to_the_connection_that_registered_it():
    reg = wc.Registry()
    assert reg.register("R1", "127.0.0.1", owner=1) == wc.ok()
    assert reg.register("R1", "127.0.0.1", owner=2) == wc.fail("Robot with name R1 already registered")
    assert reg.listen("R1", "6000", owner=2) == wc.fail("Robot R1 registered by another connection")
    assert reg.robots["R1"] == ("127.0.0.1", 1) and not reg.listening
    reg.forget(2)  # the other connection leaving takes nothing with it
    assert reg.ip_of("R1") == "127.0.0.1"


def test_a_robot_registers_only_the_address_it_connects_from():
    reg = wc.Registry()
    assert reg.register("R1", "10.0.0.9", owner=1, peer_ip="127.0.0.1").startswith(b"Fail: Invalid IP address 10.0.0.9")
    assert reg.register("R1", "localhost", owner=1, peer_ip="127.0.0.1") == wc.ok()
    assert reg.register("R2", "10.0.0.9", owner=2, peer_ip="10.0.0.9") == wc.ok()


def test_control_bytes_alone_are_not_a_command():
    splitter = wc.ControlSplitter()
    assert splitter.feed(b"\x1c\x1d\x1e\x1f;\x1c\n") == [None, None]


def test_link_parser_is_binary_safe_and_incremental():
    parser = wc.LinkParser(max_message=200)
    message = bytes(range(256))[:90] + b";SEND 3 x;\r\n"
    stream = wc.frame_send(message) + b"CLOSE;"
    events = []
    for byte in stream:  # one byte at a time, as TCP may deliver it
        new = parser.feed(bytes([byte]))
        if new == [wc.Send(message)]:
            assert not parser.mid_message
        events += new
    assert events == [wc.Send(message), wc.Close()]


def test_link_parser_reads_past_a_payload_it_has_no_room_for():
    room = [10]

    def admit(size: int) -> bool:
        if size > room[0]:
            return False
        room[0] -= size
        return True

    parser = wc.LinkParser(admit=admit)
    assert parser.feed(b"SEND 8 abcd") == [] and parser.reserved == 8 and parser.mid_message
    assert parser.feed(b"efgh;SEND 50 ") == [wc.Send(b"abcdefgh")] and parser.reserved == 0
    assert parser.feed(b"x" * 30) == [] and parser.mid_message and len(parser._buf) == 0  # not kept
    assert parser.feed(b"x" * 20 + b";SEND 2 ok;") == [wc.Refused(50), wc.Send(b"ok")]


def test_link_parser_skips_what_is_not_a_command():
    parser = wc.LinkParser(max_message=100)
    events = parser.feed(b"send 3 abc;SEND 500 too long;SEND x y;SEND 0 ;SEND 2 ok;")
    assert [type(e).__name__ for e in events] == ["Garbage", "Garbage", "Garbage", "Send", "Send"]
    assert events[-2:] == [wc.Send(b""), wc.Send(b"ok")]
    assert parser.feed(b"SEND 5 ab") == [] and parser.mid_message
