"""Server messages of the USARSim text protocol: NFO, STA, MISSTA, SEN, GEO, CONF, RES, ERR (pure).

One formatter per message form; the server's production lines go through these.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable, NamedTuple, Sequence, Union

from usarsim.protocol.grammar.lines import (
    _check_word, _clip, Fixed, _format_element, format_gps_coordinate, format_head, format_line, format_segment,
    joined_floats,
    Line, _need, _NUMERIC_START_RE, PairIn, parse_gps_coordinate, parse_line, parse_vector,
    POSE_DIGITS, _present, ProtocolError, Scalar, TIME_DIGITS, _typed, Vec3,
)




def _time(t: float | Fixed | str) -> Fixed | str:
    return t if isinstance(t, (Fixed, str)) else Fixed(float(t), TIME_DIGITS)


def _status(ok: bool | str | int | float) -> Scalar:
    if isinstance(ok, bool):
        return "OK" if ok else "Failed"
    return ok


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
    """One sensor/effecter of GEO: name, location (m) and orientation (rad) on its mount
    (``mount_link``: the link number of a mission package it rides on, UDK's ``{MountLink n}``)."""

    name: str
    location: Vec
    orientation: Vec
    mount: str
    mount_link: int | None = None


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
                                    ("Range", joined_floats(ranges))])


def format_sen_range_scanner_3d(name: str, resolution: Vec, fov: Vec, ranges: Vec,
                                time: Time = None) -> str:
    """Extension (D12): ``SEN {Type RangeScanner3D} {Name n} {Resolution h,v} {FOV h,v} {Range ...}``.

    Ranges are row-major by vertical step.
    """
    return _sen("RangeScanner3D", time, [("Name", name),
                                         ("Resolution", _pair_vec(resolution)),
                                         ("FOV", _pair_vec(fov)), ("Range", joined_floats(ranges))])


def format_sen_udk(sensor_type: str, name: str, field: str, value: Num | bool,
                   time: Time = None) -> str:
    """UDK dialect: one line per sensor, ``SEN {Type t} {Name n} {Field v}`` (``{Range 4.4690}``)."""
    return _sen(sensor_type, time, [("Name", name), (field, value)])


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

    ``latitude``/``longitude`` are signed decimal degrees (S and W negative). Without a fix
    (``fix`` 0) the receiver has no position to give: ``SEN {Type GPS} {Name n} {Fix 0}
    {Satellites s}`` (``GPSSensor.GetData``).
    """
    position: list[PairIn] = []
    if int(fix):
        position = [("Latitude", format_gps_coordinate(latitude, True)),
                    ("Longitude", format_gps_coordinate(longitude, False))]
    return _sen("GPS", time, [("Name", name)] + position + [("Fix", int(fix)), ("Satellites", int(satellites))])


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


def format_sen_depth(name: str, depth: Num, time: Time = None) -> str:
    """Extension: ``SEN {Type Depth} {Name n} {Depth d}`` (m below the water surface)."""
    return _sen("Depth", time, [("Name", name), ("Depth", depth)])


def format_sen_compass(name: str, heading: Num, field: Vec, time: Time = None) -> str:
    """Extension: ``SEN {Type Compass} {Name n} {Heading h} {Field x,y,z}`` (rad from magnetic north, microtesla)."""
    return _sen("Compass", time, [("Name", name), ("Heading", heading), ("Field", _vec3(field))])


def format_sen_vector(sensor_type: str, key: str, name: str, value: Vec, time: Time = None) -> str:
    """Extension: ``SEN {Type t} {Name n} {<key> x,y,z}`` of a three-axis sensor (``AcceleroMeter``
    ``ProperAcceleration``, ``Gyroscope`` ``AngularVel``, ``Velocimeter`` ``Velocity``)."""
    return _sen(sensor_type, time, [("Name", name), (key, _vec3(value))])


def format_sen_inclinometer(name: str, roll: Num, pitch: Num, time: Time = None) -> str:
    """Extension: ``SEN {Type Inclinometer} {Name n} {Roll r} {Pitch p}`` (rad)."""
    return _sen("Inclinometer", time, [("Name", name), ("Roll", roll), ("Pitch", pitch)])


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
    segs: list[PairIn] = [("Type", vehicle_type), ("Name", name), ("Dimensions", _vec3(dimensions)),
                          ("COG", _vec3(cog))]
    segs += _present([("WheelRadius", wheel_radius), ("WheelSeparation", wheel_separation),
                      ("WheelBase", wheelbase)])
    return format_line("GEO", segs)


def format_geo_sensors(item_type: str, items: Iterable[GeoItem | tuple[Any, ...]], dialect: str = "ut2004") -> str:
    """GEO of the robot's sensors (or effecters) of one type, in the era's form.

    ``ut2004``: one segment per item, ``GEO {Type t} {Name n Location x,y,z Orientation r,p,y Mount m} ...``
    (manual §9 grammar; positional parsers read it token by token). ``udk``: ``GEO {Type t} {Name n}
    {Location x,y,z} {Orientation r,p,y}{Mount m} ...`` (``Sensor.GetGeoData``: no blank before Mount).
    """
    _check_dialect(dialect)
    parts = [format_head("GEO"), format_segment(("Type", item_type))]
    for item in items:
        item = GeoItem(*item)
        fields: tuple[PairIn, ...] = (("Name", item.name), ("Location", _vec3(item.location)),
                                      ("Orientation", _vec3(item.orientation)))
        if dialect == "udk":
            mount = format_segment(("Mount", item.mount))
            if item.mount_link is not None:
                mount += format_segment(("MountLink", int(item.mount_link)))
            parts.append(" ".join(format_segment(f) for f in fields) + mount)
        else:
            parts.append(format_segment(fields + (("Mount", item.mount),)))
    return " ".join(parts) + "\r\n"


def format_geo_effecters(items: Iterable[GeoItem | tuple[Any, ...]], dialect: str = "ut2004") -> str:
    """GEO of effecters: the sensors' form with ``{Type Effecter}``."""
    return format_geo_sensors("Effecter", items, dialect)


