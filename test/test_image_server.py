"""The image server: real sockets on loopback, frames from real simulated cameras.

Each received raw frame is traced back to the camera that rendered it by its exact bytes
(a listener records every frame the simulator renders).
"""
import logging
import socket
import threading
import time

import pytest
from PIL import Image

from usarsim.log_budget import LogBudget
from usarsim.protocol.image_server import MAX_PENDING, ImageOptions, ImageServer, log
from usarsim.protocol.image_wire import HEADER, RECT, Encoding, decode_frame
from usarsim.protocol.multiview import MultiViewConfig, fit
from usarsim.sim.readings import CameraImage
from usarsim.sim.simulator import Simulator
from patience import PATIENCE


class Rendered:
    """Every camera frame the simulator renders, by its bytes."""

    def __init__(self, sim):
        self.by_bytes = {}
        self.frames = {}  # robot -> frames rendered (a parked robot renders the same bytes again)
        self.lock = threading.Lock()
        sim.add_listener(self.on_tick)

    def on_tick(self, now, readings):
        for r in readings:
            if isinstance(r, CameraImage):
                with self.lock:
                    self.by_bytes.setdefault(r.rgb, set()).add(r.robot)
                    self.frames[r.robot] = self.frames.get(r.robot, 0) + 1

    def frame_count(self, robot):
        with self.lock:
            return self.frames.get(robot, 0)

    def robots_of(self, rgb):
        with self.lock:
            return self.by_bytes.get(rgb, set())

    def pictures_of(self, robot):
        with self.lock:
            return [Image.frombytes("RGB", (320, 240), rgb) for rgb, robots in self.by_bytes.items() if robot in robots]


def read_frame(sock, timeout=PATIENCE):
    sock.settimeout(timeout)
    header = _read_exactly(sock, HEADER.size)
    _, size = HEADER.unpack(header)
    return decode_frame(header + _read_exactly(sock, size))


def _read_exactly(sock, n):
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        assert chunk, "server closed the connection"
        data += chunk
    return data


def no_frame_within(sock, seconds=1.0):
    sock.settimeout(seconds)
    try:
        data = sock.recv(1)
    except socket.timeout:
        return True
    return data == b""  # closed also means no frame


def wait_for(condition, seconds=PATIENCE):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.02)


def connect(server, source="127.0.0.1"):
    return socket.create_connection(("127.0.0.1", server.port), timeout=PATIENCE, source_address=(source, 0))


@pytest.fixture()
def world():
    sim = Simulator("yellow", seed=1, pacing="realtime")
    rendered = Rendered(sim)
    sim.start()
    servers = []

    def serve(**options):
        server = ImageServer(sim, port=0, options=ImageOptions(**{"encoding": Encoding(0), **options}))
        server.start()
        servers.append(server)
        return server

    yield sim, rendered, serve
    for server in servers:
        server.stop()
    sim.stop()
    sim.close()


def test_first_frame_is_from_the_selected_camera_and_follows_the_selection(world):
    sim, rendered, serve = world
    sim.spawn("P2AT", "R1", start="Start1")
    sim.spawn("P2AT", "R2", start="Start2")
    server = serve()
    assert server.select("127.0.0.1", "R2", "Camera")
    assert not server.select("127.0.0.1", "Nobody") and not server.select("127.0.0.1", "R1", "NoSuchCamera")
    with connect(server) as sock:
        kind, pic = read_frame(sock)
        assert kind == 0 and pic.size == (320, 240)
        assert rendered.robots_of(pic.tobytes()) == {"R2"}
        assert server.select("127.0.0.1", "R1")
        sock.sendall(b"OK")
        assert rendered.robots_of(read_frame(sock)[1].tobytes()) == {"R1"}
        server.release("127.0.0.1")  # back to the default: the oldest robot's camera (R1)
        sock.sendall(b"OK\r\n")
        assert rendered.robots_of(read_frame(sock)[1].tobytes()) == {"R1"}


