"""The example clients end with one line and an exit status, never a traceback: when nothing listens
where they connect, when Ctrl-C stops them, and when they are given a malformed argument."""
from __future__ import annotations

import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from usarsim.protocol.server import ProtocolServer
from usarsim.sim.simulator import Simulator
from patience import PATIENCE

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def closed_port() -> int:
    """A port nothing listens on (bound and released at once)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def example(name: str, *args: str, **popen) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-u", str(EXAMPLES / f"{name}.py"), *args], text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **popen)


REFUSED = [
    ("square_client", ["--port"], "protocol server"),
    ("image_client", ["--port"], "image server"),
    ("image_client", ["--robot", "R1", "--protocol-port"], "protocol server"),
    ("wireless_client", ["--name", "R1", "--link-port", "0", "--port"], "protocol server"),
    ("live_snapshot", ["--port"], "live view"),
]


@pytest.mark.parametrize("name,args,what", REFUSED)
def test_a_refused_connection_is_one_line_naming_the_address(name, args, what, tmp_path):
    port = closed_port()
    client = example(name, *args, str(port), cwd=tmp_path)
    out, err = client.communicate(timeout=PATIENCE)
    assert client.returncode == 1, err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{name}: ") and what in lines[0] and f":{port}" in lines[0], err


def test_a_malformed_peer_is_an_argument_error():
    client = example("wireless_client", "--name", "R1", "--link-port", "0", "--peer", "R2")
    _, err = client.communicate(timeout=PATIENCE)
    assert client.returncode == 2 and "Traceback" not in err
    assert err.strip().splitlines()[-1].endswith("expected NAME:PORT, e.g. R1:6001, got 'R2'")


@pytest.fixture(scope="module")
def server():
    sim = Simulator("yellow", pacing="realtime")
    with ProtocolServer(sim, port=0, image_port=0) as srv:
        yield srv
    sim.close()


def interrupt_once(client: subprocess.Popen, started: str) -> tuple[str, str]:
    """SIGINT ``client`` once a stdout line starts with ``started``; its stdout and stderr after."""
    seen = []
    reader = threading.Thread(target=lambda: seen.extend(iter(client.stdout.readline, "")), daemon=True)
    reader.start()
    for _ in range(int(PATIENCE / 0.1)):
        if any(line.startswith(started) for line in seen) or client.poll() is not None:
            break
        threading.Event().wait(0.1)
    assert client.poll() is None, f"ended before {started!r}: {client.stderr.read()}"
    client.send_signal(signal.SIGINT)
    err = client.stderr.read()
    client.wait(timeout=PATIENCE)
    reader.join(timeout=PATIENCE)
    return "".join(seen), err


def test_ctrl_c_stops_the_square_client_with_one_line(server):
    client = example("square_client", "--port", str(server.port), "--side", "50")
    out, err = interrupt_once(client, "leg 1")
    assert client.returncode == 130, err
    assert err.strip().splitlines() == ["square_client: interrupted"], err


def test_ctrl_c_stops_the_image_client_with_one_line(server, tmp_path):
    keeper = socket.create_connection(("127.0.0.1", server.port), timeout=PATIENCE)  # the robot lives while this is open
    try:
        keeper.sendall(b"INIT {ClassName USARBot.P2AT} {Name Pics} {Start Start1}\r\n")
        lines = keeper.makefile("rb")
        while not lines.readline().startswith(b"STA"):
            pass
        client = example("image_client", "--protocol-port", str(server.port), "--port", str(server.image_port),
                         "--robot", "Pics", "--count", "100000", "--out", str(tmp_path))
        out, err = interrupt_once(client, str(tmp_path / "frame_000.png"))
    finally:
        keeper.close()
    assert client.returncode == 130, err
    assert err.strip().splitlines() == ["image_client: interrupted"], err
    assert out.startswith("RES {Time") and "{Status OK}" in out.splitlines()[0]
