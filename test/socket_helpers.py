"""Socket helpers of the side-server tests (127.0.0.1, every wait bounded)."""
from __future__ import annotations

import socket
import time
from typing import Callable

from patience import PATIENCE


class LineReader:
    """Reads replies that end with ``end`` off one connection."""

    def __init__(self, port: int, end: bytes, source: str = "127.0.0.1") -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=PATIENCE, source_address=(source, 0))
        self.end = end
        self._buf = b""

    def line(self) -> str:
        """The next reply without its ending."""
        while self.end not in self._buf:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise ConnectionError("the server closed the connection")
            self._buf += chunk
        reply, _, self._buf = self._buf.partition(self.end)
        return reply.decode()


def receive(sock: socket.socket, size: int) -> bytes:
    """Exactly ``size`` bytes."""
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise ConnectionError(f"closed after {len(data)} of {size} bytes")
        data += chunk
    return data


def closed(sock: socket.socket) -> bool:
    """True once the peer closed ``sock`` (bounded wait)."""
    sock.settimeout(PATIENCE)
    try:
        while sock.recv(4096):
            pass
    except socket.timeout:
        return False
    except ConnectionError:
        pass
    return True


def wait_for(condition: Callable[[], object], what: str) -> None:
    """Poll ``condition`` until it holds (fails the test after PATIENCE)."""
    deadline = time.monotonic() + PATIENCE
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)