def test_serves_the_omnidirectional_camera_like_any_camera(world):
    sim, rendered, serve = world
    sim.spawn("OmniP2DX", "R1", start="Start1")
    server = serve()
    assert server.select("127.0.0.1", "R1", "OmniCam") == "OmniCam"
    with connect(server) as sock:
        kind, pic = read_frame(sock)
        assert kind == 0 and pic.size == (320, 320)
        assert rendered.robots_of(pic.tobytes()) == {"R1"}
        assert pic.getpixel((0, 0)) == (0, 0, 0) and pic.getpixel((160, 160)) != (0, 0, 0)  # mirror circle


def test_selection_is_per_client_address(world):
    sim, rendered, serve = world
    sim.spawn("P2AT", "R1", start="Start1")
    sim.spawn("P2AT", "R2", start="Start2")
    server = serve()
    assert server.select("127.0.0.2", "R2")
    with connect(server, "127.0.0.1") as one, connect(server, "127.0.0.2") as two:
        for _ in range(2):
            assert rendered.robots_of(read_frame(one)[1].tobytes()) == {"R1"}
            assert rendered.robots_of(read_frame(two)[1].tobytes()) == {"R2"}
            one.sendall(b"OK")
            two.sendall(b"OK")


def test_no_frame_without_a_camera_and_never_one_of_a_removed_robot(world):
    sim, rendered, serve = world
    server = serve()
    with connect(server) as sock:
        assert no_frame_within(sock)  # no robot, no camera: the client waits
        sim.spawn("P2AT", "Old", start="Start1")
        assert rendered.robots_of(read_frame(sock)[1].tobytes()) == {"Old"}
        wait_for(lambda: rendered.frame_count("Old") >= 3)  # Old has frames the client has not had
        sim.remove("Old")
        sock.sendall(b"OK")
        assert no_frame_within(sock)
        sim.spawn("P2AT", "New", start="Start2")
        assert rendered.robots_of(read_frame(sock)[1].tobytes()) == {"New"}
        # a selection outlives its robot: that client waits instead of seeing another camera
        assert server.select("127.0.0.1", "New")
        wait_for(lambda: rendered.frame_count("New") >= 3)
        sim.remove("New")
        sim.spawn("P2AT", "Other", start="Start3")
        sock.sendall(b"OK")
        assert no_frame_within(sock)


def test_request_mode_sends_only_when_asked_and_cuts_rectangles(world):
    sim, rendered, serve = world
    sim.spawn("P2AT", "R1", start="Start1")
    server = serve(legacy=False)
    with connect(server) as sock:
        assert no_frame_within(sock)
        sock.sendall(b"U" + RECT.pack(300, 200, 100, 100))
        kind, part = read_frame(sock)
        assert part.size == (20, 40)  # clipped at the frame's edge
        whole = next(p for p in rendered.pictures_of("R1") if p.crop((300, 200, 320, 240)).tobytes() == part.tobytes())
        assert whole.size == (320, 240)


def test_jpeg_and_size_options(world):
    sim, _, serve = world
    sim.spawn("P2AT", "R1", start="Start1")
    small = serve(encoding=Encoding(2), size=(160, 120))
    with connect(small) as sock:
        message_kind, pic = read_frame(sock)
        assert (message_kind, pic.size) == (2, (160, 120))
        assert len(set(pic.tobytes())) > 10  # a rendered scene, not a blank frame
        assert no_frame_within(sock, 0.5)  # one frame per request
        sock.sendall(b"OK")
        assert read_frame(sock)[0] == 2


