"""Send fuzzed lines to a live protocol server over TCP, reading every reply as a real client would.

Lines go round-robin to connections that own a robot (P2AT, Kenaf, AirRobot), except
INIT lines, which go to a connection without a robot so that spawning is exercised too
(after a successful spawn that connection is replaced by a fresh one). A separate,
well-behaved witness connection measures the longest gap between its SEN/STA lines:
fuzzing one client must not disturb another.
"""
from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Iterable
from patience import PATIENCE

ROBOTS = ("P2AT", "Kenaf", "AirRobot")
END_MARKER = b"FuzzEndMarker"  # GETCONF of this type is answered with an ERR naming it: everything before was read


class _Reader(threading.Thread):
    """Reads a socket until it closes, counting lines and remembering when the last periodic line came."""

    def __init__(self, sock: socket.socket) -> None:
        super().__init__(daemon=True)
        self.sock = sock
        self.lines = 0
        self.periodic_at: list[float] = []
        self.saw_sta = threading.Event()
        self.saw_end = threading.Event()
        self.closed = threading.Event()
        self.keep_times = False

    def run(self) -> None:
        tail = b""
        try:
            while True:
                data = self.sock.recv(1 << 16)
                if not data:
                    break
                chunk = tail + data
                parts = chunk.split(b"\n")
                tail = parts.pop()
                self.lines += len(parts)
                for part in parts:
                    if END_MARKER in part:
                        self.saw_end.set()
                    if part.startswith((b"STA ", b"SEN ")):
                        self.saw_sta.set()
                        if self.keep_times:
                            self.periodic_at.append(time.monotonic())
        except OSError:
            pass
        finally:
            self.closed.set()


def _connect(port: int) -> tuple[socket.socket, _Reader]:
    sock = socket.create_connection(("127.0.0.1", port), timeout=PATIENCE)
    sock.settimeout(None)
    reader = _Reader(sock)
    reader.start()
    return sock, reader


def _spawned(port: int, robot: str, location: str) -> tuple[socket.socket, _Reader]:
    sock, reader = _connect(port)
    sock.sendall(f"INIT {{ClassName USARBot.{robot}}} {{Location {location}}}\r\n".encode())
    if not reader.saw_sta.wait(PATIENCE):
        raise RuntimeError(f"INIT of a {robot} got no STA within {PATIENCE} s")
    return sock, reader


@dataclass
class FuzzResult:
    """What a fuzz run observed from the client side."""

    sent: int = 0
    replies: int = 0
    reconnects: int = 0
    dropped_connections: list[str] = field(default_factory=list)
    witness_max_gap: float = 0.0  # s between two periodic lines of the witness
    witness_lines: int = 0


def fuzz(port: int, lines: Iterable[bytes], locations: list[str]) -> FuzzResult:
    """Send ``lines`` to the server on ``port``; ``locations`` are free SAE ground spots for the robots."""
    result = FuzzResult()
    witness, witness_reader = _spawned(port, "P2AT", locations[0])
    witness_reader.keep_times = True
    owners = [_spawned(port, robot, loc) for robot, loc in zip(ROBOTS, locations[1:])]
    spawner = _connect(port)
    try:
        for i, line in enumerate(lines):
            if line.startswith(b"INIT"):
                sock, reader = spawner
                if reader.saw_sta.is_set() or reader.closed.is_set():  # it spawned (or was refused): a fresh one
                    sock.close()
                    spawner = sock, reader = _connect(port)
                    result.reconnects += 1
            else:
                sock, reader = owners[i % len(owners)]
                if reader.closed.is_set():
                    result.dropped_connections.append(f"line {i}: connection closed by the server")
                    break
            try:
                sock.sendall(line)
            except OSError as exc:
                result.dropped_connections.append(f"line {i}: {exc}")
                break
            result.sent += 1
        for sock, _reader in owners:  # wait until the server has handled every line sent
            sock.sendall(b"GETCONF {Type " + END_MARKER + b"}\r\n")
        for i, (_, reader) in enumerate(owners):
            if not reader.saw_end.wait(PATIENCE):
                result.dropped_connections.append(f"owner {i}: its last lines were never answered")
    finally:
        for sock, reader in [*owners, spawner, (witness, witness_reader)]:
            sock.close()
            reader.join(PATIENCE)
            result.replies += reader.lines
    times = witness_reader.periodic_at
    result.witness_lines = len(times)
    result.witness_max_gap = max((b - a for a, b in zip(times, times[1:])), default=float("inf"))
    return result


__all__ = ["FuzzResult", "fuzz"]
