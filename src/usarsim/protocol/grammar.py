"""USARSim text protocol: parse and format lines, commands and messages (pure, no I/O).

A line is ``TYPE {Name value} {Name value Name value} ...\\r\\n`` (docs/protocol.md).
Parsing flattens the segments into ordered ``(name, value)`` pairs and keeps
values as text; typed helpers turn them into numbers, vectors and commands.
Formatting goes the other way with the manual's number format (4 decimals).

Everything here works on wire values: SAE J670 frame, SI units, exactly as
sent. Frame conversion belongs to ``usarsim.frames`` and the server.

Parsing is lenient where real controllers differ from the manual (``}{``
without a space, runs of blanks, ``%f`` numbers, space-separated vectors
``{Location 4.5 1.9 1.8}``); formatting is exact.
"""
from __future__ import annotations

import math
import numbers
import re
from dataclasses import dataclass, fields
from typing import Any, Callable, ClassVar, Iterable, NamedTuple, Sequence, Union

from usarsim.sim.commands import TRACE_COLORS  # the colours are a core fact; the grammar spells them

__all__ = [
    # errors, limits, values
    "ProtocolError", "MAX_LINE_LENGTH", "FLOAT_DIGITS", "TIME_DIGITS", "POSE_DIGITS",
    "Fixed", "Line", "Message", "parse_line", "parse_message",
    "parse_float", "parse_int", "parse_bool", "parse_vector", "parse_floats",
    "fmt_float", "format_value", "format_line",
    "format_gps_coordinate", "parse_gps_coordinate",
    # commands
    "COMMAND_WORDS", "Command", "Init", "Drive", "Wheel", "MultiDrive", "MisPkg", "MisPkgLink",
    "Set", "CameraFov", "GetGeo", "GetConf", "GetStartPoses", "Trace", "Camera", "TRACE_COLORS",
    "parse_command", "format_command",
    # messages
    "MESSAGE_TYPES", "StartPose", "RfidTag", "GeoItem", "GeoLink", "ConfLink", "EffecterOpcode",
    "format_nfo_game", "format_nfo_start_poses", "format_sta", "format_missta",
    "format_sen_range", "format_sen_sonar", "format_sen_ir", "format_sen_range_scanner",
    "format_sen_range_scanner_3d", "format_sen_odometry", "format_sen_gps", "format_sen_ins",
    "format_sen_encoder", "format_sen_touch", "format_sen_rfid", "format_sen_victim",
    "format_sen_human_motion", "format_sen_sound", "format_sen_ground_truth",
    "format_geo_vehicle", "format_geo_sensors", "format_geo_effecters", "format_geo_mispkg",
    "format_conf_vehicle", "format_conf_sensors", "format_conf_effecters", "format_conf_mispkg",
    "format_res", "format_res_camera", "format_res_viewports", "format_res_rfid_read",
    "format_err", "decode_start_poses", "decode_range_readings", "decode_gps",
]

MAX_LINE_LENGTH = 64 * 1024
FLOAT_DIGITS = 4   # manual §6.2: every float goes out with 4 decimals
TIME_DIGITS = 2    # the manual's examples print Time with 2 (STA {Time 62.01})
POSE_DIGITS = 2    # NFO StartPoses example prints 2 (decision D6)

Pair = tuple[str, str]
Vec3 = tuple[float, float, float]


class ProtocolError(ValueError):
    """A line, value or command does not follow the protocol."""


# --------------------------------------------------------------------------- lexing

_BAD_CHAR_RE = re.compile(r"[^\t\x20-\x7e]")
_TYPE_RE = re.compile(r"[A-Za-z]+\Z")
_NUMBER_RE = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\Z")
# A token in name position that starts like a number cannot be a name: it
# continues a space-separated vector ({Location 4.5 1.9 1.8}).
_NUMERIC_START_RE = re.compile(r"[+-]?\.?\d")
_SEPARATOR_RE = re.compile(r"\s*,\s*|\s+")
_WORD_RE = re.compile(r"[\x21-\x7a\x7c\x7e]+\Z")  # chars 33-126 except braces