def test_multiview_tiles_first_cameras_and_frees_tiles(world):
    sim, rendered, serve = world
    config = MultiViewConfig(cameras=4, tile_width=160, tile_height=120)
    server = serve(multiview=config)
    sim.spawn("P2AT", "A", start="Start1")
    sim.spawn("P2AT", "B", start="Start2")

    def tile(mosaic, index):
        x, y = config.origin(index)
        return mosaic.crop((x, y, x + 160, y + 120)).tobytes()

    def fitted(robot):
        return {fit(p, 160, 120).tobytes() for p in rendered.pictures_of(robot)}

    black = bytes(160 * 120 * 3)
    with connect(server) as sock:
        deadline = time.monotonic() + PATIENCE
        while time.monotonic() < deadline:  # until both robots' cameras have rendered into the mosaic
            mosaic = read_frame(sock)[1]
            if tile(mosaic, 0) != black and tile(mosaic, 1) != black:
                break
            sock.sendall(b"OK")
        assert mosaic.size == (320, 240)
        assert tile(mosaic, 0) in fitted("A") and tile(mosaic, 1) in fitted("B")
        assert tile(mosaic, 2) == tile(mosaic, 3) == black
        sim.remove("A")
        sim.spawn("P2AT", "C", start="Start3")  # takes A's free tile
        deadline = time.monotonic() + PATIENCE
        while time.monotonic() < deadline:
            sock.sendall(b"OK")
            mosaic = read_frame(sock)[1]
            assert tile(mosaic, 0) not in fitted("A")  # never a frame of the removed robot
            if tile(mosaic, 0) != black:
                break
        assert tile(mosaic, 0) in fitted("C")


def test_garbage_drops_only_that_client(world):
    sim, _, serve = world
    sim.spawn("P2AT", "R1", start="Start1")
    server = serve()
    with connect(server) as bad, connect(server) as good:
        read_frame(bad)
        read_frame(good)
        bad.sendall(b"x" * 5000)
        bad.settimeout(PATIENCE)
        try:
            assert bad.recv(65536) == b""
        except ConnectionResetError:
            pass
        good.sendall(b"OK")
        assert read_frame(good)[0] == 0


def test_threads_follow_live_connections_and_the_limit_holds():
    sim = Simulator("empty", pacing="realtime")
    server = ImageServer(sim, port=0, options=ImageOptions(max_clients=25))
    server.start()
    sim.start()
    baseline = threading.active_count()
    deadline = time.monotonic() + PATIENCE

    def wait_until_idle():
        while server.client_threads and time.monotonic() < deadline:
            time.sleep(0.02)
        return server.client_threads == 0

    try:
        for _ in range(40):  # 1000 connections with no camera robot: each client waits for a frame, then leaves
            batch = [connect(server) for _ in range(25)]
            wait_for(lambda: server.client_threads == 25)  # every one of them served by its thread
            for sock in batch:
                sock.close()
            assert wait_until_idle()
        assert threading.active_count() <= baseline
        over = [connect(server) for _ in range(30)]
        wait_for(lambda: server.client_threads == 25)
        assert sum(closed_by_server(sock) for sock in over) == 5  # the limit: the rest are closed at once
        assert server.client_threads == 25
        for sock in over:
            sock.close()
        assert wait_until_idle()
    finally:
        server.stop()
        sim.stop()
        sim.close()


def closed_by_server(sock, seconds=0.3):
    sock.settimeout(seconds)
    try:
        return sock.recv(1) == b""
    except socket.timeout:
        return False
    except ConnectionResetError:
        return True


def test_protocol_set_camera_client_selects_and_releases():
    from usarsim.protocol.server import ProtocolServer

    sim = Simulator("yellow", pacing="realtime")
    rendered = Rendered(sim)
    options = ImageOptions(encoding=Encoding(0))
    try:
        with ProtocolServer(sim, port=0, image_port=0, image_options=options) as srv:
            control = socket.create_connection(("127.0.0.1", srv.port), timeout=PATIENCE)
            lines = control.makefile("rb")
            assert lines.readline().startswith(b"NFO")

            def send(text):
                control.sendall(text.encode() + b"\r\n")
                while True:
                    line = lines.readline().decode()
                    if line.startswith(("RES", "ERR")):
                        return line

            # any connection may choose a client's camera, with or without a robot of its own
            assert "{Status Failed}" in send("SET {Type Camera} {Robot R2} {Name Camera} {Client 127.0.0.2}")
            sim.spawn("P2AT", "R1", start="Start1")
            sim.spawn("P2AT", "R2", start="Start2")
            assert "{Status OK}" in send("SET {Type Camera} {Robot R2} {Name Camera} {Client 127.0.0.2}")
            with connect(srv.image_server, "127.0.0.2") as images:
                assert rendered.robots_of(read_frame(images)[1].tobytes()) == {"R2"}
                assert "{Status OK}" in send("SET {Type Camera} {Client 127.0.0.2}")  # released
                images.sendall(b"OK")
                assert rendered.robots_of(read_frame(images)[1].tobytes()) == {"R1"}
            control.close()
    finally:
        sim.close()


