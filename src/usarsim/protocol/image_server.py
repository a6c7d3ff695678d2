"""USARSim image server (default TCP 5003): robot camera frames, one per client request.

The wire format is in :mod:`usarsim.protocol.image_wire` and docs/protocol.md.
What a client receives (its *view*) is decided per client IP address:

- the camera selected for that address with ``SET {Type Camera} {Robot r} {Name c}
  {Client ip}`` on the protocol port (:meth:`ImageServer.select`), until released with
  ``SET {Type Camera} {Client ip}``;
- else the MultiView mosaic, when MultiView is configured;
- else the first camera of the oldest robot that has one.

A frame is sent only if it was rendered by the camera of the client's view, after the
frame the client got last, and its robot still exists; with no such frame the client
waits (so there is no frame while no camera exists). Cameras render only while some
connected client views them, at the server's frame rate.

Threads: one accept thread and one thread per connected client, at most
``max_clients``; a client thread notices its client leaving within ``POLL`` seconds
even while it waits for a frame, and ends.

Limits (docs/protocol.md, "Image server limits"): at most ``MAX_PENDING`` requests are
queued per client, past which the server stops reading that client (TCP pushes back on
it); a client that neither sent a request nor was sent a frame for ``idle_timeout`` is
closed, also while it waits for a camera that does not exist; a client that does not take
a frame off the wire within ``send_timeout`` is dropped (at most one frame and the socket
buffer wait for it); log lines are rate-limited per client address.
"""
from __future__ import annotations

import collections
import ipaddress
import logging
import math
import os
import select
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

from PIL import Image

from usarsim.log_budget import LogBudget
from usarsim.protocol.image_wire import Encoding, FrameRequest, RequestParser, crop, encode_frame
from usarsim.protocol.multiview import MultiViewConfig, assign_tiles, compose, fit
from usarsim.sim.readings import CameraImage, Reading
from usarsim.sim.sensors.camera import Camera

if TYPE_CHECKING:
    from usarsim.sim.simulator import Simulator

log = logging.getLogger(__name__)

POLL = 0.1  # s between checks of a waiting client's socket (bounds how long a closed client's thread lives)
MAX_JUNK = 1024  # bytes in a row that are no request: the client is dropped
MAX_PENDING = 16  # requests queued per client (enough for every tile of a MultiView mosaic)
READ_SIZE = 4096  # bytes read from a client at a time, and at most buffered unparsed
SEND_BUFFER = 256 * 1024  # bytes the kernel holds for a client that reads slowly (one raw 320x240 frame)


@dataclass(frozen=True)
class ImageOptions:
    """What the image server sends: encoding, frame rate, size, start mode, limits, MultiView."""

    encoding: Encoding = field(default_factory=Encoding)
    frame_rate: float = 10.0  # frames per second at most, per client; cameras render at this rate
    size: tuple[int, int] | None = None  # single-camera frames scaled to fit (aspect kept); None: as rendered
    legacy: bool = True  # one frame at connect without a request (UT2004 manual); False: only on request (UDK)
    max_clients: int = 16
    idle_timeout: float = 60.0  # s with no request received and no frame sent before a client is closed
    send_timeout: float = 30.0  # s a client may take to take a frame off the wire before it is dropped
    multiview: MultiViewConfig | None = None

    def __post_init__(self) -> None:
        if not (math.isfinite(self.frame_rate) and 0 < self.frame_rate <= 1000):
            raise ValueError(f"frame rate must be in (0, 1000] frames per second, got {self.frame_rate}")
        if self.size is not None and not all(0 < side <= 4096 for side in self.size):
            raise ValueError(f"image size must be 1..4096 pixels a side, got {self.size}")
        if self.max_clients < 1:
            raise ValueError(f"the image client limit must be at least 1, got {self.max_clients}")
        if not (self.idle_timeout > 0 and self.send_timeout > 0):
            raise ValueError(f"idle and send timeouts must be positive, got {self.idle_timeout}, "
                             f"{self.send_timeout}")


@dataclass(frozen=True)
class CameraView:
    """One robot camera, by robot and camera name."""

    robot: str
    camera: str


MULTIVIEW = "MultiView"  # the view of the mosaic
View = CameraView | str | None


@dataclass(frozen=True)
class _Frame:
    serial: int
    robot: Any  # the Robot instance that rendered it (a robot of the same name spawned later is another)
    image: CameraImage