def _clip(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


@dataclass(frozen=True)
class Line:
    """One parsed line: TYPE word, ordered (name, value) pairs, per-segment problems.

    ``problems`` lists segments (or stray text) that were ignored, one
    human-readable sentence each; the pairs hold everything else.
    """

    type: str
    pairs: tuple[Pair, ...] = ()
    problems: tuple[str, ...] = ()

    def __contains__(self, name: object) -> bool:
        return any(n == name for n, _ in self.pairs)

    def get(self, name: str, default: str | None = None) -> str | None:
        """Value of the first pair called ``name`` (names are case-sensitive)."""
        for n, v in self.pairs:
            if n == name:
                return v
        return default

    def get_all(self, name: str) -> tuple[str, ...]:
        """Values of every pair called ``name``, in line order."""
        return tuple(v for n, v in self.pairs if n == name)

    def groups(self, opener: str) -> tuple[tuple[Pair, ...], ...]:
        """Split the pairs into groups that each start at a pair named ``opener``.

        Pairs before the first opener belong to no group and are left out.
        """
        out: list[tuple[Pair, ...]] = []
        current: list[Pair] | None = None
        for pair in self.pairs:
            if pair[0] == opener:
                if current is not None:
                    out.append(tuple(current))
                current = [pair]
            elif current is not None:
                current.append(pair)
        if current is not None:
            out.append(tuple(current))
        return tuple(out)

    def get_float(self, name: str, default: float | None = None) -> float | None:
        """First ``name`` as a finite float, ``default`` when absent."""
        return _typed(self.get(name), name, parse_float, default)

    def get_int(self, name: str, default: int | None = None) -> int | None:
        """First ``name`` as an int, ``default`` when absent."""
        return _typed(self.get(name), name, parse_int, default)

    def get_bool(self, name: str, default: bool | None = None) -> bool | None:
        """First ``name`` as a bool (True/False/1/0, any case), ``default`` when absent."""
        return _typed(self.get(name), name, parse_bool, default)

    def get_vector(self, name: str, n: int = 3,
                   default: tuple[float, ...] | None = None) -> tuple[float, ...] | None:
        """First ``name`` as an n-vector ``x,y,z``, ``default`` when absent."""
        return _typed(self.get(name), name, lambda t: parse_vector(t, n), default)

    def get_floats(self, name: str,
                   default: tuple[float, ...] | None = None) -> tuple[float, ...] | None:
        """First ``name`` as a comma list of floats of any length."""
        return _typed(self.get(name), name, parse_floats, default)


def _typed(text: str | None, name: str, parse: Callable[[str], Any], default: Any) -> Any:
    if text is None:
        return default
    try:
        return parse(text)
    except ProtocolError as exc:
        raise ProtocolError(f"{{{name} {_clip(text)}}}: {exc}") from None


def parse_line(line: str | bytes, *, max_length: int | None = MAX_LINE_LENGTH) -> Line:
    """Parse one protocol line (with or without ``\\r\\n``/``\\n``) into a :class:`Line`.

    A malformed segment (odd token count, a stray comma such as
    ``{Location 4.5,,1.8}``, ``{}``) is skipped and described in
    ``Line.problems``; text outside braces likewise. Raises ProtocolError only
    when the whole line is unusable: longer than ``max_length`` characters,
    not ASCII, control characters, empty, no TYPE word, unbalanced braces.
    The TYPE word keeps its case, except that ``Trace`` in any case becomes
    ``TRACE`` (decision D14).
    """
    if isinstance(line, (bytes, bytearray, memoryview)):
        raw = bytes(line)
        # Cheap rejection before decoding a huge buffer (+2 for the terminator).
        if max_length is not None and len(raw) > max_length + 2:
            raise ProtocolError(f"line of {len(raw)} bytes exceeds the limit of {max_length}")
        try:
            text = raw.decode("ascii")
        except UnicodeDecodeError as exc:
            raise ProtocolError(
                f"line is not ASCII: byte 0x{raw[exc.start]:02x} at offset {exc.start}") from None
    elif isinstance(line, str):
        text = line
    else:
        raise TypeError(f"parse_line expects str or bytes, not {type(line).__name__}")

    if text.endswith("\r\n"):
        text = text[:-2]
    elif text.endswith(("\n", "\r")):
        text = text[:-1]
    if max_length is not None and len(text) > max_length:
        raise ProtocolError(f"line of {len(text)} characters exceeds the limit of {max_length}")
    bad = _BAD_CHAR_RE.search(text)
    if bad:
        ch = bad.group()
        kind = "non-ASCII" if ord(ch) > 0x7E else "control"
        raise ProtocolError(f"line contains {kind} character {ch!r} at column {bad.start()}")

    n = len(text)
    pos = 0
    while pos < n and text[pos] in " \t":
        pos += 1
    if pos == n:
        raise ProtocolError("empty line")
    start = pos
    while pos < n and text[pos] not in " \t{}":
        pos += 1
    word = text[start:pos]
    if not word:
        raise ProtocolError(f"line has no TYPE word before {_clip(text[start:])!r}")
    if not _TYPE_RE.match(word):
        raise ProtocolError(f"TYPE word {_clip(word)!r} must be letters only (e.g. DRIVE, SEN)")
    if word.upper() == "TRACE":
        word = "TRACE"

    pairs: list[Pair] = []
    problems: list[str] = []
    while pos < n:
        ch = text[pos]
        if ch in " \t":
            pos += 1
        elif ch == "{":
            close = text.find("}", pos + 1)
            if close < 0:
                raise ProtocolError(f"unbalanced braces: '{{' at column {pos} is never closed")
            body = text[pos + 1:close]
            nested = body.find("{")
            if nested >= 0:
                raise ProtocolError(
                    f"unbalanced braces: '{{' at column {pos + 1 + nested} inside a segment")
            seg_pairs, problem = _parse_segment(body)
            if problem is None:
                pairs.extend(seg_pairs)
            else:
                problems.append(problem)
            pos = close + 1
        elif ch == "}":
            raise ProtocolError(f"unbalanced braces: '}}' at column {pos} has no matching '{{'")
        else:
            end = pos
            while end < n and text[end] not in "{}":
                end += 1
            stray = text[pos:end].strip()
            problems.append(f"text outside braces ignored: {_clip(stray)!r}")
            pos = end
    return Line(word, tuple(pairs), tuple(problems))


def _parse_segment(body: str) -> tuple[list[Pair], str | None]:
    """Pairs of one segment body, or a problem sentence when it is malformed."""
    tokens = body.split()
    where = f"malformed segment {_clip('{' + body + '}')!r}"
    if not tokens:
        return [], f"{where}: no name/value pair (segment ignored)"
    pairs: list[Pair] = []
    i = 0
    while i < len(tokens):
        name = tokens[i]
        if name == "Params" and i + 1 < len(tokens):
            # The manual's SET writes parameters blank-separated ({Params 1001 text}):
            # the rest of the segment is the value, joined by commas like a vector.
            pairs.append((name, ",".join(tokens[i + 1:])))
            break
        if i + 1 >= len(tokens):
            return [], f"{where}: name {_clip(name)!r} has no value (segment ignored)"
        parts = [tokens[i + 1]]
        i += 2
        # a vector may come blank-separated (4.5 1.9 1.8) or with blanks after its commas
        # (4.5, 1.9, 1.8: NIST's Iridium sends that): the pieces are one value
        while i < len(tokens) and (_NUMERIC_START_RE.match(tokens[i]) or parts[-1].endswith(",")
                                   or tokens[i].startswith(",")):
            parts.append(tokens[i])
            i += 1
        # a comma with blanks around it, or blanks alone, separate two elements
        text = _SEPARATOR_RE.sub(",", " ".join(parts))
        if text.startswith(",") or text.endswith(",") or ",," in text:
            return [], (f"{where}: value {_clip(text)!r} has a stray comma; a vector is "
                        f"written as 4.5,1.9,1.8 (segment ignored)")
        pairs.append((name, text))
    return pairs, None


# --------------------------------------------------------------------------- values

MAX_NUMBER = 1e9  # no protocol quantity (m, rad, s, m/s, N*m) comes near this; larger is a client's bug


def parse_float(text: str) -> float:
    """Decimal number (``1``, ``-0.5``, ``4.500000``, ``1e-3``) within ±MAX_NUMBER; rejects nan, inf, blanks."""
    if not isinstance(text, str) or not _NUMBER_RE.match(text):
        raise ProtocolError(f"not a finite decimal number: {_clip(str(text))!r}")
    value = float(text)
    if not abs(value) <= MAX_NUMBER:
        raise ProtocolError(f"number out of range (at most {MAX_NUMBER:g} in size): {_clip(text)!r}")
    return value


MAX_INT = 2**31 - 1  # protocol integers (links, orders, ids) are 32-bit, as in Unreal


def parse_int(text: str) -> int:
    """Integer within ±MAX_INT; an integral decimal such as ``1.0`` is accepted too."""
    if isinstance(text, str) and re.fullmatch(r"[+-]?\d{1,12}", text):
        value: float = int(text)
    else:
        if isinstance(text, str) and re.fullmatch(r"[+-]?\d+", text):  # too many digits to be a protocol integer
            raise ProtocolError(f"integer out of range (at most {MAX_INT} in size): {_clip(text)!r}")
        value = parse_float(text)
        if not value.is_integer():
            raise ProtocolError(f"not an integer: {_clip(text)!r}")
    if abs(value) > MAX_INT:
        raise ProtocolError(f"integer out of range (at most {MAX_INT} in size): {_clip(text)!r}")
    return int(value)


def parse_bool(text: str) -> bool:
    """``True``/``False`` in any case (values are case-insensitive), or ``1``/``0``."""
    low = text.lower() if isinstance(text, str) else ""
    if low in ("true", "1"):
        return True
    if low in ("false", "0"):
        return False
    raise ProtocolError(f"not a boolean (True/False): {_clip(str(text))!r}")


def parse_floats(text: str) -> tuple[float, ...]:
    """Comma list of floats of any length (``2.21,2.20,...``); no blanks."""
    if not isinstance(text, str) or not text:
        raise ProtocolError("empty list")
    return tuple(parse_float(part) for part in text.split(","))


def parse_vector(text: str, n: int = 3) -> tuple[float, ...]:
    """Exactly ``n`` comma-joined floats, e.g. ``4.5,1.9,1.8``."""
    values = parse_floats(text)
    if len(values) != n:
        raise ProtocolError(f"expected {n} comma-separated numbers, got {len(values)}: "
                            f"{_clip(text)!r}")
    return values


def parse_gps_coordinate(text: str) -> float:
    """``47,40.3323,N`` -> signed decimal degrees (S and W negative).

    The older two-field form ``-47,40.5899`` (sign on the degrees) is accepted.
    """
    parts = text.split(",") if isinstance(text, str) else []
    if len(parts) not in (2, 3):
        raise ProtocolError(f"GPS coordinate must be deg,min,hemisphere: {_clip(str(text))!r}")
    deg_text, min_text = parts[0], parts[1]
    degrees = parse_float(deg_text)
    minutes = parse_float(min_text)
    if not 0.0 <= minutes < 60.0:
        raise ProtocolError(f"GPS minutes out of range [0, 60): {_clip(text)!r}")
    if len(parts) == 3:
        hemi = parts[2].upper()
        if hemi not in ("N", "S", "E", "W") or degrees < 0:
            raise ProtocolError(f"GPS coordinate must be deg,min,N|S|E|W: {_clip(text)!r}")
        sign = -1.0 if hemi in ("S", "W") else 1.0
    else:
        sign = -1.0 if deg_text.startswith("-") else 1.0
    value = sign * (abs(degrees) + minutes / 60.0)
    if abs(value) > 180.0:
        raise ProtocolError(f"GPS coordinate out of range: {_clip(text)!r}")
    return value


def format_gps_coordinate(decimal_degrees: float, is_latitude: bool,
                          digits: int = FLOAT_DIGITS) -> str:
    """Signed decimal degrees -> ``deg,minutes,hemisphere`` (e.g. ``47,40.3323,N``)."""
    value = float(decimal_degrees)
    limit = 90.0 if is_latitude else 180.0
    if not math.isfinite(value) or abs(value) > limit:
        raise ProtocolError(f"{'latitude' if is_latitude else 'longitude'} out of range: {value}")
    magnitude = abs(value)
    degrees = int(magnitude)
    minutes = round((magnitude - degrees) * 60.0, digits)
    if minutes >= 60.0:  # 59.99999 rounds up into the next degree
        degrees += 1
        minutes = 0.0
    if degrees == 0 and minutes == 0.0:
        value = 0.0  # no "S" or "W" for a value that prints as zero
    if is_latitude:
        hemi = "S" if value < 0 else "N"
    else:
        hemi = "W" if value < 0 else "E"
    return f"{degrees},{minutes:.{digits}f},{hemi}"


@dataclass(frozen=True)
class Fixed:
    """A number to print with ``digits`` decimals instead of the default 4."""

    value: float
    digits: int


Scalar = Union[bool, int, float, Fixed, str]
Value = Union[Scalar, Sequence[Union[int, float, Fixed, str]]]
PairIn = tuple[str, Value]
Segment = Sequence[PairIn]


def fmt_float(x: float, digits: int = FLOAT_DIGITS) -> str:
    """Fixed-point text with ``digits`` decimals (``0.0000``); never ``-0.0000``."""
    value = float(x)
    if not math.isfinite(value):
        raise ProtocolError(f"cannot send a non-finite number: {value}")
    text = f"{value:.{digits}f}"
    if text.startswith("-") and not text.strip("-0."):
        text = text[1:]
    return text


def _check_word(text: str, what: str) -> str:
    if not _WORD_RE.match(text):
        raise ProtocolError(f"{what} {_clip(text)!r} must be printable ASCII without blanks "
                            f"or braces")
    return text


def _format_element(v: Any) -> str:
    if isinstance(v, Fixed):
        return fmt_float(v.value, v.digits)
    if isinstance(v, str):
        return _check_word(v, "list element")
    if isinstance(v, numbers.Real) and not isinstance(v, bool):
        return fmt_float(float(v))
    raise ProtocolError(f"cannot format list element {v!r}")


def format_value(v: Value) -> str:
    """Wire text of one value: float 4 decimals, int, ``True``/``False``, list ``a,b,c``, word."""
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, Fixed):
        return fmt_float(v.value, v.digits)
    if isinstance(v, numbers.Integral):
        return str(int(v))
    if isinstance(v, numbers.Real):
        return fmt_float(float(v))
    if isinstance(v, str):
        if v.startswith(",") or v.endswith(","):
            raise ProtocolError(f"value {_clip(v)!r} must not start or end with a comma")
        return _check_word(v, "value")
    if isinstance(v, (tuple, list)):
        if not v:
            raise ProtocolError("cannot send an empty list")
        return ",".join(_format_element(e) for e in v)
    if hasattr(v, "tolist"):  # numpy arrays and scalars
        return format_value(v.tolist())
    raise ProtocolError(f"cannot format value {v!r}")