def test_protocol_set_camera_name_means_the_senders_robot():
    from usarsim.protocol.server import ProtocolServer

    sim = Simulator("yellow", pacing="realtime")
    try:
        with ProtocolServer(sim, port=0, image_port=0) as srv:
            control = socket.create_connection(("127.0.0.1", srv.port), timeout=PATIENCE)
            lines = control.makefile("rb")

            def send(text, word="RES"):
                control.sendall(text.encode() + b"\r\n")
                while True:
                    line = lines.readline().decode()
                    if line.startswith((word, "ERR")):
                        return line

            assert "{Status Failed}" in send("SET {Type Camera} {Name Camera} {Client 127.0.0.3}")  # no robot yet
            control.sendall(b"INIT {ClassName USARBot.P2AT} {Name Mine} {Start Start1}\r\n")
            send("", "STA")
            assert "{Name Camera} {Status OK}" in send("SET {Type Camera} {Name Camera} {Client 127.0.0.3}")
            assert srv.image_server.view_for("127.0.0.3").robot == "Mine"
            control.close()
    finally:
        sim.close()


def test_watched_cameras_render_at_the_frame_rate_then_go_back():
    with Simulator("empty", pacing="lockstep") as sim:
        robot = sim.spawn("P2AT", "R1")
        camera = next(s for s in robot.sensors if s.type_name == "Camera")
        own = camera.interval
        server = ImageServer(sim, port=0, options=ImageOptions(frame_rate=20.0))
        server._client_ips["127.0.0.1"] += 1  # as the accept loop records a connected client
        server._on_tick(sim.time, sim.step(1))
        assert camera.active and camera.interval == pytest.approx(min(own, 0.05))
        server._client_ips.clear()
        server._on_tick(sim.time, sim.step(1))
        assert not camera.active and camera.interval == own


def test_a_client_that_asks_for_nothing_is_closed_after_the_idle_time(world):
    sim, _, serve = world
    server = serve(legacy=False, idle_timeout=0.5)
    with connect(server) as sock:
        sock.settimeout(PATIENCE)
        assert sock.recv(1) == b""
    wait_for(lambda: server.client_threads == 0)


