"""The Wireless Communication Server's wire formats and registry (pure: no sockets).

Control connection (``--wss-port``, 5874 as in USARSim's USAR.ini): commands end with
``;`` (a line end is accepted too), words are separated by spaces, the command word is
case-insensitive. Replies are ``OK;``, ``Fail: <reason>;`` and, for GETSS, ``OK:<dBm>;``,
as the original ComServer sends them, each followed by a line end (the original sends
none; a line-reading client, such as a UDK-era one on the wrong port, would wait forever).

Data links (TCP connections the server opens to both robots on OPEN): a robot sends
``SEND <length> <bytes>;`` (binary-safe, the word case-sensitive) and ``CLOSE;``; the
peer receives the raw message bytes. See docs/wireless.md.
"""
from __future__ import annotations

import ipaddress
import math
from dataclasses import dataclass, field
from typing import Callable

MAX_COMMAND = 1024  # bytes of a control command without its terminator
MAX_MESSAGE = 1 << 20  # bytes of one SEND
REPLY_END = b";\r\n"


def _reply(text: str) -> bytes:
    return text.encode("ascii", "replace") + REPLY_END


def ok() -> bytes:
    """The success reply."""
    return _reply("OK")


def fail(reason: str) -> bytes:
    """A failure reply."""
    return _reply(f"Fail: {reason}")


def ok_signal(dbm: float) -> bytes:
    """GETSS's success reply (two decimals, as UnrealScript prints floats)."""
    return _reply(f"OK:{dbm:.2f}")


# --------------------------------------------------------------------------- control stream

class ControlSplitter:
    """Splits a control connection's bytes into commands (``;`` or a line end terminates one)."""

    def __init__(self, limit: int = MAX_COMMAND) -> None:
        self.limit = limit
        self._buf = bytearray()
        self._discarding = False

    def feed(self, data: bytes) -> list[str | None]:
        """Commands completed by ``data``: text, or None for one that was too long or not text."""
        out: list[str | None] = []
        for byte in data:
            if byte in b";\n":
                if self._discarding:
                    self._discarding = False
                elif self._buf.strip():
                    out.append(_text(bytes(self._buf)))
                self._buf.clear()
            elif not self._discarding:
                self._buf.append(byte)
                if len(self._buf) > self.limit:
                    out.append(None)
                    self._buf.clear()
                    self._discarding = True
        return out


def _text(raw: bytes) -> str | None:
    try:
        text = raw.decode("ascii").strip(" \t\r\n")  # not str.strip(): it takes 0x1c-0x1f for spaces
    except UnicodeDecodeError:
        return None
    return text if text and text.isprintable() else None


# --------------------------------------------------------------------------- registry

@dataclass
class Registry:
    """Who registered (name -> IP, owner session) and who listens on which port. A name
    belongs to the control connection that registered it until that connection closes."""

    robots: dict[str, tuple[str, int]] = field(default_factory=dict)
    listening: dict[tuple[str, int], int] = field(default_factory=dict)

    def register(self, name: str, ip: str, owner: int, peer_ip: str | None = None) -> bytes:
        """REGISTER RobotName IPAddress; ``peer_ip`` (the connection's own address), when given,
        is the only address a robot may register: the server connects to it on OPEN."""
        if not _valid_ip(ip):
            return fail(f"Invalid IP address {ip}")
        if peer_ip is not None and resolve(ip) != peer_ip:
            return fail(f"Invalid IP address {ip} (a robot registers the address it connects from, {peer_ip})")
        known = self.robots.get(name)
        if known is not None and (known[0] != ip or known[1] != owner):
            return fail(f"Robot with name {name} already registered")
        self.robots[name] = (ip, owner)
        return ok()

    def listen(self, name: str, port_text: str, owner: int) -> bytes:
        """LISTEN RobotName Port (only on the connection that registered the robot)."""
        if name not in self.robots:
            return fail(f"Robot {name} not registered")
        if self.robots[name][1] != owner:
            return fail(f"Robot {name} registered by another connection")
        port = parse_port(port_text)
        if port is None:
            return fail(f"Invalid port {port_text}")
        if (name, port) in self.listening:
            return fail(f"Robot with name {name} already listening at port {port}")
        self.listening[(name, port)] = owner
        return ok()

    def ip_of(self, name: str) -> str | None:
        """The IP address ``name`` registered with."""
        entry = self.robots.get(name)
        return None if entry is None else entry[0]

    def owners(self) -> set[int]:
        """Sessions that registered at least one robot."""
        return {owner for _, owner in self.robots.values()}

    def forget(self, owner: int) -> None:
        """Drop what session ``owner`` registered (its control connection closed)."""
        self.robots = {n: v for n, v in self.robots.items() if v[1] != owner}
        self.listening = {k: o for k, o in self.listening.items() if o != owner and k[0] in self.robots}


