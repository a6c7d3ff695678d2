"""USARSim text-protocol server: asyncio TCP (default port 3000), one robot per connection.

Threads: the simulator steps in its own thread and hands every tick's
readings to :meth:`ProtocolServer._on_tick`, which only filters them and
schedules formatting on the server's event loop (``call_soon_threadsafe``);
the event loop (one background thread) owns every socket. Commands go the
other way through ``Simulator.submit`` and are applied at the next tick.

Back-pressure: each connection has a bounded outgoing queue. When it is full
the oldest SEN line is dropped first (then the oldest STA/MISSTA); replies
(NFO, GEO, CONF, RES, ERR) are never dropped. A slow client therefore loses
stale sensor data but never stalls the simulator or other clients.
"""
from __future__ import annotations

import asyncio
import collections
import logging
import socket
import threading
import time
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, Sequence

from usarsim.config_loading import ConfigError
from usarsim.protocol import commands as pc
from usarsim.protocol import comstation
from usarsim.protocol import grammar as g
from usarsim.protocol import messages as pm
from usarsim.protocol import units as wire_units
from usarsim.sim import readings as rd
from usarsim.sim.commands import Command, CommandError, SetTrace

if TYPE_CHECKING:
    from usarsim.sim.simulator import Simulator

log = logging.getLogger(__name__)

DEFAULT_PORT = 3000
DEFAULT_IMAGE_PORT = 5003
MAX_CONNECTIONS = 16  # BotAPI.ini MaxConnections
QUEUE_SIZE = 256  # outgoing lines per connection before SEN lines are dropped
REPLY_TIMEOUT = 10.0  # s to wait for a SET to be applied by the simulator
STREAM_KINDS = ("SEN", "STA", "MISSTA")  # droppable periodic messages
_SKIP_READINGS = (rd.CameraImage, rd.JointStateReading)  # no text form (images go to the image server)