def format_line(type: str, segments: Iterable[Segment | PairIn]) -> str:
    """``TYPE {Name value} {Name value Name value} ...\\r\\n``.

    Each segment is a sequence of (name, value) pairs; a bare (name, value)
    pair is taken as a one-pair segment.
    """
    if not _TYPE_RE.match(type) or type != type.upper():
        raise ProtocolError(f"TYPE word {type!r} must be upper-case letters")
    parts = [type]
    for seg in segments:
        if len(seg) == 2 and isinstance(seg[0], str):
            seg = (seg,)  # type: ignore[assignment]
        if not seg:
            raise ProtocolError("cannot send an empty segment")
        tokens = []
        for i, (name, value) in enumerate(seg):
            _check_word(name, "name")
            # A numeric-looking name after a value would be read back as part of that value.
            if i > 0 and _NUMERIC_START_RE.match(name):
                raise ProtocolError(f"name {name!r} looks like a number; give it its own segment")
            tokens.append(f"{name} {format_value(value)}")
        parts.append("{" + " ".join(tokens) + "}")
    return " ".join(parts) + "\r\n"


def _time(t: float | Fixed | str) -> Fixed | str:
    return t if isinstance(t, (Fixed, str)) else Fixed(float(t), TIME_DIGITS)


def _status(ok: bool | str | int | float) -> Scalar:
    if isinstance(ok, bool):
        return "OK" if ok else "Failed"
    return ok


# --------------------------------------------------------------------------- commands



class Wheel(NamedTuple):
    """One omni-drive wheel group of DRIVE: WheelNumber, WheelSpeed (rad/s), WheelSteer (rad)."""

    number: int
    speed: float | None = None
    steer: float | None = None


class MisPkgLink(NamedTuple):
    """One MISPKG link group: Link number, Value, Order (0 angle/position, 1 speed, 2 torque)."""

    link: int
    value: float
    order: int = 0


class CameraFov(NamedTuple):
    """One camera of ``SET {Type Camera} {Name n} {FOV f}``; FOV in rad, 0 = default."""

    name: str
    fov: float


@dataclass(frozen=True)
class Init:
    """INIT: spawn the connection's robot at Location/Rotation or at a start tag."""

    class_name: str
    name: str | None = None
    location: Vec3 | None = None
    rotation: Vec3 | None = None
    start: str | None = None
    word: ClassVar[str] = "INIT"

    def segments(self) -> list[PairIn]:
        """Wire pairs, one segment each."""
        return _present([("ClassName", self.class_name), ("Name", self.name),
                         ("Location", self.location), ("Rotation", self.rotation),
                         ("Start", self.start)])


