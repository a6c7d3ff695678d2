"""The image server: real sockets on loopback, frames from a real simulated camera."""
import socket
import struct
import time

import pytest

from usarsim.protocol.image_server import ImageServer, decode_image, encode_image
from usarsim.sim.readings import CameraImage
from usarsim.sim.simulator import Simulator


def read_message(sock: socket.socket) -> bytes:
    header = _read_exactly(sock, 5)
    _, size = struct.unpack(">BI", header)
    return header + _read_exactly(sock, size)


def _read_exactly(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        assert chunk, "server closed the connection"
        data += chunk
    return data


@pytest.fixture(scope="module")
def sim():
    with Simulator("yellow", seed=1, pacing="realtime") as simulator:
        simulator.spawn("P2AT", "R1")
        simulator.start()
        yield simulator
        simulator.stop()


def serve(sim, image_type):
    server = ImageServer(sim, port=0, image_type=image_type, frame_rate=20.0)
    server.start()
    return server


def test_encode_decode_round_trip():
    rgb = bytes(i % 251 for i in range(64 * 48 * 3))
    image = CameraImage(time=0.0, robot="R", sensor="Camera", frame="camera_link", width=64, height=48,
                        rgb=rgb, horizontal_fov=1.0)
    raw = encode_image(image, 0)
    assert raw[0] == 0 and struct.unpack(">I", raw[1:5])[0] == 4 + 64 * 48 * 3
    assert decode_image(raw) == (0, 64, 48, image.rgb)
    jpeg = encode_image(image, 1)
    assert jpeg[5:7] == b"\xff\xd8"  # JPEG start-of-image marker
    assert decode_image(jpeg)[:3] == (1, 64, 48)
    with pytest.raises(ValueError):
        encode_image(image, 9)


def test_jpeg_frames_one_per_ack(sim):
    server = serve(sim, 2)
    try:
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
            first = decode_image(read_message(sock))
            assert first[:3] == (2, 320, 240)
            assert len(set(first[3])) > 10  # a rendered scene, not a blank frame
            # no second image before the ack
            sock.settimeout(0.5)
            with pytest.raises(socket.timeout):
                sock.recv(1)
            sock.settimeout(10)
            sock.sendall(b"OK\r\n")
            assert decode_image(read_message(sock))[:3] == (2, 320, 240)
    finally:
        server.stop()


def test_raw_frames_and_selection(sim):
    server = serve(sim, 0)
    try:
        assert server.select("R1") and not server.select("Nobody")
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
            kind, width, height, rgb = decode_image(read_message(sock))
            assert (kind, width, height, len(rgb)) == (0, 320, 240, 320 * 240 * 3)
            sock.sendall(b"OK")
            read_message(sock)
    finally:
        server.stop()


def test_garbage_ack_drops_only_that_client(sim):
    server = serve(sim, 3)
    try:
        bad = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        good = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        read_message(bad)
        read_message(good)
        bad.sendall(b"x" * 5000)
        deadline = time.monotonic() + 5
        closed = False
        while time.monotonic() < deadline and not closed:
            try:
                closed = bad.recv(65536) == b""
            except ConnectionResetError:
                closed = True
        assert closed
        good.sendall(b"OK")
        assert decode_image(read_message(good))[0] == 3
        bad.close()
        good.close()
    finally:
        server.stop()
