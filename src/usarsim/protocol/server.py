"""USARSim text-protocol server: asyncio TCP (default port 3000), one robot per connection.

Threads: the simulator steps in its own thread and hands every tick's
readings to :meth:`ProtocolServer._on_tick`, which only keeps those of
connected robots and appends them to a backlog, waking the event loop (one
background thread) unless it is already due; the loop takes everything waiting,
formats each reading once, into the outbox of the connection that owns the
robot, and writes every connection's new lines in one socket write. The
physics thread never formats or writes. Commands go the other way through
``Simulator.submit`` and are applied at the next tick.

Resource limits (docs/protocol.md, "Limits and slow clients"): every outbox is
bounded (:mod:`usarsim.protocol.outbox`: stale SEN dropped first, a reply
overflow disconnects), a connection has a bounded number of commands waiting
for the simulator (reading pauses beyond it), a connection that sends no INIT
within ``init_timeout`` is closed, and at most ``max_connections`` are served.
"""
from __future__ import annotations

import asyncio
import collections
import functools
import logging
import socket
import threading
import time
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, Callable, Sequence

from usarsim.config_loading import ConfigError
from usarsim.protocol import commands as pc
from usarsim.protocol import comstation
from usarsim.protocol import dialect as eras
from usarsim.protocol import grammar as g
from usarsim.protocol import lockstep_input
from usarsim.protocol import messages as pm
from usarsim.protocol import units as wire_units
from usarsim.protocol.loop_thread import cancel_other_tasks
from usarsim.protocol.outbox import Outbox
from usarsim.sim import readings as rd
from usarsim.sim.commands import Command, CommandError, SetTrace

if TYPE_CHECKING:
    from usarsim.sim.simulator import Simulator

log = logging.getLogger(__name__)

