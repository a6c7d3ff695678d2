"""Rate-limited logging: a client that misbehaves a million times writes a few lines, not a million."""
from __future__ import annotations

import logging
import threading
import time
from typing import Hashable

MAX_KEYS = 1024  # keys remembered at once; past it, ended windows (then all) are forgotten, counts with them


class LogBudget:
    """At most ``burst`` lines per ``period`` seconds per key (a client, a kind of event).

    Lines past the budget are counted, and the count is added to the next line let through
    ("... 37 similar lines suppressed"), so nothing is hidden, only summarised.
    """

    def __init__(self, logger: logging.Logger, burst: int = 5, period: float = 10.0) -> None:
        self._logger = logger
        self._burst = burst
        self._period = period
        self._windows: dict[Hashable, tuple[float, int, int]] = {}  # key -> (window start, lines, suppressed)
        self._lock = threading.Lock()

    def log(self, level: int, key: Hashable, message: str, *args: object, exc_info: bool = False) -> bool:
        """Log ``message % args`` unless ``key`` spent its budget in this window; True if it was logged."""
        now = time.monotonic()
        with self._lock:
            start, lines, suppressed = self._windows.get(key, (now, 0, 0))
            if now - start >= self._period:
                start, lines = now, 0
            if lines >= self._burst:
                self._windows[key] = (start, lines, suppressed + 1)
                return False
            self._windows[key] = (start, lines + 1, 0)
            if len(self._windows) > MAX_KEYS:
                self._forget_ended(now)
        if suppressed:
            message += f" ({suppressed} similar lines suppressed)"
        self._logger.log(level, message, *args, exc_info=exc_info)
        return True

    def _forget_ended(self, now: float) -> None:
        ended = [k for k, (start, _, _) in self._windows.items() if now - start >= self._period]
        for key in ended:
            del self._windows[key]
        if len(self._windows) > MAX_KEYS:  # that many keys in one window: start afresh rather than grow
            self._windows.clear()


__all__ = ["LogBudget"]