def test_example_image_client_saves_the_chosen_camera_as_png(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    from usarsim.protocol.server import ProtocolServer

    sim = Simulator("yellow", pacing="realtime")
    rendered = Rendered(sim)
    try:
        with ProtocolServer(sim, port=0, image_port=0, image_options=ImageOptions(encoding=Encoding(0))) as srv:
            sim.spawn("P2AT", "R1", start="Start1")
            sim.spawn("P2AT", "R2", start="Start2")
            example = Path(__file__).resolve().parents[1] / "examples" / "image_client.py"
            done = subprocess.run([sys.executable, str(example), "--port", str(srv.image_port),
                                   "--protocol-port", str(srv.port), "--robot", "R2", "--count", "2",
                                   "--out", str(tmp_path)], capture_output=True, text=True, timeout=PATIENCE)
            assert done.returncode == 0, done.stderr
            assert "{Status OK}" in done.stdout
            saved = sorted(tmp_path.glob("frame_*.png"))
            assert [p.name for p in saved] == ["frame_000.png", "frame_001.png"]
            for path in saved:
                with Image.open(path) as png:
                    assert png.size == (320, 240)
                    assert rendered.robots_of(png.convert("RGB").tobytes()) == {"R2"}
    finally:
        sim.close()


# --- limits: request floods, idle and non-reading clients, the connection limit, the log -------
def flood(sock, budget=4 << 20):
    """Send 'OK' until the server stops taking them (the kernel buffers are full) or ``budget`` bytes went."""
    sock.setblocking(False)
    sent, burst = 0, b"OK" * 4096
    try:
        while sent < budget:
            sent += sock.send(burst)
    except BlockingIOError:
        pass
    finally:
        sock.settimeout(PATIENCE)
    return sent


def closed_after_frames(sock):
    sock.settimeout(PATIENCE)
    try:
        while sock.recv(65536):  # frames sent before the close are read past
            pass
    except ConnectionResetError:
        pass
    return True


def test_a_request_flood_queues_at_most_the_bound(world):
    sim, _, serve = world
    server = serve(legacy=False)
    with connect(server) as flooder, connect(server) as other:
        wait_for(lambda: server.client_threads == 2)
        sent = flood(flooder)
        assert sent > 100 * MAX_PENDING  # many more requests than the bound went out...
        wait_for(lambda: server.queued_requests == MAX_PENDING)  # ...the server holds the bound of them
        for _ in range(20):  # and holds no more while the client keeps pushing
            flood(flooder, budget=1 << 16)
            assert server.queued_requests <= MAX_PENDING
        sim.spawn("P2AT", "R1", start="Start1")
        other.sendall(b"OK")
        assert read_frame(other)[0] == 0  # the flood costs the other client nothing
        assert read_frame(flooder)[0] == 0  # and the flooder is served its requests, one per frame


def test_idle_connections_do_not_lock_the_port_while_no_camera_exists(world):
    sim, _, serve = world
    server = serve(max_clients=2, idle_timeout=0.5)  # legacy start: each waits for a first frame
    first, second = connect(server), connect(server)
    try:
        assert closed_after_frames(first) and closed_after_frames(second)  # no camera, no request: closed
        wait_for(lambda: server.client_threads == 0)
        sim.spawn("P2AT", "R1", start="Start1")
        with connect(server) as late:
            assert read_frame(late)[0] == 0  # the port is free again
    finally:
        first.close()
        second.close()


def test_a_client_that_never_reads_is_dropped(world):
    sim, _, serve = world
    sim.spawn("P2AT", "R1", start="Start1")
    server = serve(send_timeout=0.5)
    stalled = socket.socket()
    stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    stalled.connect(("127.0.0.1", server.port))
    try:
        wait_for(lambda: server.client_threads == 1)
        for _ in range(50):  # asks for frames, takes none: raw 320x240 frames fill both buffers
            stalled.sendall(b"OK")
        wait_for(lambda: server.client_threads == 0)
    finally:
        stalled.close()


def test_the_limit_refuses_with_a_warning_and_the_log_stays_bounded(world, caplog):
    _, _, serve = world
    server = serve(max_clients=1)
    server._log = LogBudget(log, burst=5, period=3600.0)  # one window for the whole test, however slow it runs
    with caplog.at_level(logging.INFO, logger="usarsim.protocol.image_server"):
        with connect(server) as held:
            wait_for(lambda: server.client_threads == 1)
            for _ in range(60):
                with connect(server) as extra:
                    assert closed_after_frames(extra)
            held.sendall(b"x" * 2000)  # garbage: this one is closed as well
            assert closed_after_frames(held)
        wait_for(lambda: server.client_threads == 0)
        for _ in range(60):  # garbage from 60 more connections of the same address
            with connect(server) as bad:
                bad.sendall(b"x" * 2000)
                assert closed_after_frames(bad)
            wait_for(lambda: server.client_threads == 0)  # its thread has ended: the next one is served
    full = [r for r in caplog.records if "image server full (1 clients): refused 127.0.0.1" in r.getMessage()]
    closed = [r for r in caplog.records if "image client 127.0.0.1 closed" in r.getMessage()]
    assert full and full[0].levelno == logging.WARNING
    assert server.refused == 60
    assert len(full) <= 5 and 1 <= len(closed) <= 5  # 60 refusals and 61 closes: five lines each at most