# (attribute, wire name, parser) of the scalar DRIVE parameters, in emit order.
_DRIVE_FIELDS: tuple[tuple[str, str, Callable[[str], Any]], ...] = (
    ("left", "Left", parse_float),
    ("right", "Right", parse_float),
    ("speed", "Speed", parse_float),
    ("front_steer", "FrontSteer", parse_float),
    ("rear_steer", "RearSteer", parse_float),
    ("propeller", "Propeller", parse_float),
    ("rudder", "Rudder", parse_float),
    ("stern_plane", "SternPlane", parse_float),
    ("altitude_velocity", "AltitudeVelocity", parse_float),
    ("linear_velocity", "LinearVelocity", parse_float),
    ("lateral_velocity", "LateralVelocity", parse_float),
    ("rotational_velocity", "RotationalVelocity", parse_float),
    ("xz_angle", "XZAngle", parse_float),
    ("thrust_propeller", "ThrustPropeller", parse_float),
    ("tail_propeller", "TailPropeller", parse_float),
    ("name", "Name", str),
    ("steer", "Steer", parse_float),
    ("order", "Order", parse_int),
    ("value", "Value", parse_float),
    ("normalized", "Normalized", parse_bool),
    ("light", "Light", parse_bool),
    ("flip", "Flip", parse_bool),
)


@dataclass(frozen=True)
class Drive:
    """DRIVE: every form of the manual (skid, Ackermann, nautic, aerial, omni, blimp, joint).

    A field is None when its parameter was absent. ``name``/``steer``/``order``/
    ``value`` are the joint-level form; ``wheels`` the omni-drive groups.
    """

    left: float | None = None
    right: float | None = None
    normalized: bool | None = None
    light: bool | None = None
    flip: bool | None = None
    speed: float | None = None
    front_steer: float | None = None
    rear_steer: float | None = None
    propeller: float | None = None
    rudder: float | None = None
    stern_plane: float | None = None
    altitude_velocity: float | None = None
    linear_velocity: float | None = None
    lateral_velocity: float | None = None
    rotational_velocity: float | None = None
    wheels: tuple[Wheel, ...] = ()
    name: str | None = None
    steer: float | None = None
    order: int | None = None
    value: float | None = None
    xz_angle: float | None = None
    thrust_propeller: float | None = None
    tail_propeller: float | None = None
    word: ClassVar[str] = "DRIVE"

    def __repr__(self) -> str:
        # Only the parameters that were given: a DRIVE uses a handful of 23 fields.
        given = [f"{f.name}={getattr(self, f.name)!r}" for f in fields(self)
                 if getattr(self, f.name) not in (None, ())]
        return f"Drive({', '.join(given)})"

    def segments(self) -> list[PairIn]:
        """Wire pairs, one segment each; wheel groups after the scalar fields."""
        out = _present([(wire, getattr(self, attr)) for attr, wire, _ in _DRIVE_FIELDS
                        if wire not in ("Normalized", "Light", "Flip")])
        for wheel in self.wheels:
            out.extend(_present([("WheelNumber", wheel.number), ("WheelSpeed", wheel.speed),
                                 ("WheelSteer", wheel.steer)]))
        out.extend(_present([("Normalized", self.normalized), ("Light", self.light),
                             ("Flip", self.flip)]))
        return out


@dataclass(frozen=True)
class MultiDrive:
    """MULTIDRIVE: absolute target angles (rad) for named joints, in line order."""

    joints: tuple[tuple[str, float], ...]
    word: ClassVar[str] = "MULTIDRIVE"

    def segments(self) -> list[PairIn]:
        """One segment per joint."""
        return list(self.joints)


@dataclass(frozen=True)
class MisPkg:
    """MISPKG: move links of a mission package."""

    name: str
    links: tuple[MisPkgLink, ...]
    word: ClassVar[str] = "MISPKG"

    def segments(self) -> list[PairIn]:
        """Name, then Link/Value/Order per link (Order only when not 0)."""
        out: list[PairIn] = [("Name", self.name)]
        for link in self.links:
            out += [("Link", link.link), ("Value", link.value)]
            if link.order != 0:
                out.append(("Order", link.order))
        return out


@dataclass(frozen=True)
class Set:
    """SET: sensor/effecter/joint opcode, camera FOVs, viewports or camera client.

    Generic form: ``type``, ``name``, ``opcode``, ``params`` (text as sent).
    Camera FOV form: ``cameras``. Viewports form: ``config`` and ``viewports``
    (Viewport1..4, None when absent). Camera client form: ``robot``, ``name``,
    ``client``.
    """

    type: str
    name: str | None = None
    opcode: str | None = None
    params: str | None = None
    cameras: tuple[CameraFov, ...] = ()
    config: str | None = None
    viewports: tuple[str | None, str | None, str | None, str | None] = (None, None, None, None)
    robot: str | None = None
    client: str | None = None
    word: ClassVar[str] = "SET"

    def segments(self) -> list[PairIn]:
        """Wire pairs in the manual's order for the form in use."""
        out: list[PairIn] = [("Type", self.type)]
        if self.cameras:
            for cam in self.cameras:
                out += [("Name", cam.name), ("FOV", cam.fov)]
            if self.robot is not None or self.client is not None:
                out += _present([("Robot", self.robot), ("Client", self.client)])
            return out
        out += _present([("Robot", self.robot), ("Name", self.name), ("Client", self.client),
                         ("Opcode", self.opcode), ("Params", self.params),
                         ("Config", self.config)])
        out += _present([(f"Viewport{i + 1}", v) for i, v in enumerate(self.viewports)])
        return out


@dataclass(frozen=True)
class GetGeo:
    """GETGEO: geometry of the robot, mission packages, effecters or a sensor type."""

    type: str
    name: str | None = None
    word: ClassVar[str] = "GETGEO"

    def segments(self) -> list[PairIn]:
        """Type, then Name when given."""
        return _present([("Type", self.type), ("Name", self.name)])


@dataclass(frozen=True)
class GetConf:
    """GETCONF: configuration of the robot, mission packages, effecters or a sensor type."""

    type: str
    name: str | None = None
    word: ClassVar[str] = "GETCONF"

    def segments(self) -> list[PairIn]:
        """Type, then Name when given."""
        return _present([("Type", self.type), ("Name", self.name)])


@dataclass(frozen=True)
class GetStartPoses:
    """GETSTARTPOSES (or STARTPOSES): ask for the map's start poses."""

    word: ClassVar[str] = "GETSTARTPOSES"

    def segments(self) -> list[PairIn]:
        """No parameters."""
        return []


@dataclass(frozen=True)
class Trace:
    """TRACE: path trace on/off, drop interval (s, D14) and colour (canonical name)."""

    on: bool | None = None
    interval: float | None = None
    color: str | None = None
    word: ClassVar[str] = "TRACE"

    def segments(self) -> list[PairIn]:
        """On, Interval, Color when given."""
        return _present([("On", self.on), ("Interval", self.interval), ("Color", self.color)])


@dataclass(frozen=True)
class Camera:
    """CAMERA (legacy, main camera): rotation as sent (pitch,yaw,roll), order, zoom (deg)."""

    rotation: Vec3 | None = None
    order: int | None = None
    zoom: float | None = None
    word: ClassVar[str] = "CAMERA"

    def segments(self) -> list[PairIn]:
        """Rotation, Order, Zoom when given."""
        return _present([("Rotation", self.rotation), ("Order", self.order), ("Zoom", self.zoom)])


Command = Union[Init, Drive, MultiDrive, MisPkg, Set, GetGeo, GetConf, GetStartPoses, Trace,
                Camera]


def _present(pairs: Iterable[tuple[str, Any]]) -> list[PairIn]:
    return [(n, v) for n, v in pairs if v is not None]


