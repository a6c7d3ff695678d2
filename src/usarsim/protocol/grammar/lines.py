"""Lines and values of the USARSim text protocol: lexing, typed values, number format (pure).

A line is ``TYPE {Name value} {Name value Name value} ...\\r\\n`` (docs/protocol.md).
Parsing flattens the segments into ordered ``(name, value)`` pairs and keeps
values as text; typed helpers turn them into numbers and vectors. Formatting
goes the other way with the manual's number format (4 decimals).

Parsing is lenient where real controllers differ from the manual (``}{``
without a space, runs of blanks, ``%f`` numbers, space-separated vectors
``{Location 4.5 1.9 1.8}``); formatting is exact.
"""
from __future__ import annotations

import functools
import math
import numbers
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence, Union, cast

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

    def get_vec3(self, name: str) -> Vec3 | None:
        """First ``name`` as a 3-vector ``x,y,z``, None when absent."""
        return _typed(self.get(name), name, lambda t: parse_vector(t, 3), None)

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


def joined_floats(values: Sequence[Any]) -> str | tuple[Any, ...]:
    """A long float list (laser ranges) as its wire text in one join, else the values for the exact path.

    Same text as :func:`format_value` of the tuple; the exact path handles nan/inf
    (an error), a negative zero to normalise and the empty list (an error).
    """
    try:
        text = ",".join([f"{v:.{FLOAT_DIGITS}f}" for v in values])
    except (TypeError, ValueError):  # words or Fixed in the list: the exact path formats them
        return tuple(values)
    if "n" in text or "-0.0000" in text or not text:
        return tuple(values)
    return text


def _check_word(text: str, what: str) -> str:
    if not _WORD_RE.match(text):
        raise ProtocolError(f"{what} {_clip(text)!r} must be printable ASCII without blanks "
                            f"or braces")
    return text


def _format_element(v: Any) -> str:
    if type(v) is float:  # the common case first: the ABC checks below cost more than the formatting
        return fmt_float(v)
    if isinstance(v, Fixed):
        return fmt_float(v.value, v.digits)
    if isinstance(v, str):
        return _check_word(v, "list element")
    if isinstance(v, numbers.Real) and not isinstance(v, bool):
        return fmt_float(float(v))
    raise ProtocolError(f"cannot format list element {v!r}")


def format_value(v: Value) -> str:
    """Wire text of one value: float 4 decimals, int, ``True``/``False``, list ``a,b,c``, word."""
    if type(v) is float:  # the common cases first: the ABC checks below cost more than the formatting
        return fmt_float(v)
    if type(v) is int:
        return str(v)
    if type(v) is str:
        return _format_word(v)
    if type(v) is tuple or type(v) is list:
        return _format_list(v)
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, Fixed):
        return fmt_float(v.value, v.digits)
    if isinstance(v, numbers.Integral):
        return str(int(v))
    if isinstance(v, numbers.Real):
        return fmt_float(float(v))
    if isinstance(v, str):
        return _format_word(v)
    if isinstance(v, (tuple, list)):
        return _format_list(v)
    if hasattr(v, "tolist"):  # numpy arrays and scalars
        return format_value(v.tolist())
    raise ProtocolError(f"cannot format value {v!r}")


def _format_word(v: str) -> str:
    if v.startswith(",") or v.endswith(","):
        raise ProtocolError(f"value {_clip(v)!r} must not start or end with a comma")
    return _check_word(v, "value")


def _format_list(v: Sequence[Any]) -> str:
    if not v:
        raise ProtocolError("cannot send an empty list")
    return ",".join(_format_element(e) for e in v)


@functools.lru_cache(maxsize=4096)
def _name_kind(name: str) -> tuple[bool, bool]:
    """(a valid name, starts like a number) of a segment name: the same few dozen names recur on every line."""
    return _WORD_RE.match(name) is not None, _NUMERIC_START_RE.match(name) is not None


def format_line(type: str, segments: Iterable[Segment | PairIn]) -> str:
    """``TYPE {Name value} {Name value Name value} ...\r\n``.

    Each segment is a sequence of (name, value) pairs; a bare (name, value)
    pair is taken as a one-pair segment.
    """
    return format_head(type) + "".join(" " + format_segment(item) for item in segments) + "\r\n"


def format_head(type: str) -> str:
    """The message word of a line (checked: upper-case letters)."""
    if not _TYPE_RE.match(type) or type != type.upper():
        raise ProtocolError(f"TYPE word {type!r} must be upper-case letters")
    return type


def format_segment(item: Segment | PairIn) -> str:
    """One ``{Name value Name value}`` segment; a bare (name, value) pair is a one-pair segment."""
    seg = cast(Segment, (item,) if len(item) == 2 and isinstance(item[0], str) else item)
    if not seg:
        raise ProtocolError("cannot send an empty segment")
    tokens = []
    for i, (name, value) in enumerate(seg):
        valid, numeric = _name_kind(name)
        if not valid:
            _check_word(name, "name")  # raises, with the reason
        # A numeric-looking name after a value would be read back as part of that value.
        if i > 0 and numeric:
            raise ProtocolError(f"name {name!r} looks like a number; give it its own segment")
        tokens.append(f"{name} {format_value(value)}")
    return "{" + " ".join(tokens) + "}"


def _present(pairs: Iterable[tuple[str, Any]]) -> list[PairIn]:
    return [(n, v) for n, v in pairs if v is not None]


def _need(line: Line, name: str) -> str:
    value = line.get(name)
    if value is None:
        raise ProtocolError(f"missing required {{{name} ...}}")
    return value