class _Connection:
    """One client socket and the robot it controls (at most one)."""

    def __init__(self, server: "ProtocolServer", reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter, cid: int) -> None:
        self.server = server
        self.reader = reader
        self.writer = writer
        self.cid = cid
        self.peer = writer.get_extra_info("peername")
        self.robot: str | None = None
        self.spec: Any = None
        self.stamped: dict[str, bool] = {}
        self.queue: collections.deque[tuple[str, str]] = collections.deque()
        self.ready = asyncio.Event()
        self.closed = False
        self.dropped = 0
        self.writer_task: asyncio.Task | None = None

    # --- outgoing -------------------------------------------------------------------------
    def send(self, kind: str, line: str) -> None:
        """Queue a line (event-loop thread only); drops stale SEN/STA when the queue is full."""
        if self.closed:
            return
        if self.server.wire_out is not None:  # --units unreal
            line = self.server.wire_out(line)
        if kind in STREAM_KINDS and len(self.queue) >= self.server.queue_size:
            if not self._drop_one():
                self.dropped += 1  # nothing older to drop: drop the new line itself
                return
        self.queue.append((kind, line))
        self.server._pending += 1
        self.ready.set()

    def _drop_one(self) -> bool:
        for wanted in (("SEN",), ("STA", "MISSTA")):
            for i, (kind, _) in enumerate(self.queue):
                if kind in wanted:
                    del self.queue[i]
                    self.server._pending -= 1
                    self.dropped += 1
                    if self.dropped in (1, 10, 100) or self.dropped % 1000 == 0:
                        log.warning("client %s is slow: %d periodic lines dropped", self.peer, self.dropped)
                    return True
        return False

    def err(self, command: str, reason: str) -> None:
        self.send("ERR", g.format_err(command, reason))

    def timestamped(self, robot: str, sensor: str) -> bool:
        return self.stamped.get(sensor, False)

    async def write_loop(self) -> None:
        try:
            while not self.closed:
                if not self.queue:
                    self.ready.clear()
                    await self.ready.wait()
                    continue
                chunk = []
                while self.queue and len(chunk) < 64:
                    chunk.append(self.queue.popleft()[1])
                self.server._pending -= len(chunk)
                self.writer.write("".join(chunk).encode("ascii", "replace"))
                await self.writer.drain()
        except (ConnectionError, OSError, asyncio.CancelledError):
            pass
        finally:
            self.closed = True

    # --- incoming -------------------------------------------------------------------------
    async def read_loop(self) -> None:
        limit = self.server.max_line
        buf = bytearray()
        discarding = False  # inside an over-long line: skip up to its newline
        while not self.closed:
            try:
                chunk = await self.reader.read(65536)
            except (ConnectionError, OSError):
                break
            if not chunk:
                break
            buf += chunk
            while True:
                nl = buf.find(b"\n")
                if nl < 0:
                    if len(buf) > limit + 2:
                        if not discarding:
                            self.err("UNKNOWN", f"line longer than {limit} bytes without a newline; "
                                                f"discarded up to the next newline")
                            discarding = True
                        buf.clear()
                    break
                raw = bytes(buf[:nl + 1])
                del buf[:nl + 1]
                if discarding:
                    discarding = False
                    continue
                try:
                    await self.handle(raw)
                except Exception as exc:  # noqa: BLE001 - one bad command never drops the client
                    log.exception("error handling %r", raw[:80])
                    self.err(_word_of(raw), f"internal error: {exc}")

    async def handle(self, raw: bytes) -> None:
        """Parse and execute one line."""
        if not raw.strip():
            return
        try:
            if self.server.wire_in is not None:  # --units unreal
                raw = self.server.wire_in(raw.decode("ascii", "replace")).encode("utf-8")
            line = g.parse_line(raw, max_length=self.server.max_line)
            cmd = g.parse_command(line)
        except g.ProtocolError as exc:
            self.err(_word_of(raw), str(exc))
            return
        if line.problems:
            log.debug("%s: ignored %s", line.type, "; ".join(line.problems))
        word = line.type
        sim = self.server.sim
        if isinstance(cmd, g.GetStartPoses):
            self.send("NFO", pm.nfo_start_poses(sim.spec.start_poses))
            return
        if isinstance(cmd, g.Init):
            await self._init(cmd)
            return
        if isinstance(cmd, g.Set) and _is_viewpoint(cmd):
            self._viewpoint(cmd)  # any connection may choose what an image client sees
            return
        if self.robot is None:
            self.err(word, "no robot on this connection: send INIT first")
            return
        robot, spec = self.robot, self.spec
        if spec is None:  # a ComStation's connection
            self._station_command(word, cmd)
            return
        try:
            if isinstance(cmd, g.Drive):
                self._submit(word, pc.drive_commands(cmd, robot, spec))
            elif isinstance(cmd, g.MultiDrive):
                self._submit(word, pc.multidrive_commands(cmd, robot))
            elif isinstance(cmd, g.MisPkg):
                self._submit(word, pc.mispkg_commands(cmd, robot, spec))
            elif isinstance(cmd, g.Camera):
                self._submit(word, pc.camera_commands(cmd, robot, spec))
            elif isinstance(cmd, g.Set):
                await self._set(cmd)
            elif isinstance(cmd, (g.GetGeo, g.GetConf)):
                self._query(cmd)
            elif isinstance(cmd, g.Trace):
                self._submit(word, [SetTrace(robot, cmd.on, cmd.interval, cmd.color)])
            else:  # pragma: no cover - every grammar command is handled above
                self.err(word, "command not supported")
        except pc.Unsupported as exc:
            self.err(word, str(exc))
        except CommandError as exc:  # a core command refused its values at construction
            self.err(word, str(exc))

    async def _init(self, cmd: g.Init) -> None:
        lost = self.spec is not None and self.robot not in self.server.sim.robots  # fell out of the world
        if self.robot is not None and not lost:
            self.err("INIT", f"this connection already controls robot '{self.robot}' (one robot per connection)")
            return
        if cmd.name is not None and cmd.name in self.server.sim.robots:
            self.err("INIT", f"a robot named '{cmd.name}' already exists")
            return
        try:
            req = pc.spawn_request(cmd)
        except pc.Unsupported as exc:
            self.err("INIT", str(exc))
            return
        sim = self.server.sim
        loop = asyncio.get_running_loop()
        if req.station:
            try:
                self.robot = await loop.run_in_executor(None, lambda: sim.add_station(
                    req.name, req.position, start=req.start))
            except CommandError as exc:
                self.err("INIT", str(exc))
            return
        try:
            robot = await loop.run_in_executor(None, lambda: sim.spawn(
                req.class_name, req.name, start=req.start, position=req.position, rpy=req.rpy))
        except (ConfigError, CommandError, ValueError, RuntimeError, OSError) as exc:
            self.err("INIT", str(exc))
            return
        if self.closed:  # the client left while the robot was being built
            await loop.run_in_executor(None, sim.remove, robot.name)
            return
        self.robot, self.spec = robot.name, robot.spec
        self.stamped = {s.name: bool(getattr(s.params, "with_timestamp", False)) for s in robot.sensors}
        self.server._owned = {**self.server._owned, robot.name: self}
        log.info("client %s controls %s (%s)", self.peer, robot.name, robot.spec.class_name)

    def _station_command(self, word: str, cmd: Any) -> None:
        wireless = self.server.sim.wireless
        ground = wireless.station_ground(self.robot)
        reply = None if ground is None else comstation.station_reply(cmd, self.robot, ground, wireless.comm)
        if reply is None:
            self.err(word, f"'{self.robot}' is a ComStation: it answers GETGEO and GETCONF only")
        else:
            self.send(*reply)

    def _submit(self, word: str, cmds: Sequence[Command]) -> None:
        for cmd in cmds:
            future = self.server.sim.submit(cmd)
            future.add_done_callback(lambda f, w=word: self.server._report_failure(self, w, f))

    async def _set(self, cmd: g.Set) -> None:
        sim = self.server.sim
        req = pc.set_request(cmd, self.robot, self.spec)  # type: ignore[arg-type]
        results: list[Any] = []
        for c in req.commands:
            future = asyncio.wrap_future(sim.submit(c))
            try:
                results.append(await asyncio.wait_for(future, REPLY_TIMEOUT))
            except (CommandError, ValueError, asyncio.TimeoutError) as exc:
                results.append(exc)
        self.send("RES", pc.set_reply(req, sim.time, results))

    def _viewpoint(self, cmd: g.Set) -> None:
        # SET {Type Camera} {Robot r} [{Name c}] [{Client ip}]: image client ip (default: this
        # connection's address) is sent that camera (Robot defaults to this connection's robot when a
        # Name is given); with neither Robot nor Name, ip goes back to the default view.
        images = self.server.image_server
        client = cmd.client if cmd.client is not None else str(self.peer[0] if self.peer else "")
        robot = cmd.robot if cmd.robot is not None else (self.robot if cmd.name is not None else None)
        camera = cmd.name
        if images is None:
            ok = False
        elif robot is None:
            ok = cmd.name is None  # a Name without any robot names nothing
            if ok:
                images.release(client)
        else:
            selected = images.select(client, robot, cmd.name)
            ok, camera = selected is not None, selected or cmd.name
        self.send("RES", g.format_res(self.server.sim.time, "Camera", camera, ok))

    def _query(self, cmd: g.GetGeo | g.GetConf) -> None:
        robot = self.server.sim.robots.get(self.robot) if self.robot else None
        if robot is None:
            self.err(cmd.word, f"robot '{self.robot}' no longer exists")
            return
        reply = pm.geo_reply if isinstance(cmd, g.GetGeo) else pm.conf_reply
        self.send(cmd.word[3:], reply(robot, cmd.type, cmd.name))


