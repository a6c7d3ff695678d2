"""The ground-truth socket's wire forms (USARTruth, UDK ``USARTruthConnection.uc``; pure).

A request is one line, ``{Class c} {Name n}`` (both optional, keys in any case, a command
word before them is ignored; ``USARBot.P3AT`` and ``P3AT`` name the same class). The answer
is one line per matching thing and then ``{End}``, every line ending ``\\r\\n``::

    {Name R1} {Class P3AT} {Time 12.3400} {Location 1.0000,2.0000,-0.1500} {Rotation 0.0000,0.0000,1.5708}

Location is metres and Rotation roll, pitch, yaw in radians, in the same (SAE) frame as the
protocol's GroundTruth sensor. Without a Class only robots are listed (the original looks
for Pawns); ``{Class Actor}`` lists everything. See docs/wireless.md.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

DEFAULT_TRUTH_PORT = 3989  # DefaultUSAR.ini [USARBotAPI.USARTruth] ListenPort
END = b"{End}\r\n"
MAX_REQUEST = 1024  # bytes of one request line
DEFAULT_CLASS = "Pawn"  # what the original searches when no class is asked for


@dataclass(frozen=True)
class Thing:
    """Something the server can report: its name, its class and the classes it belongs to."""

    name: str
    kinds: tuple[str, ...]  # the class first, then what it is a kind of (ending with "Actor")
    time: float
    location: Sequence[float]  # SAE, m
    rotation: Sequence[float]  # SAE roll, pitch, yaw, rad

    def is_a(self, class_name: str) -> bool:
        """True when ``class_name`` (a package prefix ignored, any case) is this thing's class or
        one it is a kind of."""
        wanted = class_name.rpartition(".")[2].lower()
        return any(kind.lower() == wanted for kind in self.kinds)


@dataclass(frozen=True)
class Request:
    """What a client asked for ("" = not given)."""

    class_name: str = ""
    name: str = ""


def parse_request(line: str) -> Request:
    """``[command] {Class c} {Name n}``: values are what follows the key inside the braces."""
    values: dict[str, str] = {}
    rest = line
    while True:
        start, end = rest.find("{"), rest.find("}")
        if start < 0 or end < 0:
            break
        key, _, value = rest[start + 1:end].strip().partition(" ")
        values.setdefault(key.lower(), value.strip())
        rest = rest[end + 1:]
    return Request(values.get("class", ""), values.get("name", ""))


def matching(things: Sequence[Thing], request: Request) -> list[Thing]:
    """The things a request names, in the order given."""
    wanted = request.class_name or DEFAULT_CLASS
    return [t for t in things if t.is_a(wanted) and (not request.name or t.name == request.name)]


def _vector(values: Sequence[float]) -> str:
    return ",".join(f"{round(v, 4) + 0.0:.4f}" for v in values)  # + 0.0: no "-0.0000"


def format_thing(thing: Thing) -> bytes:
    """One answer line."""
    return (f"{{Name {thing.name}}} {{Class {thing.kinds[0]}}} {{Time {thing.time:.4f}}} "
            f"{{Location {_vector(thing.location)}}} {{Rotation {_vector(thing.rotation)}}}\r\n").encode("ascii", "replace")


def answer(things: Sequence[Thing], request: Request) -> bytes:
    """The whole answer to one request, ``{End}`` included."""
    return b"".join(format_thing(t) for t in matching(things, request)) + END


def error(reason: str) -> bytes:
    """An answer that is only a reason (then ``{End}``): a client that knows no error form
    still sees the end of the answer."""
    return f"{{Error {reason}}}\r\n".encode("ascii") + END


__all__ = ["DEFAULT_TRUTH_PORT", "END", "MAX_REQUEST", "Request", "Thing", "answer", "error", "format_thing",
           "matching", "parse_request"]
