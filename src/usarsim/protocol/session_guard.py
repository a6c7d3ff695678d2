"""What every side server does to a connection before it has identified itself: a connection
limit and an idle deadline (a connection that never identifies cannot hold a slot for good)."""
from __future__ import annotations

import asyncio
import time


class SessionSlots:
    """Counts the connections a server serves at once (at most ``limit``)."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError("a connection limit must be at least 1")
        self.limit = limit
        self.active = 0

    def take(self) -> bool:
        """Take a slot; False when all are taken (the caller refuses the connection)."""
        if self.active >= self.limit:
            return False
        self.active += 1
        return True

    def give_back(self) -> None:
        """Free a slot taken by ``take``."""
        self.active -= 1


class IdleDeadline:
    """A deadline that holds until the connection identifies itself (``clear``)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._at: float | None = time.monotonic() + seconds

    def clear(self) -> None:
        """The connection identified itself: no deadline any more."""
        self._at = None

    async def read(self, reader: asyncio.StreamReader, size: int) -> bytes | None:
        """Read up to ``size`` bytes; None once the deadline passed first."""
        if self._at is None:
            return await reader.read(size)
        try:
            return await asyncio.wait_for(reader.read(size), max(0.0, self._at - time.monotonic()))
        except asyncio.TimeoutError:
            return None


__all__ = ["IdleDeadline", "SessionSlots"]
