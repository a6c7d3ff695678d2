"""Text lines out of a TCP byte stream, bounded: an over-long line is reported, not kept."""
from __future__ import annotations

import re


class LineSplitter:
    """Splits at any of ``ends`` (one byte each); a ``\\r`` before the end is dropped, blank
    lines are skipped, undecodable bytes are replaced. A line longer than ``limit`` comes out
    as None (once) and the rest of it is read past."""

    def __init__(self, limit: int, ends: bytes = b"\n") -> None:
        self.limit = limit
        self._end = re.compile(b"[" + re.escape(ends) + b"]")
        self._buf = bytearray()
        self._discarding = False

    def feed(self, data: bytes) -> list[str | None]:
        """Lines completed by ``data``, in order."""
        out: list[str | None] = []
        start = 0
        while True:
            found = self._end.search(data, start)
            chunk = data[start:] if found is None else data[start:found.start()]
            if not self._discarding:
                self._buf += chunk
                if len(self._buf) > self.limit:
                    out.append(None)
                    self._buf.clear()
                    self._discarding = True
            if found is None:
                return out
            if not self._discarding:
                text = self._buf.rstrip(b"\r").decode("ascii", "replace")
                if text.strip(" \t\r"):  # not str.strip(): it would blank 0x1c-0x1f too
                    out.append(text)
            self._buf.clear()
            self._discarding = False
            start = found.end()


__all__ = ["LineSplitter"]
