"""Lockstep's input barrier: a tick is taken only once every command already received is handled.

A client's lines travel kernel socket buffer -> the StreamReader's buffer -> the connection's line
buffer -> ``handle``; any of them may still hold a DRIVE sent right after INIT when the lockstep
thread would step. Before each tick the lockstep thread asks how many bytes each connection has
been sent so far (counted on the event loop, where those moves happen, so nothing is counted twice
or missed) and waits until each has handled that many. Bytes that arrive meanwhile belong to the
next tick, so a client that never stops sending cannot hold the world.
"""
from __future__ import annotations

import array
import fcntl
import termios
from typing import Any, Iterable, Protocol


class Reading(Protocol):
    """What the barrier needs of a connection (server._Connection)."""

    closed: bool
    received: int  # bytes taken off the StreamReader
    handled: int  # bytes whose lines have been handled (an incomplete last line counts as handled)
    waiting_for_sim: int  # handlers waiting for a tick (SET replies) or for queued commands to drain
    reader: Any
    writer: Any


def _kernel_unread(conn: Reading) -> int:
    """Bytes the kernel holds for ``conn`` that the event loop has not read yet (0 when it cannot tell)."""
    sock = conn.writer.get_extra_info("socket")
    if sock is None:
        return 0
    count = array.array("i", [0])
    try:
        fcntl.ioctl(sock.fileno(), termios.FIONREAD, count, True)
    except (OSError, ValueError):  # closed meanwhile
        return 0
    return int(count[0])


def _buffered(conn: Reading) -> int:
    # StreamReader keeps what the transport delivered in a private bytearray; nothing public says how much
    return len(getattr(conn.reader, "_buffer", b""))


def _settled(conn: Reading, target: int) -> bool:
    return conn.closed or conn.waiting_for_sim > 0 or conn.handled >= target


def pending(connections: Iterable[Reading]) -> bool:
    """Whether some connection may hold input not yet handled (any thread; errs on the side of True).

    Looks downstream last (kernel, then StreamReader, then the line buffer), so bytes that were
    anywhere when the check began are seen wherever they have moved to meanwhile."""
    for conn in connections:
        if conn.closed or conn.waiting_for_sim > 0:
            continue
        if _kernel_unread(conn) or _buffered(conn) or conn.handled < conn.received:
            return True
    return False


def targets(connections: Iterable[Reading]) -> dict[Reading, int]:
    """Event-loop thread: the byte count each connection must have handled before the next tick."""
    return {conn: conn.received + _buffered(conn) + _kernel_unread(conn) for conn in connections if not conn.closed}


def reached(goals: dict[Reading, int]) -> bool:
    """Whether every connection has handled up to its goal (or cannot: closed, or waiting for a tick)."""
    return all(_settled(conn, goal) for conn, goal in goals.items())


__all__ = ["pending", "reached", "targets"]
