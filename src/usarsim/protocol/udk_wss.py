"""The UDK-era Wireless Simulation Server (``usarsim serve --wss-dialect udk``, TCP 50000).

As USARTools/WSS does it: a robot controller opens a control connection and sends
``INIT {Robot r} {Port p,...}`` (the ports its controller accepts links on, at the address
the control connection comes from). ``DNS {Robot o}`` makes the server allocate a port for
the pair; whoever connects to that port is relayed, byte for byte, to o's controller, and
o's controller can ask ``REVERSEDNS {Port p}`` who is on the line. The link table of the
simulation decides: while the pair is below the cut-off the allocated port does not listen
and the pair's relays are closed; when it is back in range the same port listens again.
Wire forms: :mod:`usarsim.protocol.udk_wss_wire`; choices: docs/wireless.md.

Threads: one event loop thread owns every socket; the simulator thread hands each new link
table over. Relays copy with back-pressure (read only after the last write drained), so a
receiver that never reads holds at most one read's worth of bytes per direction.
"""
from __future__ import annotations

import asyncio
import logging
import socket
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from usarsim.protocol import udk_wss_wire as uw
from usarsim.protocol.line_splitter import LineSplitter
from usarsim.protocol.loop_thread import SESSION_ENDS, cancel_other_tasks, cancel_others
from usarsim.protocol.radio_server import RadioServer
from usarsim.protocol.session_guard import IdleDeadline

if TYPE_CHECKING:
    from usarsim.sim.simulator import Simulator
    from usarsim.sim.wireless import LinkTable

log = logging.getLogger(__name__)

INIT_TIMEOUT = 60.0  # s a control connection may stay without INIT
MAX_SESSIONS = 64  # control connections
MAX_SOURCES = 256  # allocated ports
MAX_RELAYS = 256  # relayed connections
CONNECT_TIMEOUT = 3.0  # s to reach a robot's controller
RELAY_CHUNK = 65536  # bytes read per direction before the write must drain


@dataclass(eq=False)
class _Robot:
    name: str
    ip: str
    ports: list[int]
    writer: asyncio.StreamWriter


@dataclass(eq=False)
class _Relay:
    source: "_Source"
    outgoing_port: int  # our local port on the connection to the target (what REVERSEDNS is asked)
    writers: tuple[asyncio.StreamWriter, asyncio.StreamWriter]
    tasks: list = field(default_factory=list)
    closed: bool = False


@dataclass(eq=False)
class _Source:
    """A port the server allocated for ``connecting`` -> ``target``:``target_port``."""

    connecting: str
    target: str
    target_port: int
    port: int
    server: asyncio.AbstractServer | None = None
    starting: bool = False  # a listen is under way
    relays: set = field(default_factory=set)

    def involves(self, a: str, b: str | None = None) -> bool:
        names = {self.connecting, self.target}
        return a in names if b is None else names == {a, b}


@dataclass
class UdkStats:
    """Counters (for tests, benches and the log)."""

    relays_opened: int = 0
    relays_refused: int = 0  # accepted on an allocated port but the pair or the target was not there
    pairs_broken: int = 0
    robots_kicked: int = 0


