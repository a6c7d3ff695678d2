"""Wire forms of the UDK-era Wireless Simulation Server (pure: no sockets).

The UDK-era WSS (USARTools/WSS, Jacobs University 2008, ``RobotManagementConnection.cpp``,
``Message.cpp``, ``XSocket.cpp``) speaks USARSim-style lines on its control port (50000):
``TYPE {Key Value} {Key Value}``, every line ending ``\\r\\n``. A robot sends INIT once, then
GETSS, DNS and REVERSEDNS; every reply is one line. See docs/wireless.md.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

DEFAULT_UDK_WSS_PORT = 50000  # main.cpp: man.setListenPort(50000)
LINE_END = b"\r\n"
MAX_LINE = 4096  # bytes of one control line without its line end
MAX_PORTS = 32  # ports one INIT may list


@dataclass
class Message:
    """A parsed control line: its type and its single ``{Key Value}`` segments (as Message.cpp:
    a segment of one word has an empty value, one of more than two words is not a value)."""

    type: str
    values: dict[str, str] = field(default_factory=dict)

    def get(self, key: str) -> str:
        """The value of ``{key value}``, "" when absent (Message::getValueConstRef)."""
        return self.values.get(key, "")


def parse(line: str) -> Message:
    """``TYPE {K V} {K V}...``; anything after the type that is not a ``{...}`` segment ends it."""
    kind, _, rest = line.strip(" ").partition(" ")
    message = Message(kind)
    rest = rest.lstrip(" ")
    while rest.startswith("{"):
        body, closed, rest = rest[1:].partition("}")
        words = body.split(" ")
        if len(words) == 1:
            message.values.setdefault(words[0], "")
        elif len(words) == 2:
            message.values.setdefault(words[0], words[1])
        rest = rest.lstrip(" ") if closed else ""
    return message


def parse_port_list(text: str) -> list[int] | None:
    """INIT's ``{Port p1,p2,...}``: numbers 0..65535 (None if any is not one, or too many). A 0
    is kept, as the original keeps it (a client whose own listen failed sends one); nothing
    can connect to it."""
    if not text:
        return []
    parts = text.split(",")
    if len(parts) > MAX_PORTS:
        return None
    ports = [0 if part == "0" else parse_port(part) for part in parts]
    return None if any(p is None for p in ports) else [p for p in ports if p is not None]


def parse_port(text: str) -> int | None:
    """One TCP port 1..65535 (DNS's and REVERSEDNS's ``{Port p}``), or None."""
    if not text.isdigit() or len(text) > 5:
        return None
    port = int(text)
    return port if 0 < port < 65536 else None


def line(kind: str, *segments: tuple[str, object]) -> bytes:
    """One reply line: ``KIND {K V} {K V}\\r\\n``."""
    body = " ".join(f"{{{key} {value}}}" for key, value in segments)
    return f"{kind} {body}".encode("ascii", "replace") + LINE_END


def error(reason: str) -> bytes:
    """``ERROR {Reason r}`` (reasons are the original's dotted words)."""
    return line("ERROR", ("Reason", reason))


def init_ok() -> bytes:
    """INIT accepted."""
    return line("INITREPLY", ("Status", "OK"))


def strength_text(dbm: float) -> str:
    """A signal as C++'s ``ostream << double`` prints it (6 significant digits, like %g)."""
    return f"{dbm:g}"


def signal_reply(other: str, dbm: float | None, *, self_name: str, registered: bool) -> bytes:
    """GETSS's ``SS {Robot o} {Strength s}`` with the original's error cases."""
    if other == self_name:
        return line("SS", ("Robot", other), ("Strength", "INF"), ("Error", "SS.To.Self"))
    if not registered:
        return line("SS", ("Robot", other), ("Strength", "NaN"), ("Error", "Robot.Does.Not.Exist"))
    if dbm is not None and dbm == math.inf:
        return line("SS", ("Robot", other), ("Strength", "INF"), ("Error", "Model.Returned.INF"))
    if dbm is None or math.isnan(dbm) or dbm > 0:
        return line("SS", ("Robot", other), ("Strength", "NaN"), ("Error", "Model.Returned.NaN"))
    return line("SS", ("Robot", other), ("Strength", strength_text(dbm)))


def dns_reply(other: str, port: int | None, error_word: str = "") -> bytes:
    """``DNSREPLY {Robot o} {Port p}``, or ``{Port -1} {Error e}``."""
    if port is None:
        return line("DNSREPLY", ("Robot", other), ("Port", -1), ("Error", error_word))
    return line("DNSREPLY", ("Robot", other), ("Port", port))


def reverse_dns_reply(port: int, robot: str | None) -> bytes:
    """``REVERSEDNSREPLY {Port p} {Robot r}``, or ``{Error UnknownOrIllegalPort}``."""
    if robot is None:
        return line("REVERSEDNSREPLY", ("Port", port), ("Error", "UnknownOrIllegalPort"))
    return line("REVERSEDNSREPLY", ("Port", port), ("Robot", robot))


__all__ = ["DEFAULT_UDK_WSS_PORT", "LINE_END", "MAX_LINE", "MAX_PORTS", "Message", "dns_reply",
           "error", "init_ok", "line", "parse", "parse_port", "parse_port_list", "reverse_dns_reply",
           "signal_reply", "strength_text"]