def resolve(ip: str | None) -> str | None:
    """The address an IP text names ("localhost" is 127.0.0.1)."""
    return "127.0.0.1" if ip is not None and ip.lower() == "localhost" else ip


def _valid_ip(text: str) -> bool:
    if text.lower() == "localhost":
        return True
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def parse_port(text: str) -> int | None:
    """A TCP port 1..65535, or None."""
    if not text.isdigit():
        return None
    port = int(text)
    return port if 0 < port < 65536 else None


def check_signal(dbm: float | None) -> bytes:
    """GETSS's reply for a direct signal (None: a robot the simulation does not know)."""
    if dbm is None or not math.isfinite(dbm):
        return fail("Could not calculate signal strength")
    return ok_signal(dbm)


# --------------------------------------------------------------------------- data links

@dataclass(frozen=True)
class Send:
    """A complete SEND: the message bytes."""

    payload: bytes


@dataclass(frozen=True)
class Close:
    """CLOSE."""


@dataclass(frozen=True)
class Garbage:
    """Bytes that are not a command (skipped up to the next ``;``)."""

    reason: str


@dataclass(frozen=True)
class Refused:
    """A SEND whose payload the server had no room for (read and thrown away, never held)."""

    size: int


LinkEvent = Send | Close | Garbage | Refused
_SEPARATORS = b";\r\n "


class LinkParser:
    """Incremental parser of what a robot writes on a data link (binary-safe).

    ``admit(n)`` is asked before a SEND's n payload bytes are held; when it says no, the
    payload is read past without being kept and comes out as :class:`Refused`. ``reserved``
    is what was admitted for the message still arriving."""

    def __init__(self, max_message: int = MAX_MESSAGE, admit: Callable[[int], bool] | None = None) -> None:
        self.max_message = max_message
        self.admit = admit
        self.reserved = 0
        self._buf = bytearray()
        self._want: int | None = None  # payload bytes still expected
        self._discard = 0  # bytes of a refused payload still to read past
        self._refused = 0
        self._skipping = False

    @property
    def mid_message(self) -> bool:
        """True while a SEND's payload is only partly received."""
        return self._want is not None or self._discard > 0 or bool(self._buf.strip(_SEPARATORS))

    def feed(self, data: bytes) -> list[LinkEvent]:
        """Events completed by ``data``, in order."""
        self._buf += data
        out: list[LinkEvent] = []
        while True:
            event = self._next()
            if event is None:
                return out
            out.append(event)

    def _next(self) -> LinkEvent | None:
        buf = self._buf
        if self._discard:
            taken = min(self._discard, len(buf))
            del buf[:taken]
            self._discard -= taken
            if self._discard:
                return None
            return Refused(self._refused)
        if self._want is not None:
            if len(buf) < self._want:
                return None
            payload = bytes(buf[:self._want])
            del buf[:self._want]
            self._want = None
            self.reserved = 0  # handed over with the Send
            return Send(payload)
        if self._skipping:
            end = buf.find(b";")
            if end < 0:
                buf.clear()
                return None
            del buf[:end + 1]
            self._skipping = False
        while buf and buf[0] in _SEPARATORS:  # terminators and line ends between commands
            del buf[0]
        if len(buf) < 5:
            return None
        if buf.startswith(b"CLOSE"):
            del buf[:5]
            self._skipping = True  # up to its ';'
            return Close()
        if not buf.startswith(b"SEND "):
            self._skipping = True
            return Garbage(f"unknown command {bytes(buf[:5])!r} (SEND and CLOSE are case-sensitive)")
        space = buf.find(b" ", 5)
        if space < 0:
            if len(buf) > 5 + 12:
                self._skipping = True
                return Garbage("SEND without a length")
            return None
        digits = bytes(buf[5:space])
        if not digits.isdigit() or int(digits) > self.max_message:
            self._skipping = True
            return Garbage(f"SEND length {digits[:12]!r} is not a number up to {self.max_message}")
        del buf[:space + 1]
        size = int(digits)
        if self.admit is not None and size and not self.admit(size):
            self._discard, self._refused = size, size
        else:
            self._want = size
            self.reserved = size if self.admit is not None else 0
        return self._next()


def frame_send(payload: bytes) -> bytes:
    """What a robot writes to send ``payload`` over its link."""
    return b"SEND %d " % len(payload) + payload + b";"


__all__ = ["Close", "ControlSplitter", "Garbage", "LinkEvent", "LinkParser", "MAX_COMMAND", "MAX_MESSAGE",
           "REPLY_END", "Refused", "Registry", "Send", "check_signal", "fail", "frame_send", "ok", "ok_signal",
           "parse_port", "resolve"]
