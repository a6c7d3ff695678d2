"""usarsim console: the message filter alone, then the console against a live server."""
import subprocess
import sys

import pytest

from usarsim.console import MessageFilter
from usarsim.protocol.server import ProtocolServer
from usarsim.sim.simulator import Simulator
from patience import PATIENCE

LASER = "SEN {Time 1.00} {Type RangeScanner} {Name Scanner} {Range 1,2,3}"
SONAR = "SEN {Type Sonar} {Name F1 Range 1.0}"
STA = "STA {Type GroundVehicle} {Time 1.00} {Battery 3599}"


def test_streams_hidden_at_first_replies_always_shown():
    f = MessageFilter()
    assert not f.passes(LASER) and not f.passes(STA) and not f.passes("MISSTA {Time 1} {Name Arm}")
    assert f.passes("RES {Time 1} {Type Camera} {Status OK}") and f.passes("ERR {Command X} {Reason y}")


def test_show_and_hide_by_kind_and_type():
    f = MessageFilter()
    f.show("sen", ("RangeScanner",))
    assert f.passes(LASER) and not f.passes(SONAR)
    f.show("SEN", ("Sonar",))
    assert f.passes(SONAR)
    f.hide("SEN", ("RangeScanner",))
    assert not f.passes(LASER) and f.passes(SONAR)
    f.show("SEN")
    f.hide("SEN", ("Sonar",))
    assert f.passes(LASER) and not f.passes(SONAR)
    assert "all but Sonar" in f.describe()
    f.hide("SEN")
    assert not f.passes(LASER) and "SEN hidden" in f.describe()
    f.hide("NFO")
    assert not f.passes("NFO {StartPoses 0}")


@pytest.fixture(scope="module")
def server():
    sim = Simulator("yellow", pacing="realtime")
    with ProtocolServer(sim, port=0, image_port=None) as srv:
        yield srv
    sim.close()


def console(server, text, *options):
    return subprocess.run([sys.executable, "-m", "usarsim.cli", "console", "127.0.0.1", str(server.port),
                           "--wait", "2", *options], input=text, capture_output=True, text=True, timeout=PATIENCE)


def test_console_sends_lines_and_prints_replies_without_the_stream(server):
    done = console(server, "GETSTARTPOSES\nINIT {ClassName USARBot.P2AT} {Name Con1} {Start Start1}\n/wait STA\n"
                           "GETGEO {Type Robot}\nFOO\n")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("NFO {Gametype")
    assert any(line.startswith("NFO {StartPoses") for line in lines)
    assert any(line.startswith("GEO {Type GroundVehicle}") for line in lines)
    assert any(line.startswith("ERR {Command FOO}") for line in lines)
    assert not any(line.startswith(("SEN", "STA")) for line in lines)


def test_console_filter_commands_and_history(server):
    done = console(server, "INIT {ClassName USARBot.P2AT} {Name Con2} {Start Start2}\n/show SEN RangeScanner\n/wait SEN\n"
                           "/history\n")
    lines = done.stdout.splitlines()
    assert any(line.startswith("SEN {Type RangeScanner}") or "{Type RangeScanner}" in line for line in lines)
    assert not any(line.startswith("SEN") and "RangeScanner" not in line for line in lines)
    assert any(line.strip() == "2  /show SEN RangeScanner" for line in lines)


def test_console_names_a_server_that_is_not_there():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, not listening: refused
        done = subprocess.run([sys.executable, "-m", "usarsim.cli", "console", "127.0.0.1", str(port)],
                              input="", capture_output=True, text=True, timeout=PATIENCE)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1].startswith(f"usarsim console: cannot connect to 127.0.0.1:{port}")
    assert "Traceback" not in done.stderr
