"""The live view: a WebSocket client on 127.0.0.1 sees the announced channels and receives their messages."""
from __future__ import annotations

import contextlib
import json
import math
import re
import struct
import subprocess
import sys
import time
from typing import Iterator

import pytest
from websockets.sync.client import ClientConnection, connect

from usarsim.config_loading import ConfigError
from usarsim.live.options import live_attach
from usarsim.live.view import TOPICS, LiveView
from usarsim.sim.simulator import Simulator
from patience import PATIENCE

SUBPROTOCOL = "foxglove.sdk.v1"


class FoxgloveClient:
    """Just enough of the Foxglove WebSocket protocol: advertisements, subscriptions, message data."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.channels: dict[int, dict] = {}
        self.subscriptions: dict[int, str] = {}

    def read_advertisements(self, count: int) -> dict[str, dict]:
        deadline = time.monotonic() + PATIENCE
        while len(self.channels) < count:
            assert time.monotonic() < deadline, f"only {len(self.channels)} channels announced"
            frame = self.ws.recv(timeout=PATIENCE)
            if isinstance(frame, str):
                message = json.loads(frame)
                if message["op"] == "advertise":
                    self.channels.update({c["id"]: c for c in message["channels"]})
        return {c["topic"]: c for c in self.channels.values()}

    def subscribe_all(self) -> None:
        self.subscriptions = {i: c["topic"] for i, c in enumerate(self.channels.values())}
        ids = {i: c["id"] for i, c in enumerate(self.channels.values())}
        self.ws.send(json.dumps({"op": "subscribe",
                                 "subscriptions": [{"id": i, "channelId": ids[i]} for i in ids]}))

    def message(self, timeout: float = 0.05) -> tuple[str, bytes] | None:
        """The next message data frame as (topic, payload), None when none came in time."""
        try:
            frame = self.ws.recv(timeout=timeout)
        except TimeoutError:
            return None
        if isinstance(frame, bytes) and frame[0] == 1:  # MessageData: op, subscription id, log time, payload
            return self.subscriptions[int.from_bytes(frame[1:5], "little")], frame[13:]
        return None


@contextlib.contextmanager
def foxglove_client(port: int) -> Iterator[FoxgloveClient]:
    with connect(f"ws://127.0.0.1:{port}", subprotocols=[SUBPROTOCOL], open_timeout=PATIENCE) as ws:
        yield FoxgloveClient(ws)


@pytest.fixture
def view():
    live = LiveView(port=0)
    yield live
    live.stop()


def test_client_receives_every_announced_channel(view: LiveView) -> None:
    sim = Simulator("yellow", seed=0, pacing="lockstep")
    try:
        # 1.2 m in front of victim V2 (sitting; its legs reach toward the robot, the glass is behind), camera on
        v2 = next(v for v in sim.spec.victims if v.id == "V2")
        # the rescue variant carries the victim sensor whose detections /markers shows
        robot = sim.spawn("RescueP2AT", position=(v2.xyz[0] + 1.2, v2.xyz[1], v2.xyz[2]), rpy=(0.0, 0.0, math.pi))
        robot.sensor("Camera").active = True
        view.attach(sim)
        with foxglove_client(view.port) as client:
            topics = client.read_advertisements(len(TOPICS))
            assert set(topics) == set(TOPICS)
            assert topics["/scan"]["schemaName"] == "foxglove.LaserScan"
            assert topics["/tf"]["schemaName"] == "foxglove.FrameTransforms"
            assert topics["/camera/image"]["schemaName"] == "foxglove.RawImage"
            client.subscribe_all()
            time.sleep(0.2)  # let the server register the subscriptions before publishing
            received: dict[str, bytes] = {}
            deadline = time.monotonic() + PATIENCE
            while set(received) != set(TOPICS):
                assert time.monotonic() < deadline, f"no messages on {set(TOPICS) - set(received)}"
                sim.step(10)
                while (got := client.message()) is not None:
                    received.setdefault(*got)
    finally:
        sim.close()
    # the payloads are the simulator's data (protobuf: strings appear verbatim)
    name = robot.name.encode()
    assert name + b"/laser" in received["/scan"]
    assert name + b"/base_link" in received["/tf"] and b"world" in received["/tf"]
    assert b"rgb8" in received["/camera/image"] and len(received["/camera/image"]) > 320 * 240 * 3
    assert b"V2" in received["/markers"]  # the victim sensor's detection, labelled
    assert b"robot/" + name in received["/robots"]
    assert b"arena" in received["/world"] and b"victim/V1" in received["/world"]
    assert b"trail/" + name in received["/trails"]


def test_a_taken_port_is_one_clear_error(view: LiveView) -> None:
    class Args:
        live_host, live_port = "127.0.0.1", view.port

    with pytest.raises(ConfigError, match=f"cannot listen on 127.0.0.1:{view.port}"):
        with live_attach(Args(), enabled=True):
            pass


def test_serve_live_streams_the_served_world(tmp_path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "usarsim.cli", "serve", "--world", "yellow", "--port", "0",
                             "--image-port", "-1", "--live", "--live-port", "0"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        port = None
        deadline = time.monotonic() + PATIENCE
        while port is None:
            assert time.monotonic() < deadline and proc.poll() is None, "serve --live did not start"
            match = re.search(r"live view on ws://127\.0\.0\.1:(\d+)", proc.stderr.readline())
            port = int(match.group(1)) if match else None
        with foxglove_client(port) as client:
            assert set(client.read_advertisements(len(TOPICS))) == set(TOPICS)
            client.subscribe_all()
            deadline = time.monotonic() + PATIENCE
            while (got := client.message(timeout=1.0)) is None or got[0] != "/world":
                assert time.monotonic() < deadline, "no world scene from the server"
            assert b"arena" in got[1]
    finally:
        proc.terminate()
        proc.wait(timeout=PATIENCE)
    assert proc.returncode == 0


def test_layout_file_is_the_generated_layout_of_the_announced_topics() -> None:
    from usarsim.live.layout import build_layout
    from usarsim.paths import share_dir

    shipped = json.loads((share_dir() / "config" / "foxglove_layout.json").read_text())
    assert shipped == json.loads(build_layout().to_json())
    text = json.dumps(shipped)
    used = set(re.findall(r'"(/[a-z/]+)"', text))
    assert used and used <= set(TOPICS)


def test_sweep_live_trial_streams_and_keeps_its_results(view: LiveView, tmp_path) -> None:
    from usarsim.scale.results import TIMING_COLUMNS
    from usarsim.scale.sweep import SweepOptions, run_sweep

    sweep = tmp_path / "s.yaml"
    sweep.write_text("worlds: [yellow]\nrobots: [P2AT]\nseeds: [0, 1]\nduration: 3.0\n"
                     "controller: usarsim.scale.examples:wander\n")
    with foxglove_client(view.port) as client:
        client.read_advertisements(len(TOPICS))
        client.subscribe_all()
        time.sleep(0.2)
        watched = run_sweep(sweep, SweepOptions(output=tmp_path / "live", workers=1, progress=False,
                                                live_trial="yellow__P2AT__seed1", live_attach=view.attach))
        topics = set()
        while (got := client.message(timeout=0.5)) is not None:
            topics.add(got[0])
    assert {"/scan", "/tf", "/robots", "/world", "/trails"} <= topics
    plain = run_sweep(sweep, SweepOptions(output=tmp_path / "plain", workers=1, progress=False))
    strip = lambda rows: [{k: v for k, v in r.items() if k not in TIMING_COLUMNS} for r in rows]  # noqa: E731
    assert strip(watched.rows) == strip(plain.rows)


def test_run_live_announces_its_url_and_finishes(tmp_path, capsys) -> None:
    from usarsim.cli import main

    out = tmp_path / "run.jsonl"
    assert main(["run", "--world", "empty", "--duration", "0.5", "--live", "--live-port", "0", "-o", str(out)]) == 0
    assert re.search(r"live view on ws://127\.0\.0\.1:\d+", capsys.readouterr().err)
    assert out.read_text().count("\n") > 10


def test_trace_points_are_drawn_in_their_colour(view: LiveView) -> None:
    from usarsim.sim.commands import SetTrace

    sim = Simulator("empty", seed=0, pacing="lockstep")
    try:
        robot = sim.spawn("P2AT")
        sim.submit(SetTrace(robot=robot.name, on=True, interval=0.05, color="Cyan"))
        view.attach(sim)
        with foxglove_client(view.port) as client:
            client.read_advertisements(len(TOPICS))
            client.subscribe_all()
            time.sleep(0.2)
            trace = b""
            deadline = time.monotonic() + PATIENCE
            while b"trace/" + robot.name.encode() not in trace:
                assert time.monotonic() < deadline, "no TRACE points on /trails"
                sim.step(20)
                while (got := client.message()) is not None:
                    if got[0] == "/trails":
                        trace = got[1]
    finally:
        sim.close()
    # Cyan (0, 1, 1, 1) as a foxglove.Color: r (0) omitted, then fields 2, 3, 4 as the double 1.0
    one = struct.pack("<d", 1.0)
    assert b"\x11" + one + b"\x19" + one + b"\x21" + one in trace


# --- subprotocols, limits and bounded state ------------------------------------------------------
@pytest.mark.parametrize("subprotocol", ["foxglove.websocket.v1", "foxglove.sdk.v1"])
def test_both_foxglove_subprotocols_are_accepted(view: LiveView, subprotocol: str) -> None:
    sim = Simulator("empty", seed=0, pacing="lockstep")
    try:
        robot = sim.spawn("P2AT")
        view.attach(sim)
        with connect(f"ws://127.0.0.1:{view.port}", subprotocols=[subprotocol], open_timeout=PATIENCE) as ws:
            assert ws.subprotocol == subprotocol  # the one offered, alone, is the one agreed
            client = FoxgloveClient(ws)
            client.read_advertisements(len(TOPICS))
            client.subscribe_all()
            deadline = time.monotonic() + PATIENCE
            while True:
                assert time.monotonic() < deadline, "no /tf message"
                sim.step(10)
                got = client.message()
                if got is not None and got[0] == "/tf":
                    break
    finally:
        sim.close()
    assert robot.name.encode() + b"/base_link" in got[1]


def test_viewers_past_the_limit_are_refused_with_a_reason() -> None:
    from websockets.exceptions import InvalidStatus

    live = LiveView(port=0, max_viewers=2)
    try:
        with foxglove_client(live.port), foxglove_client(live.port):
            with pytest.raises(InvalidStatus) as refused:
                with foxglove_client(live.port):
                    pass
            assert refused.value.response.status_code == 503
            assert b"live view full: at most 2 viewers" in refused.value.response.body
        deadline = time.monotonic() + PATIENCE
        while live.door.viewers:  # the two have left
            assert time.monotonic() < deadline, "viewers still counted after they left"
            time.sleep(0.02)
        with foxglove_client(live.port) as again:  # and their places are free again
            assert again.read_advertisements(len(TOPICS))
    finally:
        live.stop()


def test_a_viewer_that_never_reads_is_dropped_and_the_others_go_on() -> None:
    import socket

    live = LiveView(port=0, slow_viewer_timeout=0.5)
    sim = Simulator("empty", seed=0, pacing="lockstep")
    stalled_sock = socket.socket()
    stalled_sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    try:
        robot = sim.spawn("P2AT")
        robot.sensor("Camera").active = True  # 230 kB images: the stalled viewer's buffers fill fast
        live.attach(sim)
        stalled_sock.connect(("127.0.0.1", live.port))
        with connect(f"ws://127.0.0.1:{live.port}", sock=stalled_sock, subprotocols=[SUBPROTOCOL],
                     open_timeout=PATIENCE, max_queue=1) as stalled_ws, foxglove_client(live.port) as reader:
            stalled = FoxgloveClient(stalled_ws)
            stalled.read_advertisements(len(TOPICS))
            stalled.subscribe_all()  # ...and never reads again
            reader.read_advertisements(len(TOPICS))
            reader.subscribe_all()
            deadline = time.monotonic() + PATIENCE
            while live.door.dropped == 0:
                assert time.monotonic() < deadline, "the stalled viewer was never dropped"
                sim.step(10)
                while reader.message(timeout=0.01) is not None:
                    pass
            while live.door.viewers != 1:
                assert time.monotonic() < deadline, "the stalled viewer still counted"
                time.sleep(0.02)
            seen = 0
            while seen < 5:  # the reading viewer is still served
                assert time.monotonic() < deadline, "the reading viewer got nothing after the drop"
                sim.step(10)
                seen += reader.message() is not None
    finally:
        sim.close()
        live.stop()


def test_trails_of_removed_robots_are_dropped_and_published_off_the_simulator_thread(view: LiveView) -> None:
    import threading

    publishing_threads: set[int] = set()

    class RecordingChannel:  # the /trails channel, noting which thread logs to it
        def __init__(self, channel) -> None:  # noqa: ANN001
            self.channel = channel

        def log(self, message, **kwargs) -> None:  # noqa: ANN001
            publishing_threads.add(threading.get_ident())
            self.channel.log(message, **kwargs)

    view._trails = RecordingChannel(view._trails)  # type: ignore[assignment]
    sim = Simulator("empty", seed=0, pacing="lockstep")
    try:
        names = [sim.spawn("P2AT", position=(2.0 * i, 2.0, 0.0)).name for i in range(1, 6)]
        view.attach(sim)
        sim.step(5)
        for name in names[1:]:
            sim.remove(name)
        with foxglove_client(view.port) as client:
            client.read_advertisements(len(TOPICS))
            client.subscribe_all()
            deadline = time.monotonic() + PATIENCE
            trails = b""

            def only_the_remaining_robot() -> bool:  # in the newest /trails message the viewer got
                return (b"trail/" + names[0].encode() in trails
                        and not any(b"trail/" + name.encode() in trails for name in names[1:]))

            # messages built before the removals may still be on their way: wait for a newer one
            while view.trail_sizes()[0] != 1 or not only_the_remaining_robot():
                assert time.monotonic() < deadline, f"trails kept: {view.trail_sizes()}"
                sim.step(10)
                while (got := client.message()) is not None:
                    if got[0] == "/trails":
                        trails = got[1]
    finally:
        sim.close()
    assert publishing_threads and threading.get_ident() not in publishing_threads  # not the stepping thread


def test_trace_history_and_paths_are_bounded() -> None:
    from usarsim.live.trails import TRACE_LIMIT, TRAIL_LIMIT, TRAIL_STEP, TrailStore
    from usarsim.sim.readings import TracePoint

    store = TrailStore()
    for i in range(3 * TRACE_LIMIT):
        store.add_trace(TracePoint(time=0.01 * i, robot="R1", sensor="Trace", frame="base_link",
                                   position=(0.01 * i, 0.0, 0.0), color="Red", index=i))
    for i in range(5 * TRAIL_LIMIT):
        store.extend("R1", (TRAIL_STEP * i, 0.0, 0.0))
    paths, traces = store.snapshot()
    assert len(traces["R1"]) == TRACE_LIMIT and traces["R1"][-1].index == 3 * TRACE_LIMIT - 1  # the newest kept
    assert TRAIL_LIMIT // 2 <= len(paths["R1"]) <= TRAIL_LIMIT  # thinned...
    assert paths["R1"][0] == (0.0, 0.0, 0.0) and paths["R1"][-1][0] == pytest.approx(TRAIL_STEP * (5 * TRAIL_LIMIT - 1))
    assert store.keep_only([]) == ["R1"] and store.sizes() == (0, 0)  # ...and the whole path still drawn


def test_the_viewer_limit_option_is_checked(capsys) -> None:
    import argparse

    from usarsim.live.options import add_live_arguments

    parser = argparse.ArgumentParser(prog="usarsim serve")
    add_live_arguments(parser)
    assert parser.parse_args(["--live-max-viewers", "3"]).live_max_viewers == 3
    with pytest.raises(SystemExit):
        parser.parse_args(["--live-max-viewers", "0"])
    assert "--live-max-viewers: expected a whole number of at least 1, got '0'" in capsys.readouterr().err