def _is_viewpoint(cmd: g.Set) -> bool:
    """The viewpoint form of SET Camera (Robot and/or Client, no FOV list)."""
    return cmd.type == "Camera" and not cmd.cameras and (cmd.client is not None or cmd.robot is not None)


def _word_of(raw: bytes) -> str:
    """The command word of a (possibly broken) line, for ERR {Command ...}."""
    head = raw.lstrip()[:32].split(b" ", 1)[0].split(b"{", 1)[0].strip()
    try:
        word = head.decode("ascii")
    except UnicodeDecodeError:
        return "UNKNOWN"
    return word.upper() if word.isalpha() else "UNKNOWN"


class ProtocolServer:
    """The USARSim TCP front door of a :class:`~usarsim.sim.simulator.Simulator`.

    ``start()`` binds (``port=0`` picks a free port, see :attr:`port`), starts
    the simulator's paced loop (realtime/fast) or a lockstep loop that steps
    only when every client has been sent everything, and returns. With
    ``image_port`` (default 5003; None: none; 0: a free port) the image server
    is started next to it, and :attr:`image_port` then holds its bound port.
    """

    def __init__(self, sim: "Simulator", host: str = "127.0.0.1", port: int = DEFAULT_PORT,
                 image_port: int | None = DEFAULT_IMAGE_PORT, *, queue_size: int = QUEUE_SIZE,
                 max_connections: int = MAX_CONNECTIONS, max_line: int = g.MAX_LINE_LENGTH,
                 run_simulator: bool = True, image_options: Any = None, dialect: str = "ut2004",
                 units: str = "si") -> None:
        if queue_size < 1:
            raise ValueError("queue_size must be at least 1")
        if dialect not in g.DIALECTS:
            raise ValueError(f"dialect must be one of {', '.join(g.DIALECTS)}, got {dialect!r}")
        self.dialect = dialect  # STA and Sonar/IR/Encoder/Touch forms (docs/protocol.md)
        self.units = units
        self.wire_in, self.wire_out = wire_units.converters(units) or (None, None)
        self.sim = sim
        self.host = host
        self.port = port
        self.image_port = image_port
        self.image_options = image_options  # ImageOptions for the image server (None: its defaults)
        self.queue_size = queue_size
        self.max_connections = max_connections
        self.max_line = max_line
        self.run_simulator = run_simulator
        self.image_server: Any = None
        # Unreal-style map name for NFO {Level}: yellow -> DM-USAR_yellow
        self.level = f"DM-USAR_{sim.spec.name}"
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.AbstractServer | None = None
        self._connections: set[_Connection] = set()
        self._owned: dict[str, _Connection] = {}  # robot -> connection; replaced, never mutated
        self._pending = 0  # lines queued on all connections (lockstep back-pressure)
        self._inflight = 0  # ticks handed to the loop but not yet formatted (lockstep)
        self._inflight_lock = threading.Lock()
        self._next_id = 0
        self._running = threading.Event()
        self._sim_started = False
        self._lockstep_thread: threading.Thread | None = None

    # --- lifecycle ------------------------------------------------------------------------
    def start(self) -> None:
        """Bind, start the event loop thread (and the simulator), return once listening."""
        if self._thread is not None:
            return
        bound = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)
            try:
                self._server = loop.run_until_complete(
                    asyncio.start_server(self._accept, self.host, self.port, limit=self.max_line + 2))
                self.port = self._server.sockets[0].getsockname()[1]
            except BaseException as exc:  # noqa: BLE001 - reported to start()
                failure.append(exc)
                bound.set()
                loop.close()
                return
            bound.set()
            try:
                loop.run_forever()
            finally:
                loop.run_until_complete(self._shutdown())
                loop.close()

        self._thread = threading.Thread(target=run, name="usarsim-protocol", daemon=True)
        self._thread.start()
        bound.wait()
        if failure:
            self._thread.join()
            self._thread = None
            raise failure[0]
        self._running.set()
        self.sim.add_listener(self._on_tick)
        self._start_images()
        if self.run_simulator:
            if self.sim.pacing == "lockstep":
                self._lockstep_thread = threading.Thread(target=self._lockstep, name="usarsim-lockstep",
                                                         daemon=True)
                self._lockstep_thread.start()
            else:
                # Only a loop this server started is stopped by stop(): a host (the ROS node)
                # that already runs the simulator keeps it running.
                self._sim_started = getattr(self.sim, "_thread", None) is None
                self.sim.start()
        log.info("USARSim protocol server on %s:%d (world %s, %s pacing)", self.host, self.port,
                 self.sim.spec.name, self.sim.pacing)

    def _start_images(self) -> None:
        if self.image_port is None:
            return
        try:
            from usarsim.protocol.image_server import ImageServer
        except ImportError:
            log.warning("image server not available; --image-port ignored")
            return
        self.image_server = ImageServer(self.sim, self.host, self.image_port, self.image_options)
        self.image_server.start()
        self.image_port = self.image_server.port  # the bound port (0 asks for a free one)

    def stop(self) -> None:
        """Close every connection (their robots are removed), stop the loop and the simulator."""
        if self._thread is None:
            return
        self._running.clear()
        self.sim.remove_listener(self._on_tick)
        if self._lockstep_thread is not None:
            self._lockstep_thread.join()
            self._lockstep_thread = None
        if self._sim_started:
            self.sim.stop()
            self._sim_started = False
        if self.image_server is not None:
            self.image_server.stop()
            self.image_server = None
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(loop.stop)
        self._thread.join()
        self._thread = None
        for robot in list(self._owned):
            self.sim.remove(robot)
        self._owned = {}

    def __enter__(self) -> "ProtocolServer":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def _shutdown(self) -> None:
        if self._server is not None:
            self._server.close()
        for conn in list(self._connections):
            conn.closed = True
            conn.ready.set()
            try:
                conn.writer.close()
            except Exception:  # noqa: BLE001
                pass
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def _lockstep(self) -> None:
        # Lockstep: step as fast as the slowest client reads, so no SEN is ever dropped.
        while self._running.is_set():
            if self._pending > 0 or self._inflight > 0 or self._unsent_bytes():
                time.sleep(0.0005)
                continue
            self.sim.step(1)
            if not self._owned:
                time.sleep(0.001)  # nobody listening: do not burn a core

    def _unsent_bytes(self) -> bool:
        """True while some transport still holds data the kernel has not taken (lockstep)."""
        try:
            conns = tuple(self._connections)
        except RuntimeError:  # the set changed while copying: look again next time
            return True
        for conn in conns:
            try:
                if not conn.closed and conn.writer.transport.get_write_buffer_size() > 0:
                    return True
            except (AttributeError, RuntimeError):
                continue
        return False

    # --- connections ----------------------------------------------------------------------
    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._next_id += 1
        conn = _Connection(self, reader, writer, self._next_id)
        try:
            writer.transport.set_write_buffer_limits(high=256 * 1024)
            if self.sim.pacing == "lockstep":
                # keep the kernel from buffering seconds of data ahead of a slow reader
                sock = writer.get_extra_info("socket")
                if sock is not None:
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 64 * 1024)
        except (AttributeError, NotImplementedError, OSError):
            pass
        if len(self._connections) >= self.max_connections:
            writer.write(g.format_err("CONNECT", f"too many connections (at most {self.max_connections})")
                         .encode("ascii"))
            try:
                await writer.drain()
            finally:
                writer.close()
            return
        self._connections.add(conn)
        conn.send("NFO", pm.nfo_game(self.level))
        conn.writer_task = asyncio.ensure_future(conn.write_loop())
        try:
            await conn.read_loop()
        except asyncio.CancelledError:  # server shutting down
            pass
        finally:
            try:
                await self._close(conn)
            except asyncio.CancelledError:
                pass

    async def _close(self, conn: _Connection) -> None:
        conn.closed = True
        conn.ready.set()
        self._pending -= len(conn.queue)
        conn.queue.clear()
        self._connections.discard(conn)
        if conn.robot is not None:
            self._owned = {k: v for k, v in self._owned.items() if v is not conn}
            try:
                await asyncio.get_running_loop().run_in_executor(None, self.sim.remove, conn.robot)
            except Exception:  # noqa: BLE001 - the simulator may be closing
                log.debug("could not remove %s", conn.robot, exc_info=True)
            log.info("client %s left; robot %s removed", conn.peer, conn.robot)
        try:
            conn.writer.close()
        except Exception:  # noqa: BLE001
            pass
        if conn.writer_task is not None:
            conn.writer_task.cancel()

    def _report_failure(self, conn: _Connection, word: str, future: Future) -> None:
        # Runs in the simulator thread: hop to the loop before touching the connection.
        if future.cancelled() or future.exception() is None:
            return
        reason = str(future.exception())
        loop = self._loop
        if loop is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(conn.err, word, reason)
            except RuntimeError:
                pass

    # --- readings -------------------------------------------------------------------------
    def _on_tick(self, now: float, readings: Sequence[rd.Reading]) -> None:
        """Simulator-thread listener: keep readings of connected robots, format on the loop."""
        owned = self._owned
        if not owned or not readings:
            return
        mine = [r for r in readings if r.robot in owned and not isinstance(r, _SKIP_READINGS)]
        if not mine:
            return
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        with self._inflight_lock:
            self._inflight += 1
        try:
            loop.call_soon_threadsafe(self._dispatch, mine)
        except RuntimeError:  # loop closed between the check and the call
            with self._inflight_lock:
                self._inflight -= 1

    def _dispatch(self, readings: Sequence[rd.Reading]) -> None:
        try:
            self._format_and_queue(readings)
        finally:
            with self._inflight_lock:
                self._inflight -= 1

    def _format_and_queue(self, readings: Sequence[rd.Reading]) -> None:
        by_robot: dict[str, list[rd.Reading]] = {}
        for r in readings:
            by_robot.setdefault(r.robot, []).append(r)
        for robot, items in by_robot.items():
            conn = self._owned.get(robot)
            if conn is None or conn.closed:
                continue
            try:
                for kind, line in pm.format_readings(items, conn.timestamped, self.dialect):
                    conn.send(kind, line)
            except (g.ProtocolError, ValueError, TypeError) as exc:
                log.warning("cannot format readings of %s: %s", robot, exc)

    @property
    def connections(self) -> int:
        """Number of open client connections."""
        return len(self._connections)


__all__ = ["ProtocolServer", "DEFAULT_PORT", "DEFAULT_IMAGE_PORT", "QUEUE_SIZE", "MAX_CONNECTIONS"]
