"""USARSim image server (default TCP 5003): camera frames, one per client acknowledgement.

Wire format (spec protocol.md §7.2, decision D7): per image, 1 byte ImageType
(0 raw, 1..5 JPEG from best to worst quality), 4 bytes big-endian ImageSize, then
ImageData: raw = 2+2 bytes big-endian width/height and packed RGB rows top to
bottom; JPEG = a complete JPEG stream. After each image the client sends ``OK``
(with or without a line end); the next image follows at the next frame time.

Which camera is streamed: the one selected with :meth:`ImageServer.select` (the
protocol's ``SET {Type Camera} {Robot r} {Name cam} {Client ip}``), else the first
camera of the oldest robot that has one.
"""
from __future__ import annotations

import io
import logging
import socket
import struct
import threading
import time
from typing import TYPE_CHECKING, Sequence

from PIL import Image

from usarsim.sim.readings import CameraImage, Reading
from usarsim.sim.sensors.camera import Camera

if TYPE_CHECKING:
    from usarsim.sim.simulator import Simulator

log = logging.getLogger(__name__)

RAW = 0
JPEG_QUALITY = {1: 95, 2: 85, 3: 75, 4: 50, 5: 25}  # ImageType -> Pillow quality
ACK_TIMEOUT = 30.0  # s a client may take to acknowledge before it is dropped
MAX_ACK_BYTES = 1024  # an ack longer than this without "OK" is garbage: drop the client


def encode_image(image: CameraImage, image_type: int) -> bytes:
    """One wire message (type, size, data) for ``image``."""
    if image_type == RAW:
        data = struct.pack(">HH", image.width, image.height) + image.rgb
    elif image_type in JPEG_QUALITY:
        buffer = io.BytesIO()
        Image.frombytes("RGB", (image.width, image.height), image.rgb).save(
            buffer, format="JPEG", quality=JPEG_QUALITY[image_type])
        data = buffer.getvalue()
    else:
        raise ValueError(f"image type must be 0 (raw) or 1..5 (JPEG), got {image_type}")
    return struct.pack(">BI", image_type, len(data)) + data


def decode_image(message: bytes) -> tuple[int, int, int, bytes]:
    """(type, width, height, RGB bytes) of one wire message (for clients and tests)."""
    image_type, size = struct.unpack(">BI", message[:5])
    data = message[5:5 + size]
    if image_type == RAW:
        width, height = struct.unpack(">HH", data[:4])
        return image_type, width, height, data[4:]
    picture = Image.open(io.BytesIO(data)).convert("RGB")
    return image_type, picture.width, picture.height, picture.tobytes()