def _need(line: Line, name: str) -> str:
    value = line.get(name)
    if value is None:
        raise ProtocolError(f"missing required {{{name} ...}}")
    return value


def _parse_init(line: Line) -> Init:
    class_name = _need(line, "ClassName")
    location = line.get_vector("Location")
    start = line.get("Start")
    if location is None and start is None:
        raise ProtocolError("missing {Location x,y,z} (or {Start tag})")
    return Init(class_name=class_name, name=line.get("Name"), location=location,
                rotation=line.get_vector("Rotation"), start=start)


def _parse_drive(line: Line) -> Drive:
    kwargs: dict[str, Any] = {}
    for attr, wire, parse in _DRIVE_FIELDS:
        kwargs[attr] = _typed(line.get(wire), wire, parse, None)
    wheels = []
    for group in line.groups("WheelNumber"):
        g = Line("", group)  # first occurrence wins inside a group, as on the line
        wheels.append(Wheel(g.get_int("WheelNumber"), g.get_float("WheelSpeed"),
                            g.get_float("WheelSteer")))
    return Drive(wheels=tuple(wheels), **kwargs)


def _parse_multidrive(line: Line) -> MultiDrive:
    if not line.pairs:
        raise ProtocolError("needs at least one {JointName angle} pair")
    return MultiDrive(tuple((n, _typed(v, n, parse_float, None)) for n, v in line.pairs))


def _parse_mispkg(line: Line) -> MisPkg:
    name = _need(line, "Name")
    # An Order before the first Link is the default for links that give none.
    default_order = 0
    for n, v in line.pairs:
        if n == "Link":
            break
        if n == "Order":
            default_order = _typed(v, n, parse_int, 0)
            break
    links = []
    for group in line.groups("Link"):
        g = Line("", group)
        number = g.get_int("Link")
        value = g.get_float("Value")
        if value is None:
            raise ProtocolError(f"{{Link {number}}} has no {{Value ...}}")
        links.append(MisPkgLink(number, value, g.get_int("Order", default_order)))
    if not links:
        raise ProtocolError("missing {Link n} {Value v}")
    return MisPkg(name=name, links=tuple(links))


def _parse_set(line: Line) -> Set:
    set_type = _need(line, "Type")
    cameras = []
    for group in line.groups("Name"):
        g = Line("", group)
        fov = g.get_float("FOV")
        if fov is not None:
            cameras.append(CameraFov(g.get("Name"), fov))
    return Set(type=set_type, name=line.get("Name"), opcode=line.get("Opcode"),
               params=line.get("Params"), cameras=tuple(cameras), config=line.get("Config"),
               viewports=tuple(line.get(f"Viewport{i}") for i in range(1, 5)),  # type: ignore
               robot=line.get("Robot"), client=line.get("Client"))


def _parse_trace(line: Line) -> Trace:
    color = line.get("Color")
    if color is not None:
        color = _trace_color(color)
    return Trace(on=line.get_bool("On"), interval=line.get_float("Interval"), color=color)


def _trace_color(text: str) -> str:
    for i, name in enumerate(TRACE_COLORS):
        if text.lower() == name.lower() or text == str(i):
            return name
    raise ProtocolError(f"unknown trace {{Color {_clip(text)}}}; use 0-6 or "
                        f"{', '.join(TRACE_COLORS)}")


def _parse_camera(line: Line) -> Camera:
    return Camera(rotation=line.get_vector("Rotation"), order=line.get_int("Order"),
                  zoom=line.get_float("Zoom"))


_COMMAND_PARSERS: dict[str, Callable[[Line], Command]] = {
    "INIT": _parse_init,
    "DRIVE": _parse_drive,
    "MULTIDRIVE": _parse_multidrive,
    "MISPKG": _parse_mispkg,
    "MISSPKG": _parse_mispkg,  # D5: spelling of [P]
    "SET": _parse_set,
    "GETGEO": lambda line: GetGeo(_need(line, "Type"), line.get("Name")),
    "GETCONF": lambda line: GetConf(_need(line, "Type"), line.get("Name")),
    "GETSTARTPOSES": lambda line: GetStartPoses(),
    "STARTPOSES": lambda line: GetStartPoses(),  # D5: spelling of [P]
    "TRACE": _parse_trace,
    "CAMERA": _parse_camera,
}
COMMAND_WORDS: tuple[str, ...] = tuple(sorted(_COMMAND_PARSERS))

# Parameter names per command, for the opt-in case-insensitive name matching.
_PARAM_NAMES: dict[str, tuple[str, ...]] = {
    "INIT": ("ClassName", "Name", "Location", "Rotation", "Start"),
    "DRIVE": tuple(w for _, w, _ in _DRIVE_FIELDS) + ("WheelNumber", "WheelSpeed", "WheelSteer"),
    "MULTIDRIVE": (),
    "MISPKG": ("Name", "Link", "Value", "Order"),
    "MISSPKG": ("Name", "Link", "Value", "Order"),
    "SET": ("Type", "Name", "Opcode", "Params", "FOV", "Config", "Viewport1", "Viewport2",
            "Viewport3", "Viewport4", "Robot", "Client"),
    "GETGEO": ("Type", "Name"),
    "GETCONF": ("Type", "Name"),
    "GETSTARTPOSES": (),
    "STARTPOSES": (),
    "TRACE": ("On", "Interval", "Color"),
    "CAMERA": ("Rotation", "Order", "Zoom"),
}


def parse_command(line: Line | str | bytes, *, ignore_name_case: bool = False) -> Command:
    """Typed command of a client line (a :class:`Line` or raw text).

    Unknown pairs are ignored. Raises ProtocolError for an unknown command
    word, a missing required parameter or an invalid value of a known one.
    Names are case-sensitive (manual §9.4); ``ignore_name_case=True`` also
    accepts ``{LEFT 1}`` for ``{Left 1}`` when the exact name is absent.
    """
    if not isinstance(line, Line):
        line = parse_line(line)
    parser = _COMMAND_PARSERS.get(line.type)
    if parser is None:
        raise ProtocolError(f"unknown command {_clip(line.type)!r}; known commands: "
                            f"{', '.join(COMMAND_WORDS)}")
    if ignore_name_case:
        line = _canonical_names(line, _PARAM_NAMES[line.type])
    try:
        return parser(line)
    except ProtocolError as exc:
        raise ProtocolError(f"{line.type}: {exc}") from None


def _canonical_names(line: Line, known: Sequence[str]) -> Line:
    by_lower = {k.lower(): k for k in known}
    present = {n for n, _ in line.pairs}
    pairs = []
    for n, v in line.pairs:
        canon = by_lower.get(n.lower())
        if canon is not None and canon != n and canon not in present:
            n = canon
        pairs.append((n, v))
    return Line(line.type, tuple(pairs), line.problems)


def format_command(command: Command, *, digits: int = FLOAT_DIGITS) -> str:
    """Wire line of a typed command (floats with ``digits`` decimals)."""
    def fix(v: Any) -> Any:
        if isinstance(v, float):
            return Fixed(v, digits)
        if isinstance(v, tuple):
            return tuple(fix(e) for e in v)
        return v
    return format_line(command.word, [(n, fix(v)) for n, v in command.segments()])


# --------------------------------------------------------------------------- messages

MESSAGE_TYPES = ("NFO", "STA", "MISSTA", "SEN", "GEO", "CONF", "RES", "ERR")

Num = Union[float, int, Fixed, str]
Vec = Sequence[Num]
Time = Union[float, Fixed, str, None]