class _FrameStore:
    """The newest frame of each camera, numbered in arrival order; waiters are woken on each."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self._frames: dict[tuple[str, str], _Frame] = {}
        self._serial = 0

    def put(self, robot: Any, image: CameraImage) -> None:
        with self.cond:
            self._serial += 1
            self._frames[(image.robot, image.sensor)] = _Frame(self._serial, robot, image)
            self.cond.notify_all()

    def get(self, robot: str, camera: str) -> _Frame | None:
        return self._frames.get((robot, camera))

    def keep_only(self, live: dict[str, Any]) -> None:
        """Forget frames whose robot is gone (or was replaced by a namesake)."""
        with self.cond:
            for key in [k for k, f in self._frames.items() if live.get(k[0]) is not f.robot]:
                del self._frames[key]

    def wait(self, timeout: float) -> None:
        with self.cond:
            self.cond.wait(timeout)


def cameras_of(robot: Any) -> list[Camera]:
    """A robot's cameras in catalogue order."""
    return [s for s in robot.sensors if isinstance(s, Camera)]


def normalise_ip(address: str) -> str:
    """The canonical text of an IP address (IPv4-mapped IPv6 as IPv4); other text unchanged."""
    try:
        ip = ipaddress.ip_address(address.strip())
    except ValueError:
        return address.strip()
    mapped = getattr(ip, "ipv4_mapped", None)
    return str(mapped or ip)


class _Dropped(Exception):
    """The client is closed by the server, for the reason given."""


class _Client:
    """One image connection: its socket, pending requests and what it was sent last."""

    def __init__(self, sock: socket.socket, ip: str) -> None:
        self.sock = sock
        self.ip = ip
        self.parser = RequestParser()
        self.pending: collections.deque[FrameRequest] = collections.deque()
        self.last_serial = 0
        self.last_sent = -math.inf
        self.last_activity = time.monotonic()  # a request received or a frame sent
        self._more = False  # whole requests may wait in the parser's buffer

    def poll(self, timeout: float) -> bool:
        """Take in what the client sent within ``timeout``; False once it has closed.

        With ``MAX_PENDING`` requests queued nothing is read: the bytes wait in the kernel,
        and a flooding client's sends block, instead of the queue growing.
        """
        room = MAX_PENDING - len(self.pending)
        if room <= 0:
            time.sleep(max(0.0, timeout))
            return True
        data = b""
        if self.parser.buffered < READ_SIZE:  # else parse what is buffered before reading more
            readable, _, _ = select.select([self.sock], [], [], 0.0 if self._more else max(0.0, timeout))
            if readable:
                data = self.sock.recv(READ_SIZE)
                if not data:
                    return False
            elif not self._more:
                return True
        requests = self.parser.feed(data, room)
        self._more = len(requests) == room  # the limit may have left whole requests in the buffer
        if requests:
            self.pending.extend(requests)
            self.last_activity = time.monotonic()
        if self.parser.junk > MAX_JUNK:
            raise _Dropped(f"{self.parser.junk} bytes that are no request (OK or U)")
        return True

    def check_idle(self, limit: float) -> None:
        """Raise ``_Dropped`` once the client has neither asked for nor been sent a frame for ``limit`` s."""
        if time.monotonic() - self.last_activity > limit:
            raise _Dropped(f"no request received and no frame sent for {limit:g} s")