def _check_dialect(dialect: str) -> None:
    if dialect not in DIALECTS:
        raise ProtocolError(f"dialect must be one of {', '.join(DIALECTS)}, got {dialect!r}")


def format_geo_mispkg(packages: Iterable[tuple[str, Iterable[GeoLink | tuple[Any, ...]]]]) -> str:
    """``GEO {Type MisPkg} {Name p} {Link i} {ParentLink j} {Location ...} {Orientation ...} ...``."""
    def link_segments(link: GeoLink) -> list[PairIn]:
        return [("Link", int(link.link)), ("ParentLink", int(link.parent_link)),
                ("Location", _vec3(link.location)), ("Orientation", _vec3(link.orientation))]

    return _mispkg_line("GEO", packages, GeoLink, link_segments)


def _mispkg_line(word: str, packages: Iterable[tuple[str, Iterable[Any]]], record: Callable[..., Any],
                 link_segments: Callable[[Any], list[PairIn]]) -> str:
    # GEO and CONF MisPkg: each package's Name, then its links' segments in order
    segs: list[PairIn] = [("Type", "MisPkg")]
    for name, links in packages:
        segs.append(("Name", name))
        for link in links:
            segs += link_segments(record(*link))
    return format_line(word, segs)


def format_conf_vehicle(vehicle_type: str, name: str, steering_type: str, mass: Num, *,
                        max_speed: Num | None = None, max_torque: Num | None = None,
                        max_front_steer: Num | None = None, max_rear_steer: Num | None = None,
                        max_rudder: Num | None = None, max_stern_plane: Num | None = None,
                        max_propeller: Num | None = None, dialect: str = "ut2004") -> str:
    """``CONF {Type <class>} {Name n} {SteeringType s} {Mass m}`` + the limits given.

    GroundVehicle: MaxSpeed, MaxTorque, MaxFrontSteer, MaxRearSteer.
    NauticVehicle extension: MaxRudder, MaxSternPlane, MaxPropeller.
    ``udk`` puts the Name first (``USARVehicle.GetConfData`` then ``WheeledVehicle``'s fields).
    """
    _check_dialect(dialect)
    head: list[PairIn] = [("Type", vehicle_type), ("Name", name)]
    segs: list[PairIn] = (head[::-1] if dialect == "udk" else head) + [("SteeringType", steering_type),
                                                                        ("Mass", mass)]
    segs += _present([("MaxSpeed", max_speed), ("MaxTorque", max_torque),
                      ("MaxFrontSteer", max_front_steer), ("MaxRearSteer", max_rear_steer),
                      ("MaxRudder", max_rudder), ("MaxSternPlane", max_stern_plane),
                      ("MaxPropeller", max_propeller)])
    return format_line("CONF", segs)