@dataclass(frozen=True)
class Message(Line):
    """A server line (NFO, STA, MISSTA, SEN, GEO, CONF, RES, ERR) with its pairs."""

    @property
    def kind(self) -> str | None:
        """Value of ``{Type ...}`` (sensor type, vehicle class), if any."""
        return self.get("Type")

    @property
    def time(self) -> float | None:
        """``{Time t}`` in seconds, if present."""
        return self.get_float("Time")


def parse_message(line: str | bytes | Line, *, max_length: int | None = None) -> Message:
    """Parse a server line into a :class:`Message` (no length limit by default)."""
    parsed = line if isinstance(line, Line) else parse_line(line, max_length=max_length)
    if parsed.type not in MESSAGE_TYPES:
        raise ProtocolError(f"unknown message type {_clip(parsed.type)!r}; known: "
                            f"{', '.join(MESSAGE_TYPES)}")
    return Message(parsed.type, parsed.pairs, parsed.problems)


def _with_time(time: Time, segments: list[PairIn]) -> list[PairIn]:
    return ([("Time", _time(time))] if time is not None else []) + segments


class StartPose(NamedTuple):
    """One map start pose: tag, location (m) and rotation roll,pitch,yaw (rad), SAE world."""

    tag: str
    location: Vec3
    rotation: Vec3


class RfidTag(NamedTuple):
    """One RFID tag in SEN RFID: id, memory (None: not sent), location (extension)."""

    id: int
    mem: str | None = None
    location: Vec | None = None


class GeoItem(NamedTuple):
    """One sensor/effecter of GEO: name, location (m) and orientation (rad) on its mount."""

    name: str
    location: Vec
    orientation: Vec
    mount: str


class GeoLink(NamedTuple):
    """One mission-package link of GEO MisPkg (parent_link -1: on the chassis)."""

    link: int
    parent_link: int
    location: Vec
    orientation: Vec


class ConfLink(NamedTuple):
    """One mission-package link of CONF MisPkg."""

    link: int
    joint_type: str
    max_speed: Num
    max_torque: Num
    min_range: Num
    max_range: Num


class EffecterOpcode(NamedTuple):
    """One opcode range of CONF Effecter."""

    opcode: str
    max_val: Num
    min_val: Num


def format_nfo_game(gametype: str, level: str, time_limit: int) -> str:
    """``NFO {Gametype g} {Level l} {TimeLimit t}``, sent on connect."""
    return format_line("NFO", [("Gametype", gametype), ("Level", level),
                               ("TimeLimit", time_limit)])


def format_nfo_start_poses(poses: Iterable[tuple[str, Vec, Vec]],
                           digits: int = POSE_DIGITS) -> str:
    """``NFO {StartPoses n} {Tag x,y,z r,p,y Tag x,y,z r,p,y ...}`` (decision D6)."""
    poses = list(poses)
    head = f"NFO {{StartPoses {len(poses)}}}"
    if not poses:
        return head + "\r\n"
    tokens = []
    for tag, location, rotation in poses:
        _check_word(tag, "start pose tag")
        if _NUMERIC_START_RE.match(tag):
            raise ProtocolError(f"start pose tag {tag!r} must not start like a number")
        tokens += [tag, _vector_text(location, 3, digits), _vector_text(rotation, 3, digits)]
    return f"{head} {{{' '.join(tokens)}}}\r\n"


def _vector_text(v: Vec, n: int, digits: int) -> str:
    if len(v) != n:
        raise ProtocolError(f"expected {n} numbers, got {len(v)}")
    return ",".join(_format_element(e if isinstance(e, (Fixed, str)) else Fixed(float(e), digits))
                    for e in v)


def decode_start_poses(message: Line | str | bytes) -> tuple[StartPose, ...]:
    """Start poses of an ``NFO {StartPoses n} ...`` line."""
    msg = message if isinstance(message, Line) else parse_message(message)
    count = msg.get_int("StartPoses")
    if count is None:
        raise ProtocolError("not a StartPoses NFO")
    poses = []
    for tag, value in msg.pairs:
        if tag == "StartPoses":
            continue
        # The lexer joins the blank-separated location and rotation into one list.
        numbers_ = _typed(value, tag, lambda t: parse_vector(t, 6), None)
        poses.append(StartPose(tag, numbers_[:3], numbers_[3:]))
    if len(poses) != count:
        raise ProtocolError(f"StartPoses says {count} poses, line holds {len(poses)}")
    return tuple(poses)


_STA_FIELDS = {
    "GroundVehicle": ("FrontSteer", "RearSteer"),
    "NauticVehicle": ("SternPlaneAngle", "RudderAngle"),
    "AerialVehicle": (),
    "LeggedRobot": (),
}
DIALECTS = ("ut2004", "udk")  # wire forms of the two USARSim generations (docs/protocol.md)


def format_sta(vehicle_type: str, time: float | Fixed | str, *, light_toggle: bool,
               light_intensity: int, battery: int, front_steer: Num | None = None,
               rear_steer: Num | None = None, stern_plane_angle: Num | None = None,
               rudder_angle: Num | None = None, dialect: str = "ut2004") -> str:
    """STA for GroundVehicle, NauticVehicle, AerialVehicle or LeggedRobot.

    ``ut2004`` (USARSim 3.x): ``{Type} {Time} <class angles> {LightToggle} {LightIntensity}
    {Battery} {View -1}``; ``udk``: ``{Time} {Battery} {Type} {LightToggle} {LightIntensity}
    <class angles>``. The class's own angle fields are always sent (0 when None); angle
    fields of another class are refused.
    """
    given = {"FrontSteer": front_steer, "RearSteer": rear_steer,
             "SternPlaneAngle": stern_plane_angle, "RudderAngle": rudder_angle}
    own = _STA_FIELDS.get(vehicle_type)
    angles: list[PairIn] = []
    for field_name, value in given.items():
        if own is None:
            if value is not None:
                angles.append((field_name, value))
        elif field_name in own:
            angles.append((field_name, 0.0 if value is None else value))
        elif value is not None:
            raise ProtocolError(f"STA {vehicle_type} has no {field_name}")
    light: list[PairIn] = [("LightToggle", bool(light_toggle)), ("LightIntensity", int(light_intensity))]
    if dialect == "udk":
        return format_line("STA", [("Time", _time(time)), ("Battery", int(battery)), ("Type", vehicle_type)]
                           + light + angles)
    # View: the viewport the robot is seen from; -1 = none (clients of 3.x parse it as a number)
    return format_line("STA", [("Type", vehicle_type), ("Time", _time(time))] + angles + light
                       + [("Battery", int(battery)), ("View", -1)])


def format_missta(time: float | Fixed | str, name: str,
                  links: Iterable[tuple[int, Num, Num]]) -> str:
    """``MISSTA {Time t} {Name n} {Link i} {Value v} {Torque q} ...``."""
    segs: list[PairIn] = [("Time", _time(time)), ("Name", name)]
    for link, value, torque in links:
        segs += [("Link", int(link)), ("Value", value), ("Torque", torque)]
    return format_line("MISSTA", segs)


def _sen(sensor_type: str, time: Time, segments: list[Any]) -> str:
    return format_line("SEN", _with_time(time, [("Type", sensor_type)]) + segments)


