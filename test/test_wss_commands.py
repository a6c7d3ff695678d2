"""The WSS wire formats alone: control-command splitting, the registry, the link parser."""
from __future__ import annotations

from usarsim.protocol import wss_commands as wc


def test_control_commands_end_with_a_semicolon_or_a_line_end():
    splitter = wc.ControlSplitter(limit=24)
    assert splitter.feed(b"REGISTER R1 127.0.0.1;LIS") == ["REGISTER R1 127.0.0.1"]
    assert splitter.feed(b"TEN R1 6000\r\n;;  ;") == ["LISTEN R1 6000"]
    assert splitter.feed(b"\xff\xfe;" + b"x" * 40 + b";GETSS A B;") == [None, None, "GETSS A B"]


def test_registry_rules():
    reg = wc.Registry()
    assert reg.register("R1", "127.0.0.1", owner=1) == b"OK;"
    assert reg.register("R1", "127.0.0.1", owner=2) == b"OK;"
    assert reg.register("R1", "10.0.0.1", owner=2) == b"Fail: Robot with name R1 already registered;"
    assert reg.register("R2", "nowhere", owner=2) == b"Fail: Invalid IP address nowhere;"
    assert reg.listen("R1", "6000", owner=2) == b"OK;"
    assert reg.listen("R1", "6000", owner=2) == b"Fail: Robot with name R1 already listening at port 6000;"
    assert reg.listen("R1", "70000", owner=2) == b"Fail: Invalid port 70000;"
    reg.forget(2)
    assert reg.ip_of("R1") is None and not reg.listening
    assert wc.check_signal(-61.234) == b"OK:-61.23;" and wc.check_signal(None).startswith(b"Fail")


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


def test_link_parser_skips_what_is_not_a_command():
    parser = wc.LinkParser(max_message=100)
    events = parser.feed(b"send 3 abc;SEND 500 too long;SEND x y;SEND 0 ;SEND 2 ok;")
    assert [type(e).__name__ for e in events] == ["Garbage", "Garbage", "Garbage", "Send", "Send"]
    assert events[-2:] == [wc.Send(b""), wc.Send(b"ok")]
    assert parser.feed(b"SEND 5 ab") == [] and parser.mid_message
