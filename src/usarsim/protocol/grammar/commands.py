"""Client commands of the USARSim text protocol: typed commands, their parsers and wire form (pure)."""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Callable, ClassVar, NamedTuple, Sequence, Union

from usarsim.protocol.grammar.lines import (
    _clip, Fixed, FLOAT_DIGITS, format_line, Line, _need, PairIn, parse_bool, parse_float,
    parse_int, parse_line, _present, ProtocolError, _typed, Vec3,
)

from usarsim.sim.commands import TRACE_COLORS  # the colours are a core fact; the grammar spells them




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
    """MISPKG: move links of a mission package, or (terminal-pose mode, an extension) give the
    package's end link a ``Location`` (m) and optional ``Rotation`` (rad) in the robot frame."""

    name: str
    links: tuple[MisPkgLink, ...]
    location: Vec3 | None = None
    rotation: Vec3 | None = None
    word: ClassVar[str] = "MISPKG"

    def segments(self) -> list[PairIn]:
        """Name, then Link/Value/Order per link (Order only when not 0), or Location/Rotation."""
        out: list[PairIn] = [("Name", self.name)]
        for link in self.links:
            out += [("Link", link.link), ("Value", link.value)]
            if link.order != 0:
                out.append(("Order", link.order))
        return out + _present([("Location", self.location), ("Rotation", self.rotation)])


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
class _TypeQuery:
    """A query naming a part type and optionally one part (GETGEO and GETCONF share the form)."""

    type: str
    name: str | None = None
    word: ClassVar[str] = ""

    def segments(self) -> list[PairIn]:
        """Type, then Name when given."""
        return _present([("Type", self.type), ("Name", self.name)])


@dataclass(frozen=True)
class GetGeo(_TypeQuery):
    """GETGEO: geometry of the robot, mission packages, effecters or a sensor type."""

    word: ClassVar[str] = "GETGEO"


@dataclass(frozen=True)
class GetConf(_TypeQuery):
    """GETCONF: configuration of the robot, mission packages, effecters or a sensor type."""

    word: ClassVar[str] = "GETCONF"


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


def _need_int(line: Line, name: str) -> int:
    # a group's own key (WheelNumber, Link) is always present in it
    value = line.get_int(name)
    if value is None:
        raise ProtocolError(f"missing required {{{name} ...}}")
    return value


def _parse_init(line: Line) -> Init:
    class_name = _need(line, "ClassName")
    location = line.get_vec3("Location")
    start = line.get("Start")
    if location is None and start is None:
        raise ProtocolError("missing {Location x,y,z} (or {Start tag})")
    return Init(class_name=class_name, name=line.get("Name"), location=location,
                rotation=line.get_vec3("Rotation"), start=start)


def _parse_drive(line: Line) -> Drive:
    kwargs: dict[str, Any] = {}
    for attr, wire, parse in _DRIVE_FIELDS:
        kwargs[attr] = _typed(line.get(wire), wire, parse, None)
    wheels = []
    for group in line.groups("WheelNumber"):
        g = Line("", group)  # first occurrence wins inside a group, as on the line
        wheels.append(Wheel(_need_int(g, "WheelNumber"), g.get_float("WheelSpeed"), g.get_float("WheelSteer")))
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
        number = _need_int(g, "Link")
        value = g.get_float("Value")
        if value is None:
            raise ProtocolError(f"{{Link {number}}} has no {{Value ...}}")
        order = g.get_int("Order")
        links.append(MisPkgLink(number, value, default_order if order is None else order))
    location = line.get_vec3("Location")
    rotation = line.get_vec3("Rotation")
    if location is not None and links:
        raise ProtocolError("give either {Link n} {Value v} groups or a terminal {Location x,y,z}, not both")
    if rotation is not None and location is None:
        raise ProtocolError("{Rotation r,p,y} needs a terminal {Location x,y,z}")
    if not links and location is None:
        raise ProtocolError("missing {Link n} {Value v} (or a terminal {Location x,y,z})")
    return MisPkg(name=name, links=tuple(links), location=location, rotation=rotation)


def _parse_set(line: Line) -> Set:
    set_type = _need(line, "Type")
    cameras = []
    for group in line.groups("Name"):
        g = Line("", group)
        fov = g.get_float("FOV")
        if fov is not None:
            cameras.append(CameraFov(_need(g, "Name"), fov))
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
    return Camera(rotation=line.get_vec3("Rotation"), order=line.get_int("Order"),
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
    "MISPKG": ("Name", "Link", "Value", "Order", "Location", "Rotation"),
    "SET": ("Type", "Name", "Opcode", "Params", "FOV", "Config", "Viewport1", "Viewport2",
            "Viewport3", "Viewport4", "Robot", "Client"),
    "GETGEO": ("Type", "Name"),
    "GETCONF": ("Type", "Name"),
    "GETSTARTPOSES": (),
    "STARTPOSES": (),
    "TRACE": ("On", "Interval", "Color"),
    "CAMERA": ("Rotation", "Order", "Zoom"),
}
_PARAM_NAMES["MISSPKG"] = _PARAM_NAMES["MISPKG"]  # the same command, spelt as in [P]


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