def format_sen_range(sensor_type: str, readings: Iterable[tuple[str, Num]],
                     time: Time = None) -> str:
    """``SEN {Type Sonar|IR} {Name n Range r} ...``: range sensors of a type in one line."""
    return _sen(sensor_type, time, [(("Name", n), ("Range", r)) for n, r in readings])


def format_sen_sonar(readings: Iterable[tuple[str, Num]], time: Time = None) -> str:
    """``SEN {Type Sonar} {Name F1 Range 4.4690} ...``."""
    return format_sen_range("Sonar", readings, time)


def format_sen_ir(readings: Iterable[tuple[str, Num]], time: Time = None) -> str:
    """``SEN {Type IR} {Name n Range r} ...``."""
    return format_sen_range("IR", readings, time)


def format_sen_range_scanner(name: str, resolution: Num, fov: Num, ranges: Vec,
                             time: Time = None, sensor_type: str = "RangeScanner") -> str:
    """``SEN {Type RangeScanner|IRScanner} {Name n} {Resolution r} {FOV f} {Range r1,...}``.

    Beam 0 is the rightmost (decision D9).
    """
    return _sen(sensor_type, time, [("Name", name), ("Resolution", resolution), ("FOV", fov),
                                    ("Range", tuple(ranges))])


def format_sen_range_scanner_3d(name: str, resolution: Vec, fov: Vec, ranges: Vec,
                                time: Time = None) -> str:
    """Extension (D12): ``SEN {Type RangeScanner3D} {Name n} {Resolution h,v} {FOV h,v} {Range ...}``.

    Ranges are row-major by vertical step.
    """
    return _sen("RangeScanner3D", time, [("Name", name),
                                         ("Resolution", _pair_vec(resolution)),
                                         ("FOV", _pair_vec(fov)), ("Range", tuple(ranges))])


def _pair_vec(v: Vec) -> tuple[Any, ...]:
    if len(v) != 2:
        raise ProtocolError(f"expected (horizontal, vertical), got {len(v)} numbers")
    return tuple(v)


def _vec3(v: Vec) -> tuple[Any, ...]:
    if len(v) != 3:
        raise ProtocolError(f"expected 3 numbers, got {len(v)}")
    return tuple(v)


def format_sen_odometry(name: str, pose: Vec, time: Time = None) -> str:
    """``SEN {Type Odometry} {Name n} {Pose x,y,theta}``."""
    return _sen("Odometry", time, [("Name", name), ("Pose", _vec3(pose))])


def format_sen_gps(name: str, latitude: float, longitude: float, fix: int, satellites: int,
                   time: Time = None) -> str:
    """``SEN {Type GPS} {Name n} {Latitude 47,40.3323,N} {Longitude ...} {Fix f} {Satellites s}``.

    ``latitude``/``longitude`` are signed decimal degrees (S and W negative).
    """
    return _sen("GPS", time, [("Name", name),
                              ("Latitude", format_gps_coordinate(latitude, True)),
                              ("Longitude", format_gps_coordinate(longitude, False)),
                              ("Fix", int(fix)), ("Satellites", int(satellites))])


def format_sen_ins(name: str, location: Vec, orientation: Vec, time: Time = None) -> str:
    """``SEN {Type INS} {Name n} {Location x,y,z} {Orientation r,p,y}`` (angles in [0, 2pi))."""
    return _sen("INS", time, [("Name", name), ("Location", _vec3(location)),
                              ("Orientation", _vec3(orientation))])


def format_sen_encoder(readings: Iterable[tuple[str, int]], time: Time = None) -> str:
    """``SEN {Type Encoder} {Name n Tick t} ...``."""
    return _sen("Encoder", time, [(("Name", n), ("Tick", int(t))) for n, t in readings])


def format_sen_touch(readings: Iterable[tuple[str, bool]], time: Time = None) -> str:
    """``SEN {Type Touch} {Name n Touch True|False} ...``."""
    return _sen("Touch", time, [(("Name", n), ("Touch", bool(t))) for n, t in readings])


def format_sen_rfid(name: str, tags: Iterable[RfidTag | tuple[Any, ...]],
                    time: Time = None) -> str:
    """``SEN {Type RFID} {Name n} {ID i Mem m} ...`` (Mem and Location only when given)."""
    segs: list[Any] = [("Name", name)]
    for tag in tags:
        tag = RfidTag(*tag)
        seg: list[PairIn] = [("ID", int(tag.id))]
        if tag.mem is not None:
            seg.append(("Mem", tag.mem))
        if tag.location is not None:
            seg.append(("Location", _vec3(tag.location)))
        segs.append(tuple(seg))
    return _sen("RFID", time, segs)


def format_sen_victim(name: str, parts: Iterable[tuple[str, Vec]], time: Time = None) -> str:
    """``SEN {Type VictSensor} {Name n} {PartName p} {Location x,y,z} ...``.

    Without a part in view: ``SEN {Type VictSensor} {Name n} {Status NoVictims}`` (USARSim 3.x).
    """
    segs: list[Any] = [("Name", name)]
    for part, loc in parts:
        segs += [("PartName", part), ("Location", _vec3(loc))]
    if len(segs) == 1:
        segs.append(("Status", "NoVictims"))
    return _sen("VictSensor", time, segs)


def format_sen_human_motion(name: str, prob: Num, time: Time = None) -> str:
    """``SEN {Type HumanMotion} {Name n} {Prob p}``."""
    return _sen("HumanMotion", time, [("Name", name), ("Prob", prob)])


def format_sen_sound(name: str, loudness: Num, duration: Num, time: Time = None) -> str:
    """``SEN {Type Sound} {Name n} {Loudness l} {Duration d}``."""
    return _sen("Sound", time, [("Name", name), ("Loudness", loudness), ("Duration", duration)])


def format_sen_ground_truth(name: str, location: Vec, orientation: Vec, time: Time = None) -> str:
    """Extension (D12): ``SEN {Type GroundTruth} {Name n} {Location x,y,z} {Orientation r,p,y}``."""
    return _sen("GroundTruth", time, [("Name", name), ("Location", _vec3(location)),
                                      ("Orientation", _vec3(orientation))])


def format_geo_vehicle(vehicle_type: str, name: str, dimensions: Vec, cog: Vec, *,
                       wheel_radius: Num | None = None, wheel_separation: Num | None = None,
                       wheelbase: Num | None = None) -> str:
    """``GEO {Type <class>} {Name n} {Dimensions l,w,h} {COG x,y,z}`` + GroundVehicle wheels.

    Wheel keys as USARSim sends them: WheelRadius, WheelSeparation (lateral track, D13),
    WheelBase (longitudinal).
    """
    segs = [("Type", vehicle_type), ("Name", name), ("Dimensions", _vec3(dimensions)),
            ("COG", _vec3(cog))]
    segs += _present([("WheelRadius", wheel_radius), ("WheelSeparation", wheel_separation),
                      ("WheelBase", wheelbase)])
    return format_line("GEO", segs)


def format_geo_sensors(item_type: str, items: Iterable[GeoItem | tuple[Any, ...]]) -> str:
    """``GEO {Type t} {Name n} {Location x,y,z} {Orientation r,p,y} {Mount m} ...`` (one segment per field)."""
    segs: list[PairIn] = [("Type", item_type)]
    for item in items:
        item = GeoItem(*item)
        segs += [("Name", item.name), ("Location", _vec3(item.location)),
                 ("Orientation", _vec3(item.orientation)), ("Mount", item.mount)]
    return format_line("GEO", segs)


