"""Warnings a client can provoke at will, bounded: the first few are logged, then at most one
summary per interval saying how many were left out (a flood of garbage never floods the log)."""
from __future__ import annotations

import logging
import time
from typing import Callable

BURST = 5  # warnings logged before throttling starts
INTERVAL = 10.0  # s between summaries while throttled


class ThrottledLog:
    """Rate-limited ``logger.warning`` for one client (one instance per connection or link)."""

    def __init__(self, logger: logging.Logger, *, burst: int = BURST, interval: float = INTERVAL,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.logger = logger
        self.burst = burst
        self.interval = interval
        self.clock = clock
        self.seen = 0  # warnings asked for
        self.logged = 0  # records written
        self._suppressed = 0
        self._next_summary = 0.0

    def warning(self, msg: str, *args: object) -> None:
        """Log ``msg % args`` unless this client already had its share recently."""
        self.seen += 1
        if self.seen <= self.burst:
            self._emit(msg, *args)
            if self.seen == self.burst:
                self._next_summary = self.clock() + self.interval
            return
        self._suppressed += 1
        now = self.clock()
        if now >= self._next_summary:
            self._emit(msg + " (%d similar warnings left out)", *args, self._suppressed)
            self._suppressed = 0
            self._next_summary = now + self.interval

    def _emit(self, msg: str, *args: object) -> None:
        self.logged += 1
        self.logger.warning(msg, *args)


__all__ = ["ThrottledLog"]