class ImageServer:
    """Serves robot camera frames to image clients; see the module docstring."""

    def __init__(self, sim: "Simulator", host: str = "127.0.0.1", port: int = 5003,
                 options: ImageOptions | None = None) -> None:
        self.sim = sim
        self.host = host
        self.port = port
        self.options = options or ImageOptions()
        self._store = _FrameStore()
        self._lock = threading.Lock()
        self._selected: dict[str, CameraView] = {}  # client IP -> its camera
        self._client_ips: collections.Counter[str] = collections.Counter()
        self._tiles: dict[int, tuple[str, Any]] = {}  # MultiView tile -> (robot name, Robot)
        self._streamed: dict[Camera, float] = {}  # cameras rendering for clients -> their own interval
        self._stream_lock = threading.Lock()  # the stepping thread and stop() both switch cameras
        self._listener: socket.socket | None = None
        self._stop = threading.Event()
        self._accept_thread: threading.Thread | None = None
        self._clients: dict[threading.Thread, _Client] = {}  # each client's thread -> the client
        self._refused = 0
        self._log = LogBudget(log)

    # --- selection ---------------------------------------------------------------------------
    def select(self, client_ip: str, robot: str, camera: str | None = None) -> str | None:
        """Send ``client_ip`` that camera (default: the robot's first); its name, None if there is none."""
        found = self._camera(robot, camera)
        if found is None:
            return None
        with self._lock:
            self._selected[normalise_ip(client_ip)] = CameraView(robot, found.name)
        return found.name

    def release(self, client_ip: str) -> None:
        """``client_ip`` goes back to the default view."""
        with self._lock:
            self._selected.pop(normalise_ip(client_ip), None)

    def view_for(self, client_ip: str) -> View:
        """What a client at ``client_ip`` receives now (None: nothing to send)."""
        with self._lock:
            selected = self._selected.get(normalise_ip(client_ip))
        if selected is not None:
            return selected  # kept while its robot is away: that client waits rather than sees another camera
        if self.options.multiview is not None:
            return MULTIVIEW
        for name, robot in list(self.sim.robots.items()):
            cams = cameras_of(robot)
            if cams:
                return CameraView(name, cams[0].name)
        return None

    def _camera(self, robot_name: str, camera: str | None) -> Camera | None:
        robot = self.sim.robots.get(robot_name)
        if robot is None:
            return None
        return next((c for c in cameras_of(robot) if camera is None or c.name == camera), None)

    # --- the stepping thread -----------------------------------------------------------------
    def _on_tick(self, now: float, readings: Sequence[Reading]) -> None:
        live = dict(self.sim.robots)
        if self.options.multiview is not None:
            self._update_tiles(live)
        wanted = self._wanted_cameras(live)
        self._stream(wanted)
        names = {(cam.robot.name, cam.name) for cam in wanted}
        for r in readings:
            if isinstance(r, CameraImage) and (r.robot, r.sensor) in names and r.robot in live:
                self._store.put(live[r.robot], r)
        self._store.keep_only(live)

    def _update_tiles(self, live: dict[str, Any]) -> None:
        with_camera = [(name, robot) for name, robot in live.items() if cameras_of(robot)]
        tiles = assign_tiles(self._tiles, with_camera, self.options.multiview.cameras)  # type: ignore[union-attr]
        if tiles != self._tiles:
            self._tiles = tiles  # replaced whole: client threads read it without a lock

    def _wanted_cameras(self, live: dict[str, Any]) -> set[Camera]:
        with self._lock:
            ips = list(self._client_ips)
        wanted: set[Camera] = set()
        for ip in ips:
            view = self.view_for(ip)
            if view == MULTIVIEW:
                wanted.update(cameras_of(robot)[0] for _, robot in self._tiles.values())
            elif isinstance(view, CameraView) and view.robot in live:
                wanted.update(c for c in cameras_of(live[view.robot]) if c.name == view.camera)
        return wanted

    def _stream(self, wanted: set[Camera]) -> None:
        """Cameras in ``wanted`` render at the frame rate; the others go back to their own settings."""
        period = 1.0 / self.options.frame_rate
        with self._stream_lock:
            for cam in [c for c in self._streamed if c not in wanted]:
                cam.interval = self._streamed.pop(cam)
                cam.active = bool(cam.params.always_on)  # type: ignore[attr-defined]
            for cam in wanted:
                if cam not in self._streamed:
                    self._streamed[cam] = cam.interval
                    cam.interval = min(cam.interval, period)
                    cam.active = True

    # --- frames for one client ---------------------------------------------------------------
    def picture_for(self, view: View, after: int = 0) -> tuple[int, Image.Image] | None:
        """(serial, picture) of the newest frame of ``view`` newer than ``after`` whose robot exists."""
        if view is None:
            return None
        if isinstance(view, CameraView):
            frame = self._live_frame(view.robot, view.camera)
            if frame is None or frame.serial <= after:
                return None
            picture = _picture(frame.image)
            size = self.options.size
            return frame.serial, fit(picture, *size) if size else picture
        config = self.options.multiview
        if config is None:
            return None
        frames: dict[int, _Frame] = {}
        for index, (name, robot) in self._tiles.items():
            cams = cameras_of(robot)
            frame = self._live_frame(name, cams[0].name) if cams else None
            if frame is not None:
                frames[index] = frame
        newest = max((f.serial for f in frames.values()), default=0)
        if newest <= after:
            return None
        return newest, compose(config, {i: _picture(f.image) for i, f in frames.items()})

    def _live_frame(self, robot: str, camera: str) -> _Frame | None:
        frame = self._store.get(robot, camera)
        if frame is None or self.sim.robots.get(robot) is not frame.robot:
            return None
        return frame

    # --- serving -----------------------------------------------------------------------------
    def start(self) -> None:
        """Bind and accept clients in a background thread (raises OSError if the port is taken)."""
        try:
            self._listener = socket.create_server((self.host, self.port))
        except OSError as exc:  # say which of the two servers could not bind
            reason = os.strerror(exc.errno) if exc.errno else str(exc)
            raise OSError(exc.errno, f"image server cannot listen on {self.host}:{self.port}: {reason}") from None
        self._listener.settimeout(0.2)
        self.port = self._listener.getsockname()[1]
        self.sim.add_listener(self._on_tick)
        self._accept_thread = threading.Thread(target=self._accept_loop, name="image-accept", daemon=True)
        self._accept_thread.start()
        log.info("image server on %s:%d (type %d, %.3g fps)", self.host, self.port,
                 self.options.encoding.image_type, self.options.frame_rate)

    @property
    def client_threads(self) -> int:
        """Client threads alive now (at most one per open connection)."""
        with self._lock:
            return len(self._clients)

    @property
    def queued_requests(self) -> int:
        """The most requests any connected client has waiting now (at most ``MAX_PENDING``)."""
        with self._lock:
            return max((len(c.pending) for c in self._clients.values()), default=0)

    @property
    def refused(self) -> int:
        """Connections closed at once because ``max_clients`` were being served."""
        return self._refused

    def _accept_loop(self) -> None:
        assert self._listener is not None
        while not self._stop.is_set():
            try:
                conn, addr = self._listener.accept()
            except socket.timeout:
                continue
            except OSError:
                break
            with self._lock:
                full = len(self._clients) >= self.options.max_clients
            if full:
                self._refuse(conn, normalise_ip(addr[0]))
                continue
            client = _Client(conn, normalise_ip(addr[0]))
            conn.settimeout(self.options.send_timeout)
            try:
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER)
            except OSError:
                pass
            worker = threading.Thread(target=self._serve, args=(client,), name=f"image-{addr[1]}", daemon=True)
            with self._lock:
                self._clients[worker] = client
                self._client_ips[client.ip] += 1
            worker.start()

    def _refuse(self, conn: socket.socket, ip: str) -> None:
        """Close at once (no bytes: a text message would read as a frame header to an image client)."""
        self._refused += 1
        self._log.log(logging.WARNING, ("full", ip), "image server full (%d clients): refused %s (%d refused in all)",
                      self.options.max_clients, ip, self._refused)
        conn.close()

    def _serve(self, client: _Client) -> None:
        try:
            if self.options.legacy:
                client.pending.append(FrameRequest())
            while not self._stop.is_set():
                if not client.pending:
                    client.check_idle(self.options.idle_timeout)
                    if not client.poll(POLL):
                        break
                    continue
                if not self._deliver(client, client.pending.popleft()):
                    break
        except _Dropped as exc:
            self._log.log(logging.INFO, client.ip, "image client %s closed: %s", client.ip, exc)
        except socket.timeout:
            self._log.log(logging.INFO, client.ip, "image client %s dropped: took no frame off the wire for %g s",
                          client.ip, self.options.send_timeout)
        except OSError as exc:  # went away
            self._log.log(logging.INFO, client.ip, "image client %s dropped: %s", client.ip, exc)
        except Exception:  # noqa: BLE001 - a fault serving one client must not end silently
            log.exception("image client %s dropped after an internal error", client.ip)
        finally:
            client.sock.close()
            with self._lock:
                self._clients.pop(threading.current_thread(), None)
                self._client_ips[client.ip] -= 1
                if self._client_ips[client.ip] <= 0:
                    del self._client_ips[client.ip]

    def _deliver(self, client: _Client, request: FrameRequest) -> bool:
        """Send the client its next frame; False if it left (or the server stops) first."""
        period = 1.0 / self.options.frame_rate
        while not self._stop.is_set():  # no sooner than one frame period after the last one
            wait = client.last_sent + period - time.monotonic()
            if wait <= 0:
                break
            if not client.poll(min(wait, POLL)):
                return False
        while not self._stop.is_set():
            found = self.picture_for(self.view_for(client.ip), client.last_serial)
            if found is not None:
                serial, picture = found
                client.sock.sendall(encode_frame(crop(picture, request.rect), self.options.encoding))
                client.last_serial, client.last_sent = serial, time.monotonic()
                client.last_activity = client.last_sent
                return True
            self._store.wait(POLL)
            if not client.poll(0):
                return False
            client.check_idle(self.options.idle_timeout)
        return False

    def stop(self) -> None:
        """Close the listening socket and every client; cameras go back to their own settings."""
        self._stop.set()
        self.sim.remove_listener(self._on_tick)
        if self._listener is not None:
            self._listener.close()
        if self._accept_thread is not None:
            self._accept_thread.join(timeout=2.0)
        with self._lock:
            workers = list(self._clients)
        for worker in workers:
            worker.join(timeout=2.0)
        self._stream(set())


def _picture(image: CameraImage) -> Image.Image:
    return Image.frombytes("RGB", (image.width, image.height), image.rgb)


__all__ = ["ImageServer", "ImageOptions", "CameraView", "MULTIVIEW", "cameras_of", "normalise_ip"]