DEFAULT_PORT = 3000
DEFAULT_IMAGE_PORT = 5003
MAX_CONNECTIONS = 16  # BotAPI.ini MaxConnections
QUEUE_SIZE = 256  # periodic lines (SEN/STA/MISSTA) per connection before the oldest SEN is dropped
REPLY_LIMIT = 1 << 20  # bytes of unread replies per connection before it is disconnected
WRITE_HIGH_WATER = 64 * 1024  # bytes the socket transport may hold before lines wait in the outbox
SEND_BUFFER = 256 * 1024  # bytes of kernel send buffer per connection (the kernel would grow it to MBs)
LOCKSTEP_SEND_BUFFER = 64 * 1024  # smaller in lockstep: a stalled reader shows within a few ticks
MAX_PENDING_COMMANDS = 256  # commands of one connection waiting for the simulator before reading pauses
INIT_TIMEOUT = 60.0  # s a connection may stay without a robot (INIT) before it is closed
LOCKSTEP_STALL = 2.0  # s a lockstep client may leave lines unread before the world goes on without it
REPLY_TIMEOUT = 10.0  # s to wait for a SET to be applied by the simulator
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
        self.asked_spec: Any = None  # the robot's spec under the class name its INIT used (UDK's P3AT)
        self.stamped: dict[str, bool] = {}
        self.dialect = eras.before_init(server.dialect)  # the era's wire forms, settled by INIT under auto
        self.outbox = Outbox(server.queue_size, server.reply_limit)
        self.closed = False
        self.close_reason: str | None = None
        self._drain_task: asyncio.Task | None = None
        self._reported_drops = 0
        self.commands_waiting = 0  # submitted, not yet applied (the simulator thread decrements)
        self._commands_lock = threading.Lock()
        # for lockstep's input barrier (protocol/lockstep_input.py)
        self.received = 0  # bytes read off the socket
        self.handled = 0  # bytes of lines handled, an incomplete last line included
        self.waiting_for_sim = 0  # a handler waits for a tick: a SET's reply, or room for more commands

    # --- outgoing -------------------------------------------------------------------------
    def send(self, kind: str, line: str) -> None:
        """Queue a reply and write what the socket takes (event-loop thread only).

        Readings of ticks already run are formatted first, so a reply never overtakes the SEN and
        STA lines of the ticks before it (e.g. an INS line from before a SET that reset it).
        """
        if self.server._backlog:
            self.server._format_backlog()
        self.queue(kind, line)
        self.flush()

    def queue(self, kind: str, line: str) -> None:
        """Queue a line without writing yet; a reply that overflows the outbox disconnects the client."""
        if self.closed:
            return
        if self.server.wire_out is not None:  # --units unreal
            line = self.server.wire_out(line)
        if not self.outbox.put(kind, line):
            self.abort(f"more than {self.outbox.reply_limit} bytes of replies unread")

    def flush(self) -> None:
        """Hand queued lines to the socket until its buffer passes the high-water mark."""
        if self.closed or self._drain_task is not None:
            return
        outbox, transport = self.outbox, self.writer.transport
        while len(outbox):
            if transport.is_closing():
                return
            self.writer.write("".join(outbox.take(512)).encode("ascii", "replace"))
            if transport.get_write_buffer_size() > WRITE_HIGH_WATER:
                self._drain_task = asyncio.ensure_future(self._drain_then_flush())
                break
        if outbox.dropped >= 2 * self._reported_drops + 1:  # 1, 3, 7, ...: rarer as it goes on
            self._reported_drops = outbox.dropped
            log.warning("client %s is slow: %d periodic lines dropped", self.peer, outbox.dropped)

    async def _drain_then_flush(self) -> None:
        try:
            await self.writer.drain()
        except (ConnectionError, OSError):
            self.closed = True
            return
        except asyncio.CancelledError:
            return
        self._drain_task = None
        self.flush()

    def backlogged(self) -> bool:
        """True while lines wait in the outbox or in the socket transport (any thread)."""
        if self.closed:
            return False
        if len(self.outbox):
            return True
        try:
            return self.writer.transport.get_write_buffer_size() > 0
        except (AttributeError, RuntimeError):
            return False

    def abort(self, reason: str) -> None:
        """Drop the client now, logging why (event-loop thread)."""
        if self.closed:
            return
        self.closed = True
        self.close_reason = reason
        log.warning("client %s disconnected: %s", self.peer, reason)
        self.outbox.clear()
        self.writer.transport.abort()

    def err(self, command: str, reason: str) -> None:
        self.send("ERR", g.format_err(command, reason))

    def stamped_sensor(self, sensor: str) -> bool:
        """Whether the sensor's SEN lines start with {Time} (its with_timestamp)."""
        return self.stamped.get(sensor, False)

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
            self.received += len(chunk)
            await asyncio.sleep(0)  # a client sending without pause must not keep the loop from the others
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
                    self.handled = self.received
                    break
                raw = bytes(buf[:nl + 1])
                del buf[:nl + 1]
                if discarding:
                    discarding = False
                    continue
                if self.commands_waiting >= MAX_PENDING_COMMANDS:
                    await self._wait_for_room()
                try:
                    await self.handle(raw)
                except Exception as exc:  # noqa: BLE001 - one bad command never drops the client
                    log.exception("error handling %r", raw[:80])
                    self.err(_word_of(raw), f"internal error: {exc}")

    async def _wait_for_room(self) -> None:
        self.waiting_for_sim += 1
        try:
            while self.commands_waiting >= MAX_PENDING_COMMANDS and not self.closed:
                await asyncio.sleep(0.002)  # back-pressure: the client's socket fills, not our memory
        finally:
            self.waiting_for_sim -= 1

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
            self._station_command(word, robot, cmd)
            return
        try:
            if isinstance(cmd, g.Drive):
                self._submit(word, pc.drive_commands(cmd, robot, spec))
            elif isinstance(cmd, g.MultiDrive):
                self._submit(word, pc.multidrive_commands(cmd, robot, spec))
            elif isinstance(cmd, g.MisPkg) and cmd.location is not None:
                await self._reach(cmd)
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
        self.dialect = eras.of_init(cmd.class_name, self.server.dialect)
        self.asked_spec = eras.as_asked(robot.spec, cmd.class_name)
        self.stamped = {s.name: eras.stamped(self.dialect, s.spec.type, bool(getattr(s.params, "with_timestamp", False)))
                        for s in robot.sensors}
        self.server._owned = {**self.server._owned, robot.name: self}
        log.info("client %s controls %s (%s, %s wire forms)", self.peer, robot.name, robot.spec.class_name,
                 self.dialect)

    def _station_command(self, word: str, station: str, cmd: Any) -> None:
        wireless = self.server.sim.wireless
        ground = wireless.station_ground(station)
        reply = None if ground is None else comstation.station_reply(cmd, station, ground, wireless.comm)
        if reply is None:
            self.err(word, f"'{self.robot}' is a ComStation: it answers GETGEO and GETCONF only")
        else:
            self.send(*reply)

    def _submit(self, word: str, cmds: Sequence[Command]) -> None:
        for cmd in cmds:
            with self._commands_lock:
                self.commands_waiting += 1
            future = self.server.sim.submit(cmd)
            future.add_done_callback(functools.partial(self._applied, word))

    def _applied(self, word: str, future: Future) -> None:
        # Runs in the simulator thread.
        with self._commands_lock:
            self.commands_waiting -= 1
        self.server._report_failure(self, word, future)

    async def _set(self, cmd: g.Set) -> None:
        sim = self.server.sim
        req = pc.set_request(cmd, self.robot, self.spec)  # type: ignore[arg-type]
        results = await self._results(req.commands)
        self.send("RES", pc.set_reply(req, sim.time, results))

    async def _reach(self, cmd: g.MisPkg) -> None:
        # Terminal-pose MISPKG: answered like a SET, RES {Type MisPkg} {Name p} {Status OK|Failed}
        results = await self._results(pc.mispkg_commands(cmd, self.robot, self.spec))  # type: ignore[arg-type]
        self.send("RES", pc.set_reply(pc.SetRequest("generic", "MisPkg", (cmd.name,)), self.server.sim.time,
                                      results))

    async def _results(self, commands: Sequence[Command]) -> list[Any]:
        results: list[Any] = []
        self.waiting_for_sim += 1
        try:
            for c in commands:
                future = asyncio.wrap_future(self.server.sim.submit(c))
                try:
                    results.append(await asyncio.wait_for(future, REPLY_TIMEOUT))
                except (CommandError, ValueError, asyncio.TimeoutError) as exc:
                    results.append(exc)
        finally:
            self.waiting_for_sim -= 1
        return results

    def _viewpoint(self, cmd: g.Set) -> None:
        # SET {Type Camera} {Robot r} [{Name c}] [{Client ip}]: image client ip (default: this
        # connection's address) is sent that camera (Robot defaults to this connection's robot when a
        # Name is given); with neither Robot nor Name, ip goes back to the default view.
        images = self.server.image_server
        client = cmd.client if cmd.client is not None else str(self.peer[0] if self.peer else "")
        robot = cmd.robot if cmd.robot is not None else (self.robot if cmd.name is not None else None)
        camera, why = cmd.name, ""
        if images is None:
            why = "this server has no image server (started with --image-port -1)"
        elif robot is None:
            if cmd.name is None:
                images.release(client)
            else:  # a Name without any robot names nothing
                why = f"no robot to take camera '{cmd.name}' from: send INIT first or name a {{Robot}}"
        else:
            selected = images.select(client, robot, cmd.name)
            camera = selected or cmd.name
            if selected is None:
                why = self._missing_camera(robot, cmd.name)
        self.send("RES", g.format_res(self.server.sim.time, "Camera", camera, not why, reason=why))

    def _missing_camera(self, robot: str, camera: str | None) -> str:
        """Why robot ``robot`` has no camera ``camera`` (None: no camera at all) to send."""
        found = self.server.sim.robots.get(robot)
        if found is None:
            names = ", ".join(sorted(self.server.sim.robots)) or "none yet"
            return f"no robot named '{robot}' (robots: {names})"
        return f"robot '{robot}' has no camera" + (f" named '{camera}'" if camera else "")

    def _query(self, cmd: g.GetGeo | g.GetConf) -> None:
        robot = self.server.sim.robots.get(self.robot) if self.robot else None
        if robot is None:
            self.err(cmd.word, f"robot '{self.robot}' no longer exists")
            return
        reply = pm.geo_reply if isinstance(cmd, g.GetGeo) else pm.conf_reply
        self.send(cmd.word[3:], reply(robot, cmd.type, cmd.name, self.dialect, self.asked_spec))


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
    only while some client controls a robot and every client that is reading
    has been sent everything, and returns. With
    ``image_port`` (default 5003; None: none; 0: a free port) the image server
    is started next to it, and :attr:`image_port` then holds its bound port. ``dialect``: ``auto``
    gives each connection the wire forms of the USARSim generation its INIT shows
    (:mod:`usarsim.protocol.dialect`), ``ut2004`` or ``udk`` forces one for all.
    """

    def __init__(self, sim: "Simulator", host: str = "127.0.0.1", port: int = DEFAULT_PORT,
                 image_port: int | None = DEFAULT_IMAGE_PORT, *, queue_size: int = QUEUE_SIZE,
                 max_connections: int = MAX_CONNECTIONS, max_line: int = g.MAX_LINE_LENGTH,
                 run_simulator: bool = True, image_options: Any = None, dialect: str = eras.AUTO,
                 units: str = "si", reply_limit: int = REPLY_LIMIT, init_timeout: float = INIT_TIMEOUT,
                 lockstep_stall: float = LOCKSTEP_STALL) -> None:
        if queue_size < 1 or reply_limit < 1:
            raise ValueError("queue_size and reply_limit must be at least 1")
        if max_connections < 1:
            raise ValueError("max_connections must be at least 1")
        if not (init_timeout > 0 and lockstep_stall > 0):
            raise ValueError("init_timeout and lockstep_stall must be positive")
        if dialect not in eras.SERVER_DIALECTS:
            raise ValueError(f"dialect must be one of {', '.join(eras.SERVER_DIALECTS)}, got {dialect!r}")
        self.dialect = dialect  # ut2004 or udk for every connection, or auto: each its own (docs/protocol.md)
        self.units = units
        # None for SI: nothing to convert
        self.wire_in: Callable[[str], str] | None
        self.wire_out: Callable[[str], str] | None
        self.wire_in, self.wire_out = wire_units.converters(units) or (None, None)
        self.sim = sim
        self.host = host
        self.port = port
        self.image_port = image_port
        self.image_options = image_options  # ImageOptions for the image server (None: its defaults)
        self.queue_size = queue_size
        self.reply_limit = reply_limit
        self.init_timeout = init_timeout
        self.lockstep_stall = lockstep_stall
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
        # Readings of connected robots, handed over by the simulator thread, formatted on the loop.
        self._backlog: collections.deque[Sequence[rd.Reading]] = collections.deque()
        self._backlog_lock = threading.Lock()
        self._unformatted = 0  # ticks in the backlog or being formatted (lockstep waits for 0)
        self._wake_scheduled = False
        self._stalled: set[_Connection] = set()  # lockstep clients passed over (lockstep thread only)
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
            try:
                conn.writer.close()
            except Exception:  # noqa: BLE001
                pass
        await cancel_other_tasks()

    def _lockstep(self) -> None:
        # Lockstep: no time passes while no client controls a robot (the clock starts at the first
        # INIT, so a client script gives the same lines every run), and a tick waits until every
        # client has been sent all its lines, so none is dropped. A client that leaves lines unread
        # for longer than lockstep_stall is passed over (its SEN lines are then dropped as under
        # real time) until it has read everything again: it cannot freeze the world for others.
        busy_since: dict[_Connection, float] = {}
        while self._running.is_set():
            if not self._owned:
                time.sleep(0.002)
                continue
            if self._unformatted > 0 or self._waiting_for_clients(busy_since):
                time.sleep(0.0005)
                continue
            self._handle_received_input()
            self.sim.step(1)

    def _handle_received_input(self) -> None:
        """Lockstep thread: wait until every line received so far is handled, so that a command sent
        before a tick is applied in that tick (a DRIVE right after INIT once landed a tick late)."""
        if not lockstep_input.pending(list(self._connections)):
            return
        loop = self._loop
        goals: Future = Future()
        try:
            assert loop is not None
            loop.call_soon_threadsafe(lambda: goals.set_result(lockstep_input.targets(list(self._connections))))
            wanted = goals.result(timeout=REPLY_TIMEOUT)
        except (AssertionError, RuntimeError, TimeoutError):  # the loop is stopping: nothing left to wait for
            return
        while self._running.is_set() and not lockstep_input.reached(wanted):
            time.sleep(0.0002)

    def _waiting_for_clients(self, busy_since: dict[_Connection, float]) -> bool:
        now = time.monotonic()
        waiting = False
        for conn in list(self._owned.values()):
            if not conn.backlogged():
                if busy_since.pop(conn, None) is not None and conn in self._stalled:
                    self._stalled.discard(conn)
                    log.info("client %s reads again; lockstep waits for it", conn.peer)
                continue
            since = busy_since.setdefault(conn, now)
            if now - since < self.lockstep_stall:
                waiting = True
            elif conn not in self._stalled:
                self._stalled.add(conn)
                log.warning("client %s has not read for %.1f s; lockstep goes on without it",
                            conn.peer, now - since)
        for conn in [c for c in busy_since if c.closed]:
            del busy_since[conn]
            self._stalled.discard(conn)
        return waiting

    # --- connections ----------------------------------------------------------------------
    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._next_id += 1
        conn = _Connection(self, reader, writer, self._next_id)
        # Keep the kernel from buffering megabytes (seconds of lines) ahead of a slow reader: what a
        # client has not read then waits in the outbox, where the reply limit and the lockstep stall see it.
        sock = writer.get_extra_info("socket")
        if sock is not None:
            try:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF,
                                LOCKSTEP_SEND_BUFFER if self.sim.pacing == "lockstep" else SEND_BUFFER)
            except OSError:
                pass
        if len(self._connections) >= self.max_connections:
            log.warning("refused %s: already %d connections (--max-clients)", conn.peer, len(self._connections))
            writer.write(g.format_err("CONNECT", f"too many connections (at most {self.max_connections})")
                         .encode("ascii"))
            try:
                await writer.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                writer.close()
            return
        self._connections.add(conn)
        idle = asyncio.get_running_loop().call_later(self.init_timeout, self._close_if_idle, conn)
        conn.send("NFO", pm.nfo_game(self.level))
        try:
            await conn.read_loop()
        except asyncio.CancelledError:  # server shutting down
            pass
        finally:
            idle.cancel()
            try:
                await self._close(conn)
            except asyncio.CancelledError:
                pass

    def _close_if_idle(self, conn: _Connection) -> None:
        """Close a connection that has not spawned a robot in time, so idle sockets cannot lock others out."""
        if conn.robot is None and not conn.closed:
            conn.err("INIT", f"no INIT within {self.init_timeout:g} s; closing the connection")
            conn.closed = True  # after the ERR is handed to the socket
            conn.close_reason = "no INIT in time"
            log.warning("client %s disconnected: no INIT within %g s", conn.peer, self.init_timeout)
            conn.writer.close()

    async def _close(self, conn: _Connection) -> None:
        conn.closed = True
        conn.outbox.clear()
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
        """Simulator-thread listener: keep readings of connected robots for the loop to format."""
        owned = self._owned
        if not owned or not readings:
            return
        mine = [r for r in readings if r.robot in owned and not isinstance(r, _SKIP_READINGS)]
        if not mine:
            return
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        with self._backlog_lock:
            self._backlog.append(mine)
            self._unformatted += 1
            if self._wake_scheduled:  # the loop has not run since the last tick: it takes both at once
                return
            self._wake_scheduled = True
        try:
            loop.call_soon_threadsafe(self._format_backlog)
        except RuntimeError:  # loop closed between the check and the call
            pass

    def _format_backlog(self) -> None:
        """Loop thread: format every waiting tick, each reading once, then write each client once."""
        with self._backlog_lock:
            batches = list(self._backlog)
            self._backlog.clear()
            self._wake_scheduled = False
        touched: dict[int, _Connection] = {}
        try:
            for readings in batches:
                self._format_tick(readings, touched)
        finally:
            for conn in touched.values():
                conn.flush()
            with self._backlog_lock:
                self._unformatted -= len(batches)

    def _format_tick(self, readings: Sequence[rd.Reading], touched: dict[int, _Connection]) -> None:
        by_robot: dict[str, list[rd.Reading]] = {}
        for r in readings:
            by_robot.setdefault(r.robot, []).append(r)
        for robot, items in by_robot.items():
            conn = self._owned.get(robot)
            if conn is None or conn.closed:
                continue
            touched[conn.cid] = conn
            try:
                for line in pm.format_robot_readings(items, conn.stamped_sensor, conn.dialect):
                    conn.queue(line[:line.find(" ")], line)
            except (g.ProtocolError, ValueError, TypeError) as exc:
                log.warning("cannot format readings of %s: %s", robot, exc)

    @property
    def connections(self) -> int:
        """Number of open client connections."""
        return len(self._connections)


__all__ = ["ProtocolServer", "DEFAULT_PORT", "DEFAULT_IMAGE_PORT", "QUEUE_SIZE", "MAX_CONNECTIONS",
           "REPLY_LIMIT", "INIT_TIMEOUT", "LOCKSTEP_STALL"]
