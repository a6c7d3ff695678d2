"""The Wireless Communication Server (default TCP 5874): robot-to-robot links that fail
where the radio model says they would.

As in USARSim: a robot controller opens a control connection and sends REGISTER,
LISTEN, OPEN and GETSS (:mod:`usarsim.protocol.wss_commands`). On OPEN the server
connects to both robots at the ports they listen on; what one robot SENDs on its link
reaches the other as raw bytes, provided the link table of the simulation
(:class:`usarsim.sim.wireless.LinkTable`, updated at the world's rate) says the signal
is above the cut-off, directly or relayed by ComStations. A SEND over a link below
the cut-off is dropped and the link closed; a link that falls below it is closed at
the next link update; both robots see their link connection closed.

Threads: one event loop thread owns every socket; the simulator thread only hands
each new link table over (``call_soon_threadsafe``). Back-pressure: each link end
has its own writer and at most ``queue_bytes`` waiting; a message that does not fit
is dropped whole (tail drop) and counted, so a slow receiver never blocks a sender,
another link or the simulator. Per-link delivery is in order. All links together hold
at most ``buffer_bytes`` of messages (arriving or waiting); a SEND beyond that is read
past and dropped, so half-sent messages cannot pile up memory.

Limits: at most ``max_sessions`` control connections, each of which must REGISTER within
``register_timeout``; a name belongs to the connection that registered it; a robot can
only register the address its control connection comes from, and OPEN never connects to
a port of the simulator's own servers (``reserved_ports``).
"""
from __future__ import annotations

import asyncio
import collections
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from usarsim.protocol import wss_commands as wc
from usarsim.protocol.loop_thread import SESSION_ENDS, cancel_other_tasks, cancel_others
from usarsim.protocol.radio_server import RadioServer
from usarsim.protocol.session_guard import IdleDeadline
from usarsim.log_budget import LogBudget

if TYPE_CHECKING:
    from usarsim.sim.simulator import Simulator
    from usarsim.sim.wireless import LinkTable

log = logging.getLogger(__name__)
_GARBAGE_LOG = LogBudget(log)  # per link end: a flood of garbage writes a few lines, not millions

DEFAULT_WSS_PORT = 5874  # USARSim's USAR.ini [USARBotAPI.ComServer] ListenPort
QUEUE_BYTES = 1 << 20  # bytes waiting for one slow receiver before its new messages are dropped
CONNECT_TIMEOUT = 3.0  # s to reach a robot's listening port on OPEN
MAX_SESSIONS = 64  # control connections
MAX_LINKS = 256  # open links (two connections each)
BUFFER_BYTES = 64 << 20  # message bytes all links together hold (arriving or waiting)
REGISTER_TIMEOUT = 60.0  # s a control connection may stay without a REGISTER
READ_SIZE = 65536


@dataclass
class Stats:
    """Counters (for tests, benches and the log)."""

    delivered: int = 0
    dropped_signal: int = 0  # sent while the link was below the cut-off
    dropped_full: int = 0  # the receiver's queue was full
    dropped_memory: int = 0  # the server's message buffers were full when the SEND began
    links_opened: int = 0
    links_closed: int = 0


@dataclass(eq=False)
class _End:
    """One robot's side of a link: the connection the server opened to it."""

    name: str
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    queue: collections.deque = field(default_factory=collections.deque)
    queued: int = 0
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    parser: wc.LinkParser | None = None  # what this end writes (set when its reader starts)


@dataclass(eq=False)
class _Link:
    a: _End
    b: _End
    tasks: list = field(default_factory=list)
    closed: bool = False

    def other(self, end: _End) -> _End:
        return self.b if end is self.a else self.a