def format_conf_sensors(sensor_type: str, sensors: Iterable[tuple[str, Iterable[PairIn]]],
                        tight: bool = False) -> str:
    """``CONF {Type t} {Name n} {Key v} ... {Name n2} ...``: every sensor's Name, then its fields.

    ``tight``: no blank between one sensor's segments (UDK's camera, ``USARCamera.GetConfData``).
    """
    parts = [format_head("CONF"), format_segment(("Type", sensor_type))]
    for name, fields in sensors:
        segments = [format_segment(("Name", name))] + [format_segment(f) for f in fields]
        parts.append(("" if tight else " ").join(segments))
    return " ".join(parts) + "\r\n"


def format_conf_effecters(effecters: Iterable[tuple[str, Iterable[EffecterOpcode | tuple[Any, ...]]]],
                          item_type: str = "Effecter") -> str:
    """``CONF {Type Effecter} {Name n} {Opcode o} {MaxVal a} {MinVal b} ...`` (or the effecters' own type)."""
    segs: list[PairIn] = [("Type", item_type)]
    for name, opcodes in effecters:
        segs.append(("Name", name))
        for op in opcodes:
            op = EffecterOpcode(*op)
            segs += [("Opcode", op.opcode), ("MaxVal", op.max_val), ("MinVal", op.min_val)]
    return format_line("CONF", segs)


def format_conf_mispkg(packages: Iterable[tuple[str, Iterable[ConfLink | tuple[Any, ...]]]]) -> str:
    """``CONF {Type MisPkg} {Name p} {Link i} {JointType t} {MaxSpeed} {MaxTorque} {MinRange} {MaxRange} ...``."""
    def link_segments(link: ConfLink) -> list[PairIn]:
        return [("Link", int(link.link)), ("JointType", link.joint_type),
                ("MaxSpeed", link.max_speed), ("MaxTorque", link.max_torque),
                ("MinRange", link.min_range), ("MaxRange", link.max_range)]

    return _mispkg_line("CONF", packages, ConfLink, link_segments)


def format_res(time: float | Fixed | str, res_type: str, name: str | None,
               status: bool | str | int | float, extra: Iterable[PairIn] = (), reason: str = "") -> str:
    """``RES {Time t} {Type ty} {Name n} {Status OK|Failed}`` + extra pairs [+ ``{Reason why}``].

    ``status`` True/False -> OK/Failed; a number or word is sent as is. ``reason`` (extension, as
    in ERR): why a Failed request failed, last so that clients reading the manual's fields ignore it.
    """
    segs = _present([("Time", _time(time)), ("Type", res_type), ("Name", name),
                     ("Status", _status(status))])
    return format_line("RES", segs + list(extra) + _reason(status, reason))


def _reason(status: bool | str | int | float, reason: str) -> list[PairIn]:
    """The ``Reason`` pair of a failed RES (none when it succeeded or nobody said why)."""
    return [("Reason", _sanitise(reason, "failed"))] if status is False and reason else []


def format_res_camera(time: float | Fixed | str,
                      cameras: Iterable[tuple[str, Num, bool | str] | tuple[str, Num, bool | str, str]]) -> str:
    """``RES {Time t} {Type Camera} {Name c FOV f Status OK} ...`` (FOV after the command).

    A fourth element is why that camera failed: ``{Name c FOV f Status Failed Reason why}``.
    """
    segs: list[Any] = [("Time", _time(time)), ("Type", "Camera")]
    for name, fov, ok, *why in cameras:
        segs.append((("Name", name), ("FOV", fov), ("Status", _status(ok)), *_reason(ok, why[0] if why else "")))
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
            out.append((_need(g, "Name"), rng))
    return tuple(out)


def decode_gps(message: Line | str | bytes) -> tuple[float, float]:
    """(latitude, longitude) in signed decimal degrees of a GPS SEN line."""
    msg = message if isinstance(message, Line) else parse_message(message)
    lat = _typed(_need(msg, "Latitude"), "Latitude", parse_gps_coordinate, None)
    lon = _typed(_need(msg, "Longitude"), "Longitude", parse_gps_coordinate, None)
    return lat, lon
