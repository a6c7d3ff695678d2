"""What both wireless servers (the 3.1.3 ComServer and the UDK-era WSS) share: one port served from
a loop thread of its own, a bounded number of sessions, and the simulator's link table followed on
that loop, so links open and close as the radio does."""
from __future__ import annotations

import asyncio
import logging
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, ClassVar

from usarsim.protocol.loop_thread import LoopThread
from usarsim.protocol.session_guard import SessionSlots

if TYPE_CHECKING:
    from usarsim.sim.simulator import Simulator
    from usarsim.sim.wireless import LinkTable


class RadioServer(ABC):
    """A front door whose connections are radio links between robots (``port=0``: any free port)."""

    title: ClassVar[str]  # what the start-up log line calls it
    thread_name: ClassVar[str]

    def __init__(self, sim: "Simulator", host: str, port: int, max_sessions: int) -> None:
        self.sim = sim
        self.host = host
        self.port = port
        self.slots = SessionSlots(max_sessions)
        self._serving = LoopThread(self.thread_name)

    def start(self) -> None:
        """Bind and serve from a background thread; returns once listening (raises OSError if the
        port is taken)."""
        if self._serving.running:
            return
        self.port = self._serving.start(self._session, self.host, self.port, self._shutdown)
        self._bound()
        self.sim.wireless.add_listener(self._on_table)
        logging.getLogger(type(self).__module__).info("%s on %s:%d", self.title, self.host, self.port)

    def stop(self) -> None:
        """Close every link and connection and stop serving."""
        self.sim.wireless.remove_listener(self._on_table)
        self._serving.stop()

    def _bound(self) -> None:  # noqa: B027 - a hook most servers leave as it is
        """The port is bound (``self.port`` is known)."""

    def _on_table(self, table: "LinkTable") -> None:  # simulator thread
        if self._follows_links():
            self._serving.call_soon(self._check_links, table)

    @abstractmethod
    async def _session(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Serve one control connection."""

    @abstractmethod
    async def _shutdown(self) -> None:
        """Close what is open; the loop is stopping."""

    @abstractmethod
    def _follows_links(self) -> bool:
        """Whether a new link table can change anything now (cheap: called every radio update)."""

    @abstractmethod
    def _check_links(self, table: "LinkTable") -> None:
        """On the loop: apply a new link table (close what fell below the cut-off, ...)."""


__all__ = ["RadioServer"]