class WirelessServer(RadioServer):
    """The WSS front door of a :class:`~usarsim.sim.simulator.Simulator` (``port=0``: any free port)."""

    title = "wireless communication server"
    thread_name = "usarsim-wss"

    def __init__(self, sim: "Simulator", host: str = "127.0.0.1", port: int = DEFAULT_WSS_PORT, *,
                 queue_bytes: int = QUEUE_BYTES, connect_timeout: float = CONNECT_TIMEOUT,
                 buffer_bytes: int = BUFFER_BYTES, register_timeout: float = REGISTER_TIMEOUT,
                 max_sessions: int = MAX_SESSIONS, reserved_ports: set[int] | None = None) -> None:
        if queue_bytes < 1 or buffer_bytes < 1:
            raise ValueError("queue_bytes and buffer_bytes must be at least 1")
        if not register_timeout > 0:
            raise ValueError("register_timeout must be positive")
        super().__init__(sim, host, port, max_sessions)
        self.queue_bytes = queue_bytes
        self.buffer_bytes = buffer_bytes
        self.buffered = 0  # message bytes held now, all links together
        self.connect_timeout = connect_timeout
        self.register_timeout = register_timeout
        self.reserved_ports = set(reserved_ports or ())
        self.registry = wc.Registry()
        self.stats = Stats()
        self._links: set[_Link] = set()
        self._next_session = 0

    # --- lifecycle ------------------------------------------------------------------------------
    def _bound(self) -> None:
        self.reserved_ports.add(self.port)  # OPEN never reaches the server itself

    async def _shutdown(self) -> None:
        for link in list(self._links):
            self._close_link(link, "server stopping")
        await cancel_other_tasks()

    @property
    def links(self) -> list[tuple[str, str]]:
        """Open links as (robot, robot) pairs."""
        return [(link.a.name, link.b.name) for link in list(self._links)]

    # --- control connections ----------------------------------------------------------------------
    async def _session(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._next_session += 1
        owner = self._next_session
        if not self.slots.take():
            writer.write(wc.fail(f"Too many connections (at most {self.slots.limit})"))
            writer.close()
            return
        peer = writer.get_extra_info("peername")
        peer_ip = peer[0] if isinstance(peer, tuple) else ""
        splitter = wc.ControlSplitter()
        deadline = IdleDeadline(self.register_timeout)
        try:
            while True:
                data = await deadline.read(reader, READ_SIZE)
                if data is None:
                    writer.write(wc.fail(f"No REGISTER within {self.register_timeout:g} s"))
                    break
                if not data:
                    break
                for command in splitter.feed(data):
                    try:
                        reply = await self._reply(command, owner, peer_ip)
                    except Exception as exc:  # noqa: BLE001 - one bad command never drops the client
                        log.exception("WSS: error handling %r", command)
                        reply = wc.fail(f"Internal error: {exc}")
                    writer.write(reply)
                if owner in self.registry.owners():
                    deadline.clear()
                await writer.drain()
        except SESSION_ENDS:
            pass
        finally:
            self.slots.give_back()
            self.registry.forget(owner)
            writer.close()

    async def _reply(self, command: str | None, owner: int, peer_ip: str) -> bytes:
        words = command.split() if command is not None else []
        if not words:
            return wc.fail(f"Unknown Message (not text, or longer than {wc.MAX_COMMAND} bytes)")
        word = words[0].upper()
        if word == "REGISTER":
            if len(words) != 3:
                return wc.fail("Incorrect Message")
            return self.registry.register(words[1], words[2], owner, peer_ip=peer_ip or None)
        if word == "LISTEN":
            return wc.fail("Incorrect Message") if len(words) != 3 else self.registry.listen(words[1], words[2], owner)
        if word == "OPEN":
            return wc.fail("Incorrect Message") if len(words) != 5 else await self._open(*words[1:])
        if word == "GETSS":
            return wc.fail("Incorrect Message") if len(words) != 3 else self._getss(words[1], words[2], peer_ip)
        return wc.fail(f"Unknown Message {words[0][:32]}")

    def _getss(self, r1: str, r2: str, peer_ip: str) -> bytes:
        # The original answers only the robots themselves, recognised by the address they registered.
        if peer_ip not in {wc.resolve(self.registry.ip_of(r1)), wc.resolve(self.registry.ip_of(r2))}:
            return wc.fail("Server does not accept third party requests")
        return wc.check_signal(self.sim.wireless.table.signal_between(r1, r2))

    async def _open(self, name: str, port_text: str, host: str, host_port_text: str) -> bytes:
        port, host_port = wc.parse_port(port_text), wc.parse_port(host_port_text)
        if port is None or host_port is None:
            return wc.fail(f"Invalid port {port_text if port is None else host_port_text}")
        for reserved in (port, host_port):
            if reserved in self.reserved_ports:  # a robot's controller, never the simulator's own doors
                return wc.fail(f"Invalid port {reserved} (a port of the simulator)")
        listening = self.registry.listening
        if (name, port) not in listening and (host, host_port) not in listening:
            return wc.fail(f"{name} not listening on port {port}")
        for robot in (name, host):
            if self.registry.ip_of(robot) is None:
                return wc.fail(f"Robot {robot} not registered")
        if name == host or not self.sim.wireless.table.reachable(host, name):
            return wc.fail(f"Cannot connect to {name}")
        if len(self._links) >= MAX_LINKS:
            return wc.fail(f"Too many links (at most {MAX_LINKS})")
        robot_end, host_end = await asyncio.gather(self._connect(name, port), self._connect(host, host_port))
        if robot_end is None or host_end is None:
            for end in (robot_end, host_end):
                if end is not None:
                    end.writer.close()
            return wc.fail("Could not establish connection")
        self._start_link(_Link(robot_end, host_end))
        return wc.ok()

    async def _connect(self, name: str, port: int) -> _End | None:
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(wc.resolve(self.registry.ip_of(name)), port), self.connect_timeout)
        except (OSError, asyncio.TimeoutError) as exc:
            log.info("WSS: cannot reach %s on port %d: %s", name, port, exc)
            return None
        return _End(name, reader, writer)

    # --- links --------------------------------------------------------------------------------------
    def _start_link(self, link: _Link) -> None:
        self._links.add(link)
        self.stats.links_opened += 1
        for end in (link.a, link.b):
            link.tasks.append(asyncio.ensure_future(self._read_end(link, end)))
            link.tasks.append(asyncio.ensure_future(self._write_end(link, end)))
        log.info("WSS: link %s <-> %s opened", link.a.name, link.b.name)

    async def _read_end(self, link: _Link, end: _End) -> None:
        parser = end.parser = wc.LinkParser(admit=self._admit)
        garbage = (end.name, link.other(end).name)  # a flood of garbage logs a bounded amount per link end
        reason = f"{end.name} closed its link"
        try:
            while not link.closed:
                data = await end.reader.read(READ_SIZE)
                if not data:
                    if parser.mid_message:
                        reason = f"{end.name} disconnected in the middle of a message (discarded)"
                    break
                for event in parser.feed(data):
                    if isinstance(event, wc.Send):
                        if not self._forward(link, end, event.payload):
                            return
                    elif isinstance(event, wc.Close):
                        reason = f"{end.name} sent CLOSE"
                        return
                    elif isinstance(event, wc.Refused):
                        self.stats.dropped_memory += 1
                        _GARBAGE_LOG.log(logging.WARNING, garbage,
                                         "WSS: %s -> %s: a SEND of %d bytes dropped (message buffers full)",
                                         *garbage, event.size)
                    else:
                        _GARBAGE_LOG.log(logging.WARNING, garbage, "WSS: %s -> %s: %s", *garbage, event.reason)
        except (ConnectionError, OSError):
            pass
        finally:
            self._close_link(link, reason)

    def _admit(self, size: int) -> bool:
        """Reserve ``size`` bytes of the servers' message buffers for a SEND that begins."""
        if self.buffered + size > self.buffer_bytes:
            return False
        self.buffered += size
        return True

    def _forward(self, link: _Link, end: _End, payload: bytes) -> bool:
        """Queue ``payload`` for the other end; False when the link has to close (below cut-off)."""
        peer = link.other(end)
        if not self.sim.wireless.table.reachable(end.name, peer.name):
            self.stats.dropped_signal += 1
            self.buffered -= len(payload)
            self._close_link(link, f"signal {end.name} -> {peer.name} below the cut-off")
            return False
        if peer.queued + len(payload) > self.queue_bytes:
            self.buffered -= len(payload)
            self.stats.dropped_full += 1
            if self.stats.dropped_full in (1, 10, 100) or self.stats.dropped_full % 1000 == 0:
                log.warning("WSS: %s reads too slowly: %d messages dropped", peer.name, self.stats.dropped_full)
            return True
        peer.queue.append(payload)
        peer.queued += len(payload)
        peer.ready.set()
        self.stats.delivered += 1
        return True

    async def _write_end(self, link: _Link, end: _End) -> None:
        try:
            while not link.closed:
                if not end.queue:
                    end.ready.clear()
                    await end.ready.wait()
                    continue
                payload = end.queue.popleft()
                end.queued -= len(payload)
                self.buffered -= len(payload)  # the transport holds it now (drain bounds that)
                end.writer.write(payload)
                await end.writer.drain()
        except (ConnectionError, OSError):
            self._close_link(link, f"{end.name} is gone")

    def _close_link(self, link: _Link, reason: str) -> None:
        if link.closed:
            return
        link.closed = True
        self._links.discard(link)
        self.stats.links_closed += 1
        for end in (link.a, link.b):
            while end.queue:  # accepted while the link was up: hand it to the transport, which flushes on close
                end.writer.write(end.queue.popleft())
            self.buffered -= end.queued
            end.queued = 0
            if end.parser is not None:  # a message cut off half way
                self.buffered -= end.parser.reserved
                end.parser.reserved = 0
            end.writer.close()
        cancel_others(link.tasks)
        log.info("WSS: link %s <-> %s closed: %s", link.a.name, link.b.name, reason)

    # --- link table (simulator thread) ---------------------------------------------------------------
    def _follows_links(self) -> bool:
        return bool(self._links)

    def _check_links(self, table: "LinkTable") -> None:
        for link in list(self._links):
            if not table.reachable(link.a.name, link.b.name):
                self._close_link(link, f"signal {link.a.name} <-> {link.b.name} fell below the cut-off")


__all__ = ["BUFFER_BYTES", "DEFAULT_WSS_PORT", "QUEUE_BYTES", "REGISTER_TIMEOUT", "Stats", "WirelessServer"]