def format_geo_effecters(items: Iterable[GeoItem | tuple[Any, ...]]) -> str:
    """``GEO {Type Effecter} {Name n} {Location ...} {Orientation ...} {Mount m} ...``."""
    return format_geo_sensors("Effecter", items)


def format_geo_mispkg(packages: Iterable[tuple[str, Iterable[GeoLink | tuple[Any, ...]]]]) -> str:
    """``GEO {Type MisPkg} {Name p} {Link i} {ParentLink j} {Location ...} {Orientation ...} ...``."""
    segs: list[PairIn] = [("Type", "MisPkg")]
    for name, links in packages:
        segs.append(("Name", name))
        for link in links:
            link = GeoLink(*link)
            segs += [("Link", int(link.link)), ("ParentLink", int(link.parent_link)),
                     ("Location", _vec3(link.location)),
                     ("Orientation", _vec3(link.orientation))]
    return format_line("GEO", segs)


def format_conf_vehicle(vehicle_type: str, name: str, steering_type: str, mass: Num, *,
                        max_speed: Num | None = None, max_torque: Num | None = None,
                        max_front_steer: Num | None = None, max_rear_steer: Num | None = None,
                        max_rudder: Num | None = None, max_stern_plane: Num | None = None,
                        max_propeller: Num | None = None) -> str:
    """``CONF {Type <class>} {Name n} {SteeringType s} {Mass m}`` + the limits given.

    GroundVehicle: MaxSpeed, MaxTorque, MaxFrontSteer, MaxRearSteer.
    NauticVehicle extension: MaxRudder, MaxSternPlane, MaxPropeller.
    """
    segs = [("Type", vehicle_type), ("Name", name), ("SteeringType", steering_type),
            ("Mass", mass)]
    segs += _present([("MaxSpeed", max_speed), ("MaxTorque", max_torque),
                      ("MaxFrontSteer", max_front_steer), ("MaxRearSteer", max_rear_steer),
                      ("MaxRudder", max_rudder), ("MaxSternPlane", max_stern_plane),
                      ("MaxPropeller", max_propeller)])
    return format_line("CONF", segs)


def format_conf_sensors(sensor_type: str,
                        sensors: Iterable[tuple[str | None, Iterable[PairIn]]]) -> str:
    """``CONF {Type t} [{Name n}] {Key v} ...`` for each sensor (name None: not sent)."""
    segs: list[PairIn] = [("Type", sensor_type)]
    for name, fields in sensors:
        if name is not None:
            segs.append(("Name", name))
        segs += list(fields)
    return format_line("CONF", segs)


def format_conf_effecters(
        effecters: Iterable[tuple[str, Iterable[EffecterOpcode | tuple[Any, ...]]]]) -> str:
    """``CONF {Type Effecter} {Name n} {Opcode o} {MaxVal a} {MinVal b} ...``."""
    segs: list[PairIn] = [("Type", "Effecter")]
    for name, opcodes in effecters:
        segs.append(("Name", name))
        for op in opcodes:
            op = EffecterOpcode(*op)
            segs += [("Opcode", op.opcode), ("MaxVal", op.max_val), ("MinVal", op.min_val)]
    return format_line("CONF", segs)


def format_conf_mispkg(packages: Iterable[tuple[str, Iterable[ConfLink | tuple[Any, ...]]]]) -> str:
    """``CONF {Type MisPkg} {Name p} {Link i} {JointType t} {MaxSpeed} {MaxTorque} {MinRange} {MaxRange} ...``."""
    segs: list[PairIn] = [("Type", "MisPkg")]
    for name, links in packages:
        segs.append(("Name", name))
        for link in links:
            link = ConfLink(*link)
            segs += [("Link", int(link.link)), ("JointType", link.joint_type),
                     ("MaxSpeed", link.max_speed), ("MaxTorque", link.max_torque),
                     ("MinRange", link.min_range), ("MaxRange", link.max_range)]
    return format_line("CONF", segs)


def format_res(time: float | Fixed | str, res_type: str, name: str | None,
               status: bool | str | int | float, extra: Iterable[PairIn] = ()) -> str:
    """``RES {Time t} {Type ty} {Name n} {Status OK|Failed}`` + extra pairs.

    ``status`` True/False -> OK/Failed; a number or word is sent as is.
    """
    segs = _present([("Time", _time(time)), ("Type", res_type), ("Name", name),
                     ("Status", _status(status))])
    return format_line("RES", segs + list(extra))


def format_res_camera(time: float | Fixed | str,
                      cameras: Iterable[tuple[str, Num, bool | str]]) -> str:
    """``RES {Time t} {Type Camera} {Name c FOV f Status OK} ...`` (FOV after the command)."""
    segs: list[Any] = [("Time", _time(time)), ("Type", "Camera")]
    segs += [(("Name", n), ("FOV", fov), ("Status", _status(ok))) for n, fov, ok in cameras]
    return format_line("RES", segs)


def format_res_viewports(time: float | Fixed | str, config: str, config_ok: bool | str,
                         viewports: Sequence[tuple[str, bool | str]]) -> str:
    """``RES {Time t} {Type Viewports} {Config c} {Status s} {Viewport1 cam} {Status s} ...``.

    ``viewports`` lists (camera | Disabled | None, ok) for Viewport1, 2, ...
    """
    segs: list[PairIn] = [("Time", _time(time)), ("Type", "Viewports"), ("Config", config),
                          ("Status", _status(config_ok))]
    for i, (camera, ok) in enumerate(viewports, start=1):
        segs += [(f"Viewport{i}", camera), ("Status", _status(ok))]
    return format_line("RES", segs)


def format_res_rfid_read(time: float | Fixed | str, name: str, ok: bool,
                         tag_id: int | None = None, mem: str | None = None) -> str:
    """``RES {Time t} {Type RFID} {Name n} {Status OK} {ID id} {Mem m}`` (or Status Failed)."""
    return format_res(time, "RFID", name, ok,
                      _present([("ID", None if tag_id is None else int(tag_id)), ("Mem", mem)]))


def _sanitise(text: str, fallback: str) -> str:
    # Every run of blanks, braces or unprintable characters becomes one '_'.
    cleaned = re.sub(r"[^\x21-\x7a\x7c\x7e]+", "_", str(text)).strip("_,")
    return cleaned or fallback


def format_err(command: str, reason: str) -> str:
    """Extension (D2): ``ERR {Command X} {Reason text_with_underscores}``."""
    return format_line("ERR", [("Command", _sanitise(command, "UNKNOWN")),
                               ("Reason", _sanitise(reason, "error"))])


def decode_range_readings(message: Line | str | bytes) -> tuple[tuple[str, float], ...]:
    """(name, range m) of each ``{Name n Range r}`` group of a Sonar/IR SEN line."""
    msg = message if isinstance(message, Line) else parse_message(message)
    out = []
    for group in msg.groups("Name"):
        g = Line("", group)
        rng = g.get_float("Range")
        if rng is not None:
            out.append((g.get("Name"), rng))
    return tuple(out)


def decode_gps(message: Line | str | bytes) -> tuple[float, float]:
    """(latitude, longitude) in signed decimal degrees of a GPS SEN line."""
    msg = message if isinstance(message, Line) else parse_message(message)
    lat = _typed(_need(msg, "Latitude"), "Latitude", parse_gps_coordinate, None)
    lon = _typed(_need(msg, "Longitude"), "Longitude", parse_gps_coordinate, None)
    return lat, lon