class UdkWirelessServer(RadioServer):
    """The UDK WSS front door of a :class:`~usarsim.sim.simulator.Simulator` (``port=0``: any free)."""

    title = "UDK wireless simulation server"
    thread_name = "usarsim-udk-wss"

    def __init__(self, sim: "Simulator", host: str = "127.0.0.1", port: int = uw.DEFAULT_UDK_WSS_PORT, *,
                 init_timeout: float = INIT_TIMEOUT, max_sessions: int = MAX_SESSIONS,
                 connect_timeout: float = CONNECT_TIMEOUT) -> None:
        if not init_timeout > 0:
            raise ValueError("init_timeout must be positive")
        super().__init__(sim, host, port, max_sessions)
        self.init_timeout = init_timeout
        self.connect_timeout = connect_timeout
        self.stats = UdkStats()
        self.robots: dict[str, _Robot] = {}
        self._sources: dict[tuple[str, str, int], _Source] = {}
        self._relays: set[_Relay] = set()
        self._pending: dict[tuple[str, int], str] = {}  # (target, our port) -> connecting, while connecting

    # --- lifecycle ------------------------------------------------------------------------------
    async def _shutdown(self) -> None:
        for source in list(self._sources.values()):
            self._drop_source(source)
        for robot in list(self.robots.values()):
            robot.writer.close()
        await cancel_other_tasks()

    @property
    def relays(self) -> list[tuple[str, str]]:
        """Open relays as (connecting robot, target robot)."""
        return [(r.source.connecting, r.source.target) for r in list(self._relays)]

    def allocated_port(self, connecting: str, target: str) -> int | None:
        """The port DNS gave ``connecting`` for ``target`` (its first such port), if any."""
        for source in list(self._sources.values()):
            if source.connecting == connecting and source.target == target:
                return source.port
        return None

    def listening(self, connecting: str, target: str) -> bool:
        """True while the port allocated for the pair accepts connections."""
        return any(s.server is not None for s in list(self._sources.values())
                   if s.connecting == connecting and s.target == target)

    # --- control connections ---------------------------------------------------------------------
    async def _session(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if not self.slots.take():
            writer.write(uw.error("Too.Many.Connections"))
            writer.close()
            return
        peer = writer.get_extra_info("peername")
        peer_ip = peer[0] if isinstance(peer, tuple) else "127.0.0.1"
        deadline = IdleDeadline(self.init_timeout)
        splitter = LineSplitter(uw.MAX_LINE)
        name: str | None = None
        try:
            while True:
                data = await deadline.read(reader, 65536)
                if data is None:
                    writer.write(uw.error(f"No.INIT.Within.{self.init_timeout:g}.s"))
                    break
                if not data:
                    break
                for text in splitter.feed(data):
                    if text is None:
                        writer.write(uw.error("Message.Too.Long"))
                    elif name is None:
                        reply, name = self._before_init(uw.parse(text), peer_ip, writer)
                        if name is not None:
                            deadline.clear()
                        writer.write(reply)
                    else:
                        writer.write(await self._after_init(uw.parse(text), name))
                await writer.drain()
        except SESSION_ENDS:
            pass
        finally:
            self.slots.give_back()
            if name is not None:
                self._unregister(name)
            writer.close()

    def _before_init(self, msg: uw.Message, peer_ip: str,
                     writer: asyncio.StreamWriter) -> tuple[bytes, str | None]:
        if msg.type != "INIT":
            return uw.error("Must.Use.INIT.Method.First"), None
        name = msg.get("Robot")
        ports = uw.parse_port_list(msg.get("Port"))
        if ports is None:
            return uw.error("Ports.List.Must.Be.Integer"), None
        if not name:
            return uw.error("Robot.Name.Must.Not.Be.Empty"), None
        if name in self.robots:
            return uw.error("Robot.Alread.Exists"), None  # sic, as the original spells it
        # The controller's address is where its control connection comes from: relays go
        # nowhere else (no INIT can point the server at another machine or port range).
        self.robots[name] = _Robot(name, peer_ip, ports, writer)
        log.info("UDK WSS: %s registered at %s, ports %s", name, peer_ip, ports)
        return uw.init_ok(), name

    async def _after_init(self, msg: uw.Message, me: str) -> bytes:
        if msg.type == "GETSS":
            other = msg.get("Robot")
            if not other:
                return uw.error("Robot.Name.Must.Not.Be.Empty")
            return uw.signal_reply(other, self.sim.wireless.table.signal_between(me, other), self_name=me,
                                   registered=other in self.robots)
        if msg.type == "DNS":
            return await self._dns(me, msg)
        if msg.type == "REVERSEDNS":
            port = uw.parse_port(msg.get("Port"))
            if port is None:
                return uw.error("Port.Must.Be.Integer")
            return uw.reverse_dns_reply(port, self._connecting_entity(me, port))
        return uw.error("Method.Unknown.Or.Can.INIT.only.once")

    async def _dns(self, me: str, msg: uw.Message) -> bytes:
        other = msg.get("Robot")
        target_port = 0
        if "Port" in msg.values:
            parsed = uw.parse_port(msg.get("Port"))
            if parsed is None:
                return uw.error("Port.Must.Be.Integer")
            target_port = parsed
        if not other:
            return uw.error("Robot.Name.Must.Not.Be.Empty")
        robot = self.robots.get(other)
        if robot is None or other == me:
            return uw.dns_reply(other, None, "NoSuchRobot")
        if target_port == 0:  # the first port it listed
            target_port = robot.ports[0] if robot.ports else 0
        if target_port not in robot.ports:
            return uw.dns_reply(other, None, "RobotDoesNotListenOnThisPort")
        source = self._sources.get((me, other, target_port)) or self._allocate(me, other, target_port)
        if source is None:
            return uw.error("Could.Not.Allocate.Port")
        if self.sim.wireless.table.reachable(me, other):
            await self._listen(source)  # listening before the reply: the client connects at once
        return uw.dns_reply(other, source.port)

    def _connecting_entity(self, target: str, outgoing_port: int) -> str | None:
        pending = self._pending.get((target, outgoing_port))
        if pending is not None:
            return pending
        for relay in list(self._relays):
            if relay.source.target == target and relay.outgoing_port == outgoing_port:
                return relay.source.connecting
        return None

    def _unregister(self, name: str) -> None:
        robot = self.robots.pop(name, None)
        if robot is None:
            return
        for source in [s for s in self._sources.values() if s.involves(name)]:
            self._drop_source(source)
        log.info("UDK WSS: %s left", name)

    # --- allocated ports -----------------------------------------------------------------------------
    def _allocate(self, me: str, other: str, target_port: int) -> _Source | None:
        if len(self._sources) >= MAX_SOURCES:
            return None
        source = _Source(me, other, target_port, port=0)
        try:
            probe = socket.create_server((self.host, 0))  # the port number the pair keeps
        except OSError as exc:
            log.warning("UDK WSS: cannot allocate a port for %s -> %s: %s", me, other, exc)
            return None
        source.port = probe.getsockname()[1]
        probe.close()
        self._sources[(me, other, target_port)] = source
        return source

    async def _listen(self, source: _Source) -> None:
        if source.server is not None or source.starting or source.port == 0:
            return
        source.starting = True
        try:
            server = await asyncio.start_server(lambda r, w: self._accept(source, r, w), self.host, source.port)
        except OSError as exc:
            log.warning("UDK WSS: port %d for %s -> %s cannot listen: %s", source.port, source.connecting,
                        source.target, exc)
            return
        finally:
            source.starting = False
        if source.port == 0 or not self.sim.wireless.table.reachable(source.connecting, source.target):
            server.close()  # dropped, or out of range, while it was starting
            return
        source.server = server

    def _stop_listening(self, source: _Source) -> None:
        if source.server is not None:
            source.server.close()
            source.server = None
        for relay in list(source.relays):
            self._close_relay(relay, "the pair fell below the cut-off")

    def _drop_source(self, source: _Source) -> None:
        self._stop_listening(source)
        source.port = 0
        self._sources.pop((source.connecting, source.target, source.target_port), None)

    # --- relays --------------------------------------------------------------------------------------
    async def _accept(self, source: _Source, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        target = self.robots.get(source.target)
        if (target is None or source.server is None or len(self._relays) >= MAX_RELAYS
                or not self.sim.wireless.table.reachable(source.connecting, source.target)):
            self.stats.relays_refused += 1
            writer.close()
            return
        try:
            connection = await self._connect_to(target, source)
        except asyncio.CancelledError:  # the server stopping while it connects
            connection = None
        if connection is None:
            self.stats.relays_refused += 1
            writer.close()
            return
        (to_reader, to_writer), outgoing = connection
        relay = _Relay(source, outgoing, (writer, to_writer))
        self._relays.add(relay)
        source.relays.add(relay)
        self.stats.relays_opened += 1
        relay.tasks = [asyncio.ensure_future(self._pump(relay, reader, to_writer)),
                       asyncio.ensure_future(self._pump(relay, to_reader, writer))]
        log.info("UDK WSS: relay %s -> %s:%d opened", source.connecting, source.target, source.target_port)

    async def _connect_to(self, target: _Robot, source: _Source) -> \
            tuple[tuple[asyncio.StreamReader, asyncio.StreamWriter], int] | None:
        """Connect to the target's controller from a port chosen first, so that REVERSEDNS knows
        the caller the moment the controller accepts (before this coroutine resumes)."""
        family = socket.AF_INET6 if ":" in target.ip else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setblocking(False)
        key: tuple[str, int] | None = None
        try:
            sock.bind(("", 0))
            key = (target.name, sock.getsockname()[1])
            self._pending[key] = source.connecting
            loop = asyncio.get_running_loop()
            await asyncio.wait_for(loop.sock_connect(sock, (target.ip, source.target_port)), self.connect_timeout)
            streams = await asyncio.open_connection(sock=sock)
        except (OSError, asyncio.TimeoutError) as exc:
            log.info("UDK WSS: cannot reach %s at %s:%d: %s", target.name, target.ip, source.target_port, exc)
            sock.close()
            return None
        finally:
            if key is not None:
                self._pending.pop(key, None)
        return streams, key[1]

    async def _pump(self, relay: _Relay, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while not relay.closed:
                data = await reader.read(RELAY_CHUNK)
                if not data:
                    break
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            self._close_relay(relay, "a side closed its connection")

    def _close_relay(self, relay: _Relay, reason: str) -> None:
        if relay.closed:
            return
        relay.closed = True
        self._relays.discard(relay)
        relay.source.relays.discard(relay)
        for writer in relay.writers:
            writer.close()
        cancel_others(relay.tasks)
        log.info("UDK WSS: relay %s -> %s closed: %s", relay.source.connecting, relay.source.target, reason)

    # --- link table (simulator thread) -----------------------------------------------------------------
    def _follows_links(self) -> bool:
        return bool(self.robots)

    def _check_links(self, table: "LinkTable") -> None:
        """Like the original's 1 s position poll: robots the simulation does not have are
        kicked out, pairs below the cut-off stop listening and lose their relays, pairs back in
        range listen again on the same port."""
        if table.names:
            for robot in [r for r in self.robots.values() if r.name not in table.names]:
                self.stats.robots_kicked += 1
                log.info("UDK WSS: kicking out %s (not in the simulation)", robot.name)
                self._unregister(robot.name)
                robot.writer.close()
        for source in list(self._sources.values()):
            if table.reachable(source.connecting, source.target):
                if source.server is None:
                    asyncio.ensure_future(self._listen(source))
            elif source.server is not None or source.relays:
                self.stats.pairs_broken += 1
                self._stop_listening(source)


__all__ = ["UdkStats", "UdkWirelessServer"]