class _LatestFrame:
    """The newest frame of the streamed camera, with a condition to wait for the next one."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.image: CameraImage | None = None
        self.serial = 0

    def put(self, image: CameraImage) -> None:
        with self.cond:
            self.image, self.serial = image, self.serial + 1
            self.cond.notify_all()

    def wait_newer(self, serial: int, timeout: float) -> tuple[CameraImage | None, int]:
        with self.cond:
            self.cond.wait_for(lambda: self.serial > serial, timeout)
            return self.image, self.serial


class ImageServer:
    """Streams one robot camera to every connected image client."""

    def __init__(self, sim: "Simulator", host: str = "127.0.0.1", port: int = 5003, *,
                 image_type: int = 2, frame_rate: float = 10.0) -> None:
        if image_type != RAW and image_type not in JPEG_QUALITY:
            raise ValueError(f"image type must be 0 (raw) or 1..5 (JPEG), got {image_type}")
        if not frame_rate > 0:
            raise ValueError(f"frame rate must be positive, got {frame_rate}")
        self.sim = sim
        self.host = host
        self.port = port
        self.image_type = image_type
        self.frame_period = 1.0 / frame_rate
        self._frames = _LatestFrame()
        self._selected: tuple[str, str] | None = None
        self._streamed: tuple[str, str] | None = None
        self._clients: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._listener: socket.socket | None = None
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    # --- camera selection ------------------------------------------------------------------
    def select(self, robot: str, camera: str | None = None) -> bool:
        """Stream ``camera`` (default: the robot's first camera) of ``robot``; False if it has none."""
        found = self._camera(robot, camera)
        if found is None:
            return False
        with self._lock:
            self._selected = (robot, found.name)
        return True

    def _camera(self, robot_name: str, camera: str | None) -> Camera | None:
        robot = self.sim.robots.get(robot_name)
        if robot is None:
            return None
        cams = [s for s in robot.sensors if isinstance(s, Camera) and (camera is None or s.name == camera)]
        return cams[0] if cams else None

    def _current(self) -> tuple[str, str] | None:
        """The (robot, camera) to stream now: the selection if it still exists, else the default."""
        with self._lock:
            selected = self._selected
        if selected and self._camera(*selected):
            return selected
        for name in list(self.sim.robots):
            cam = self._camera(name, None)
            if cam is not None:
                return name, cam.name
        return None

    def _on_tick(self, now: float, readings: Sequence[Reading]) -> None:
        # runs in the stepping thread: keep the streamed camera rendering, pass its frames on
        with self._lock:
            wanted = bool(self._clients)
        target = self._current() if wanted else None
        if target != self._streamed:
            self._set_active(self._streamed, False)
            self._set_active(target, True)
            self._streamed = target
        if target is None:
            return
        for r in readings:
            if isinstance(r, CameraImage) and (r.robot, r.sensor) == target:
                self._frames.put(r)

    def _set_active(self, target: tuple[str, str] | None, on: bool) -> None:
        cam = self._camera(*target) if target else None
        if cam is not None:
            cam.active = on or cam.params.always_on  # type: ignore[attr-defined]

    # --- serving ---------------------------------------------------------------------------
    def start(self) -> None:
        """Bind and accept clients in a background thread."""
        self._listener = socket.create_server((self.host, self.port))
        self._listener.settimeout(0.2)
        self.port = self._listener.getsockname()[1]
        self.sim.add_listener(self._on_tick)
        self._spawn(self._accept_loop, "image-accept")
        log.info("image server on %s:%d (type %d)", self.host, self.port, self.image_type)

    def _spawn(self, target, name: str, *args: object) -> None:
        thread = threading.Thread(target=target, args=args, name=name, daemon=True)
        self._threads.append(thread)
        thread.start()

    def _accept_loop(self) -> None:
        assert self._listener is not None
        while not self._stop.is_set():
            try:
                conn, addr = self._listener.accept()
            except socket.timeout:
                continue
            except OSError:
                break
            conn.settimeout(ACK_TIMEOUT)
            with self._lock:
                self._clients.add(conn)
            self._spawn(self._serve, f"image-{addr[1]}", conn)

    def _serve(self, conn: socket.socket) -> None:
        serial = 0
        try:
            while not self._stop.is_set():
                image, serial = self._frames.wait_newer(serial, timeout=0.5)
                if image is None or self._stop.is_set():
                    continue
                conn.sendall(encode_image(image, self.image_type))
                sent_at = time.monotonic()
                if not self._wait_ack(conn):
                    break
                # cap the rate: the next image no earlier than one frame period after this one
                self._stop.wait(max(0.0, self.frame_period - (time.monotonic() - sent_at)))
        except OSError as exc:  # client went away or timed out
            log.info("image client dropped: %s", exc)
        finally:
            with self._lock:
                self._clients.discard(conn)
            conn.close()

    def _wait_ack(self, conn: socket.socket) -> bool:
        received = b""
        while b"OK" not in received.upper():
            chunk = conn.recv(256)
            if not chunk or len(received) > MAX_ACK_BYTES:
                return False
            received += chunk
        return True

    def stop(self) -> None:
        """Close the listening socket and every client."""
        self._stop.set()
        self.sim.remove_listener(self._on_tick)
        if self._listener is not None:
            self._listener.close()
        with self._lock:
            clients = list(self._clients)
        for conn in clients:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        for thread in self._threads:
            thread.join(timeout=2.0)
        self._set_active(self._streamed, False)
        self._streamed = None
