"""The bounded outgoing queue of one protocol connection, and its policy for a client that stops reading.

Two kinds of lines wait here: periodic lines the simulator produces (SEN, STA, MISSTA),
which a newer one makes stale, and replies (NFO, GEO, CONF, RES, ERR), which answer the
client and are never silently dropped. Both are bounded:

- at most ``stream_limit`` periodic lines: when full, the oldest SEN goes first, then the
  oldest STA/MISSTA;
- at most ``reply_limit`` bytes of replies: a client that keeps sending commands without
  reading their answers overflows it, and :meth:`Outbox.put` says so, so that the server
  disconnects it (with a logged reason) instead of growing without bound.
"""
from __future__ import annotations

import collections

STREAM_KINDS = frozenset(("SEN", "STA", "MISSTA"))  # droppable periodic messages
_DROP_ORDER = (frozenset(("SEN",)), frozenset(("STA", "MISSTA")))


class Outbox:
    """Lines waiting to be written to one client, in the order they were queued."""

    def __init__(self, stream_limit: int, reply_limit: int) -> None:
        if stream_limit < 1 or reply_limit < 1:
            raise ValueError("outbox limits must be at least 1")
        self.stream_limit = stream_limit
        self.reply_limit = reply_limit
        self._lines: collections.deque[tuple[str, str]] = collections.deque()
        self.streamed = 0  # periodic lines queued now
        self.reply_bytes = 0  # bytes of replies queued now
        self.dropped = 0  # periodic lines dropped so far

    def __len__(self) -> int:
        return len(self._lines)

    def put(self, kind: str, line: str) -> bool:
        """Queue a line; False when it is a reply that would overflow the reply limit (not queued)."""
        if kind in STREAM_KINDS:
            if self.streamed >= self.stream_limit:
                self._drop_oldest_stream()
            self.streamed += 1
        else:
            if self.reply_bytes + len(line) > self.reply_limit:
                return False
            self.reply_bytes += len(line)
        self._lines.append((kind, line))
        return True

    def _drop_oldest_stream(self) -> None:
        for wanted in _DROP_ORDER:
            for i, (kind, _) in enumerate(self._lines):
                if kind in wanted:
                    del self._lines[i]
                    self.streamed -= 1
                    self.dropped += 1
                    return

    def take(self, max_lines: int) -> list[str]:
        """Remove and return up to ``max_lines`` lines, oldest first."""
        taken: list[str] = []
        lines = self._lines
        while lines and len(taken) < max_lines:
            kind, line = lines.popleft()
            if kind in STREAM_KINDS:
                self.streamed -= 1
            else:
                self.reply_bytes -= len(line)
            taken.append(line)
        return taken

    def lines(self) -> list[str]:
        """The queued lines, oldest first (for tests and diagnostics)."""
        return [line for _, line in self._lines]

    def clear(self) -> None:
        """Forget every queued line."""
        self._lines.clear()
        self.streamed = 0
        self.reply_bytes = 0


__all__ = ["Outbox", "STREAM_KINDS"]
