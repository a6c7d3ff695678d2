"""A minimal USARSim protocol line client for the tests that talk to a ProtocolServer over TCP."""
from __future__ import annotations

import socket
import time
from typing import Callable, Iterator

from usarsim.protocol import grammar as g
from patience import PATIENCE


class Client:
    """Line client on 127.0.0.1 with bounded waits; every line must end in CR LF."""

    def __init__(self, port: int, timeout: float = PATIENCE) -> None:
        self.timeout = timeout
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.buf = b""

    def send(self, data: str | bytes) -> None:
        self.sock.sendall(data.encode("ascii") if isinstance(data, str) else data)

    def line(self, timeout: float | None = None) -> str:
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no line")
            self.sock.settimeout(left)
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("server closed the connection")
            self.buf += chunk
        raw, _, self.buf = self.buf.partition(b"\n")
        assert raw.endswith(b"\r"), raw[:80]
        return raw[:-1].decode("ascii")

    def wait(self, pred: Callable[[str], bool], timeout: float | None = None) -> str:
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("expected line never came")
            line = self.line(left)
            if pred(line):
                return line

    def reply(self, word: str, timeout: float | None = None) -> str:
        """Next line that is not streamed data (STA/MISSTA/SEN)."""
        return self.wait(lambda l: l.startswith(word + " ") or l.startswith("ERR "), timeout)

    def messages(self, timeout: float | None = None) -> Iterator[g.Message]:
        """Every following line, parsed, until ``timeout`` seconds from now (then TimeoutError)."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("expected message never came")
            try:
                line = self.line(left)
            except TimeoutError:
                raise TimeoutError("expected message never came") from None
            yield g.parse_message(line)

    def init(self, text: str) -> None:
        """INIT a robot and wait for its first STA; a refused INIT fails here with the server's reason."""
        self.send(text + "\r\n")
        first = self.wait(lambda l: l.startswith("STA ") or l.startswith("ERR "))
        assert first.startswith("STA "), first

    def close(self) -> None:
        self.sock.close()


def wait_removed(sim, name: str, timeout: float = PATIENCE) -> None:
    """Wait until a closed client's robot ``name`` is gone (the server removes it asynchronously),
    so a next test may spawn at the same place or with the same name."""
    deadline = time.monotonic() + timeout
    while name in sim.robots:
        assert time.monotonic() < deadline, f"{name} was not removed"
        time.sleep(0.02)
