"""Core readings -> protocol lines (STA, MISSTA, SEN), and robot descriptions -> GEO/CONF.

Pure functions: no sockets, no simulator state beyond the objects passed in.
This is the protocol's edge, so every frame conversion happens here: core
values are REP-103 (world x north, y west, z up; bodies FLU), wire values are
SAE J670 (x forward/north, y right/east, z down), via ``usarsim.protocol.frames``.
"""
from __future__ import annotations

import dataclasses
import functools
import math
import re
from typing import TYPE_CHECKING, Any, Callable, Iterable, cast

from usarsim import rotations
from usarsim.protocol.frames import to_sae_euler, to_sae_vector, wrap_2pi_wire, wrap_pi_wire
from usarsim.protocol import grammar as g
from usarsim.sim import readings as rd
from usarsim.sim.sensors import registry as sensor_registry
from usarsim.sim.world import FALL_LIMIT, SPAWN_HEIGHT

if TYPE_CHECKING:
    from usarsim.sim.catalogue import RobotSpec
    from usarsim.sim.robot import Robot
    from usarsim.sim.world import StartPose, WorldSpec

__all__ = [
    "GAME_TYPE", "format_readings", "format_robot_readings", "format_reading", "steering_type",
    "nfo_game", "nfo_start_poses", "geo_robot", "geo_mispkg", "geo_effecters", "geo_sensors",
    "conf_robot", "conf_mispkg", "conf_effecters", "conf_sensors", "geo_reply", "conf_reply",
    "to_sae_vector", "to_sae_euler", "wire_name", "LINE_FORMS",
]

GAME_TYPE = "BotDeathMatch"  # what the manual's SimpleUI screenshot shows

# Readings that several sensors of one type share one SEN line for (manual §9.3 examples).
_GROUPED = (rd.RangeReading, rd.EncoderReading, rd.TouchReading)


UDK_TIME_DIGITS = 4  # UDK prints WorldInfo.TimeSeconds with four decimals ({Time 477.7582}); UT2004 two


def _era_time(now: float, dialect: str) -> float | g.Fixed:
    return g.Fixed(now, UDK_TIME_DIGITS) if dialect == "udk" else now


def _time(now: float, stamped: bool, dialect: str = "ut2004") -> float | g.Fixed | None:
    """The Time segment's value of a SEN line (None: not stamped)."""
    return _era_time(now, dialect) if stamped else None


# --------------------------------------------------------------------------- streamed messages

def format_reading(reading: rd.Reading, stamped: bool = False, dialect: str = "ut2004") -> str | None:
    """The line of one reading (None: no protocol message for it, e.g. images, joint states)."""
    stamp = _time(reading.time, stamped, dialect)
    if isinstance(reading, rd.RobotState):
        return _sta(reading, stamp, dialect)
    if isinstance(reading, rd.MissionPackageState):  # always timed, in the era's digits
        return _missta(reading, _era_time(reading.time, dialect))
    if dialect == "udk" and isinstance(reading, _GROUPED):
        return _format_single_udk(reading, stamp)
    fmt = LINE_FORMS.get(type(reading))
    return fmt(reading, stamp) if fmt else None


def format_robot_readings(readings: Iterable[rd.Reading], stamped: Callable[[str], bool] = lambda name: False,
                          dialect: str = "ut2004") -> list[str]:
    """Lines for one robot's readings of one tick: STA, MISSTA, then SEN.

    ``stamped(sensor_name)`` says whether that sensor sends the optional Time
    segment (its ``with_timestamp``, the manual's bWithTimeStamp). In the ``ut2004``
    dialect Sonar/IR/Encoder/Touch readings of one type share one SEN line (USARSim 3.x);
    in ``udk`` each sensor has its own line.
    """
    state: list[str] = []
    missta: list[str] = []
    # SEN entries in first-seen order: a finished line, or the key of a group still filling up
    sen: list[str | tuple[type, str]] = []
    groups: dict[tuple[type, str], list[Any]] = {}
    for r in readings:
        if dialect != "udk" and isinstance(r, _GROUPED):
            key = (type(r), getattr(r, "sensor_type", ""))
            if key not in groups:
                groups[key] = []
                sen.append(key)
            groups[key].append(r)
            continue
        line = format_reading(r, stamped(r.sensor), dialect)
        if line is None:
            continue
        if isinstance(r, rd.RobotState):
            state.append(line)
        elif isinstance(r, rd.MissionPackageState):
            missta.append(line)
        else:
            sen.append(line)
    out = state + missta
    for entry in sen:
        if isinstance(entry, str):
            out.append(entry)
        else:
            members = groups[entry]
            out.append(_format_group(members, _time(members[0].time, any(stamped(m.sensor) for m in members))))
    return out


def _format_group(members: list[rd.Reading], when: g.Time) -> str:
    first = members[0]
    if isinstance(first, rd.RangeReading):
        return g.format_sen_range(first.sensor_type, [(m.sensor, m.range) for m in members], when)  # type: ignore[attr-defined]
    if isinstance(first, rd.EncoderReading):
        return g.format_sen_encoder([(m.sensor, m.ticks) for m in members], when)  # type: ignore[attr-defined]
    return g.format_sen_touch([(m.sensor, m.touched) for m in members], when)  # type: ignore[attr-defined]


def _format_single_udk(r: Any, when: g.Time) -> str:
    # UDK: one line per sensor, name and value in segments of their own ({Name F1} {Range 4.4690})
    if isinstance(r, rd.RangeReading):
        return g.format_sen_udk(r.sensor_type, r.sensor, "Range", r.range, when)
    if isinstance(r, rd.EncoderReading):
        return g.format_sen_udk("Encoder", r.sensor, "Tick", int(r.ticks), when)
    return g.format_sen_udk("Touch", r.sensor, "Touch", bool(r.touched), when)


def _sta(r: rd.RobotState, stamp: g.Time, dialect: str = "ut2004") -> str:
    # Steer angles: core +left, SAE +right. Battery: whole seconds left.
    kwargs: dict[str, Any] = {}
    if r.vehicle_type == "GroundVehicle":
        kwargs = {"front_steer": -r.front_steer, "rear_steer": -r.rear_steer}
    elif r.vehicle_type == "NauticVehicle":  # rudder +left -> SAE +right; stern plane +rise in both
        kwargs = {"stern_plane_angle": r.stern_plane, "rudder_angle": -r.rudder}
    return g.format_sta(r.vehicle_type, _era_time(r.time, dialect), light_toggle=r.light_on,
                        light_intensity=r.light_intensity,
                        battery=int(r.battery), dialect=dialect, **kwargs)


def _missta(r: rd.MissionPackageState, stamp: g.Time) -> str:
    # Joint values stay in joint space (the robot model's own axes), as MISPKG takes them.
    return g.format_missta(r.time if stamp is None else stamp, r.package, zip(r.links, r.values, r.torques))


def _scan(r: rd.RangeScan, stamp: g.Time) -> str:
    # Decision D9: beam 0 is the rightmost. In FLU the rightmost beam has the smallest angle.
    ranges = list(r.ranges)
    step = r.angle_increment
    if step < 0:
        ranges.reverse()
        step = -step
    # The configured FOV: the scan is centred, so it is twice the first beam's angle
    # (FOV/Resolution need not be whole; the beams then stop short of the left edge).
    fov = 2.0 * abs(r.angle_min) if r.angle_min != 0 else step * (len(ranges) - 1)
    return g.format_sen_range_scanner(r.sensor, step, fov, ranges, stamp, r.sensor_type)


def _range(r: rd.RangeReading, stamp: g.Time) -> str:
    return g.format_sen_range(r.sensor_type, [(r.sensor, r.range)], stamp)


def _odometry(r: rd.OdometryReading, stamp: g.Time) -> str:
    return g.format_sen_odometry(r.sensor, (r.x, -r.y, wrap_pi_wire(-r.theta)), stamp)


def _ins(r: rd.InsReading, stamp: g.Time) -> str:
    return g.format_sen_ins(r.sensor, to_sae_vector(r.position), to_sae_euler(r.rpy, wrap_2pi_wire),
                            stamp)


def _gps(r: rd.GpsReading, stamp: g.Time) -> str:
    return g.format_sen_gps(r.sensor, r.latitude, r.longitude, int(bool(r.fix)), r.satellites,
                            stamp)


def _ground_truth(r: rd.GroundTruthReading, stamp: g.Time) -> str:
    rpy = rotations.euler_from_quaternion(r.orientation)
    return g.format_sen_ground_truth(r.sensor, to_sae_vector(r.position), to_sae_euler(rpy),
                                     stamp)


def _encoder(r: rd.EncoderReading, stamp: g.Time) -> str:
    return g.format_sen_encoder([(r.sensor, r.ticks)], stamp)


def _touch(r: rd.TouchReading, stamp: g.Time) -> str:
    return g.format_sen_touch([(r.sensor, r.touched)], stamp)


def _rfid(r: rd.RfidReading, stamp: g.Time) -> str:
    tags = [g.RfidTag(t.tag_id, _mem(t.memory) if r.memory_read else None,
                      to_sae_vector(t.position) if r.report_location else None) for t in r.tags]
    return g.format_sen_rfid(r.sensor, tags, stamp)


def _mem(text: str) -> str:
    # A value cannot hold blanks or braces; tag memory written over the protocol never does.
    cleaned = re.sub(r"[^\x21-\x7a\x7c\x7e]", "_", str(text)).strip(",")
    return cleaned or "0"


def _victim(r: rd.VictimReading, stamp: g.Time) -> str:
    return g.format_sen_victim(r.sensor, [(p.part, to_sae_vector(p.position)) for p in r.parts],
                               stamp)


def _human_motion(r: rd.HumanMotionReading, stamp: g.Time) -> str:
    return g.format_sen_human_motion(r.sensor, r.probability, stamp)


def _sound(r: rd.SoundReading, stamp: g.Time) -> str:
    return g.format_sen_sound(r.sensor, r.loudness, r.duration, stamp)


def _range3d(r: rd.PointCloudReading, stamp: g.Time) -> str:
    # Extension D12. Rows top to bottom are kept; within a row the FLU order (right to
    # left for increasing angle) matches the 2-D scanner's beam-0-rightmost rule.
    return g.format_sen_range_scanner_3d(r.sensor, (r.horizontal_resolution, r.vertical_resolution),
                                         (r.horizontal_fov, r.vertical_fov), r.ranges, stamp)


# The motion sensors below have no form in the manual; names follow the UDK USARSim clients
# (AcceleroMeter with ProperAcceleration, AngularVel) where they exist (docs/sensors.md).
def _depth(r: rd.DepthReading, stamp: g.Time) -> str:
    return g.format_sen_depth(r.sensor, r.depth, stamp)


def _compass(r: rd.CompassReading, stamp: g.Time) -> str:
    # heading is clockwise from magnetic north in both frames; the field goes out in SAE axes and in
    # microtesla, so the wire's four decimals carry it (the Earth's field is 25-65 uT, 0.0000 T)
    field = tuple(MICROTESLA * b for b in to_sae_vector(r.magnetic_field))
    return g.format_sen_compass(r.sensor, wrap_2pi_wire(r.heading), field, stamp)


MICROTESLA = 1e6  # wire unit of the Compass field per tesla


def _accelerometer(r: rd.AccelerometerReading, stamp: g.Time) -> str:
    return g.format_sen_vector("AcceleroMeter", "ProperAcceleration", r.sensor, to_sae_vector(r.linear_acceleration),
                               stamp)


def _gyroscope(r: rd.GyroscopeReading, stamp: g.Time) -> str:
    return g.format_sen_vector("Gyroscope", "AngularVel", r.sensor, to_sae_vector(r.angular_velocity),
                               stamp)


def _velocimeter(r: rd.VelocimeterReading, stamp: g.Time) -> str:
    return g.format_sen_vector("Velocimeter", "Velocity", r.sensor, to_sae_vector(r.linear_velocity),
                               stamp)


def _inclinometer(r: rd.InclinometerReading, stamp: g.Time) -> str:
    roll, pitch, _ = to_sae_euler((r.roll, r.pitch, 0.0))
    return g.format_sen_inclinometer(r.sensor, roll, pitch, stamp)


def _lost(r: rd.RobotLost, stamp: g.Time) -> str:
    # USARSim has no message for this; the ERR extension tells the client, which may INIT again
    return g.format_err("INIT", f"robot {r.robot} fell out of the world (more than {FALL_LIMIT:g} m below the "
                                f"lowest floor) and was removed; send INIT again")


# The protocol's one record per reading type: its line formatter, or None where the protocol
# carries it another way (say which). Front-door conformance: test/test_front_doors.py.
LINE_FORMS: dict[type, Callable[[Any, g.Time], str] | None] = {
    rd.RobotLost: _lost,
    rd.RobotState: _sta,
    rd.MissionPackageState: _missta,
    rd.RangeScan: _scan,
    rd.RangeReading: _range,
    rd.OdometryReading: _odometry,
    rd.InsReading: _ins,
    rd.GpsReading: _gps,
    rd.GroundTruthReading: _ground_truth,
    rd.EncoderReading: _encoder,
    rd.TouchReading: _touch,
    rd.RfidReading: _rfid,
    rd.VictimReading: _victim,
    rd.HumanMotionReading: _human_motion,
    rd.SoundReading: _sound,
    rd.PointCloudReading: _range3d,
    rd.CameraImage: None,  # frames go through the image server (image_server.py, port 5003)
    rd.JointStateReading: None,  # joint values go out in MISSTA (MissionPackageState)
    rd.TracePoint: None,  # USARSim's TRACE draws in the world; clients see nothing on the wire
    rd.DepthReading: _depth,
    rd.CompassReading: _compass,
    rd.AccelerometerReading: _accelerometer,
    rd.GyroscopeReading: _gyroscope,
    rd.VelocimeterReading: _velocimeter,
    rd.InclinometerReading: _inclinometer,
}



def format_readings(readings: Iterable[rd.Reading],
                    stamped: Callable[[str, str], bool] = lambda robot, sensor: False,
                    dialect: str = "ut2004") -> list[tuple[str, str]]:
    """(message kind, line) pairs for readings of one tick; ``stamped(robot, sensor)`` as above."""
    by_robot: dict[str, list[rd.Reading]] = {}
    for r in readings:
        by_robot.setdefault(r.robot, []).append(r)
    out: list[tuple[str, str]] = []
    for robot, items in by_robot.items():
        for line in format_robot_readings(items, functools.partial(stamped, robot), dialect):
            out.append((line.split(" ", 1)[0].strip(), line))
    return out


# --------------------------------------------------------------------------- NFO

def nfo_game(world: "WorldSpec | str", time_limit: int = 0) -> str:
    """``NFO {Gametype BotDeathMatch} {Level <world>} {TimeLimit 0}``, sent on connect."""
    level = world if isinstance(world, str) else world.name
    return g.format_nfo_game(GAME_TYPE, _word(level, "world"), time_limit)


def nfo_start_poses(world: "WorldSpec | Iterable[StartPose]") -> str:
    """``NFO {StartPoses n} {Tag x,y,z r,p,y ...}`` in the SAE world frame, at the standard
    spawn height above the floor (USARSim's PlayerStarts, manual §5.3.5)."""
    poses = cast("Iterable[StartPose]", getattr(world, "start_poses", world))  # a WorldSpec, or its poses
    return g.format_nfo_start_poses(
        (pose.tag, to_sae_vector((pose.xyz[0], pose.xyz[1], pose.xyz[2] + SPAWN_HEIGHT)), to_sae_euler(pose.rpy))
        for pose in poses)


def _word(text: str, fallback: str) -> str:
    cleaned = re.sub(r"[^\x21-\x7a\x7c\x7e]+", "_", str(text)).strip("_,")
    return cleaned or fallback


# --------------------------------------------------------------------------- GEO / CONF
# Each returns one line, or None when the robot has nothing of that kind (then an empty reply goes out).

_STEERING = {"skid": "SkidSteered", "differential": "SkidSteered", "tracked": "SkidSteered",
             "serpentine": "SkidSteered",
             "ackermann": "AckermanSteered", "aerial": "RotaryWing", "omni": "OmniDrive",
             "blimp": "Blimp"}


def steering_type(spec: "RobotSpec") -> str:
    """CONF SteeringType of a catalogue entry (the manual's spellings)."""
    if spec.drive.type == "legged":
        legs = sum(1 for grp in spec.joint_groups if grp.kind == "legs")
        return "TwoLegs" if legs == 2 else "FourLegs"
    if spec.vehicle_type == "NauticVehicle":
        return "Underwater"
    return _STEERING.get(spec.drive.type, "None")


# CONF keys that USARSim.ini spells otherwise than CamelCase (spec protocol.md §8 ini tables), by sensor
# family (its first registered type name: IRScanner shares RangeScanner's keys, as in USARBot where it
# extends RangeScanner); a family's entries win over the ones every sensor shares (None).
_MANUAL_KEYS: dict[str | None, dict[str, str]] = {
    None: {"with_timestamp": "bWithTimeStamp", "hidden": "HiddenSensor"},
    "HumanMotion": {"fov": "FOV"},
    "VictSensor": {"horizontal_fov": "HorizontalFOV", "vertical_fov": "VerticalFOV"},
    "RFID": {"tx_power_dbm": "dBmTXPower", "rx_sensitivity_dbm": "dBmRXSensibility",
             "obstacle_attenuation_db": "dBObstacleAttenuation", "always_read_memory": "bAlwaysReadRFIDmem"},
}


def wire_name(snake: str, sensor_type: str | None = None) -> str:
    """CONF key of a sensor parameter: the manual's ini name (``with_timestamp`` ->
    ``bWithTimeStamp``), else CamelCase (``max_range`` -> ``MaxRange``)."""
    family = sensor_registry.family(sensor_type).type_names[0] if sensor_type else None
    known = _MANUAL_KEYS.get(family, {}).get(snake) or _MANUAL_KEYS[None].get(snake)
    if known:
        return known
    return "".join(part[:1].upper() + part[1:] for part in snake.split("_") if part)


def _mount(spec: "RobotSpec", parent: str, dialect: str) -> tuple[str, int | None]:
    """(Mount, MountLink) of an item on ``parent``: the chassis is ``HARD`` in UT2004 (the manual) and the
    robot's class in UDK (``String(Platform.Class)``); a mission-package link is ``<Pkg>_Link<n>`` in
    UT2004 and the package plus ``{MountLink n}`` in UDK; any other link goes by its name."""
    if parent == "base_link":
        return (spec.class_name if dialect == "udk" else "HARD"), None
    joint = next((link.joint_name for link in spec.body.links if link.name == parent), None)
    for group in spec.joint_groups:
        for number, link in enumerate(group.links, start=1):
            if link.joint == joint:
                return (group.name, number) if dialect == "udk" else (f"{group.name}_Link{number}", None)
    return parent, None


def _robot_name(spec: "RobotSpec", robot: str, dialect: str) -> str:
    # UT2004: the robot's name as given in INIT; UDK: its class (WheeledVehicle.uc: {Name " $ self.Class)
    return spec.class_name if dialect == "udk" else robot


def geo_robot(spec: "RobotSpec", robot: str, dialect: str = "ut2004") -> str:
    """``GEO {Type <vehicle class>} {Name n} {Dimensions} {COG}`` (+ wheels for ground vehicles)."""
    drive = spec.drive
    wheels: dict[str, Any] = {}
    if spec.vehicle_type == "GroundVehicle":
        wheels = {"wheel_radius": drive.wheel_radius, "wheel_separation": drive.wheel_separation,
                  "wheelbase": drive.wheelbase}
    return g.format_geo_vehicle(spec.vehicle_type, _robot_name(spec, robot, dialect), spec.dimensions,
                                (0.0, 0.0, 0.0), **wheels)


def _geo_item(spec: "RobotSpec", name: str, mount: Any, dialect: str) -> g.GeoItem:
    return g.GeoItem(name, to_sae_vector(mount.xyz), to_sae_euler(mount.rpy), *_mount(spec, mount.parent, dialect))


def geo_sensors(spec: "RobotSpec", sensor_type: str, name: str | None = None, dialect: str = "ut2004") -> str | None:
    """GEO of the robot's sensors of a type (each one's Location, Orientation, Mount), in the era's form."""
    items = [_geo_item(spec, s.name, s.mount, dialect) for s in spec.sensors
             if s.type == sensor_type and (name is None or s.name == name)]
    return g.format_geo_sensors(sensor_type, items, dialect) if items else None


def geo_effecters(spec: "RobotSpec", name: str | None = None, dialect: str = "ut2004",
                  item_type: str = "Effecter") -> str | None:
    """GEO of the robot's effecters (all, or those of ``item_type``): where each acts (its mount)."""
    items = [_geo_item(spec, e.name, e.mount, dialect) for e in spec.effecters
             if (name is None or e.name == name) and item_type in ("Effecter", e.type)]
    return g.format_geo_sensors(item_type, items, dialect) if items else None


def _groups(spec: "RobotSpec", name: str | None) -> list[Any]:
    return [grp for grp in spec.joint_groups if name is None or grp.name == name]


def geo_mispkg(spec: "RobotSpec", name: str | None = None) -> str | None:
    """``GEO {Type MisPkg} {Name p} {Link i} {ParentLink j} {Location} {Orientation} ...`` per joint group."""
    groups = _groups(spec, name)
    if not groups:
        return None
    return g.format_geo_mispkg([(grp.name, _geo_links(spec, grp)) for grp in groups])


def _geo_links(spec: "RobotSpec", group: Any) -> list[g.GeoLink]:
    # Joint origins from the body model; ParentLink -1 when the parent is not a link of the package.
    by_joint = {link.joint_name: link for link in spec.body.links}
    numbers = {by_joint[l.joint].name: n for n, l in enumerate(group.links, start=1) if l.joint in by_joint}
    out = []
    for number, link in enumerate(group.links, start=1):
        body_link = by_joint.get(link.joint)
        if body_link is None:
            out.append(g.GeoLink(number, -1, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)))
        else:
            out.append(g.GeoLink(number, numbers.get(body_link.parent, -1), to_sae_vector(body_link.xyz),
                                 to_sae_euler(body_link.rpy)))
    return out


def conf_robot(spec: "RobotSpec", robot: str, dialect: str = "ut2004") -> str:
    """``CONF {Type <vehicle class>} {Name <robot>} {SteeringType} {Mass}`` (+ limits for ground vehicles)."""
    drive = spec.drive
    limits: dict[str, Any] = {}
    if spec.vehicle_type == "GroundVehicle":
        limits = {"max_speed": drive.max_wheel_speed, "max_torque": drive.max_torque,
                  "max_front_steer": drive.max_front_steer, "max_rear_steer": drive.max_rear_steer}
        if drive.type == "omni":  # one steer limit per steered wheel (USARBot.ini MaxSteerAngle)
            limits["max_front_steer"] = limits["max_rear_steer"] = drive.max_steer
    elif spec.vehicle_type == "NauticVehicle":
        limits = {"max_rudder": drive.max_rudder, "max_stern_plane": drive.max_stern_plane,
                  "max_propeller": drive.max_propeller}
    return g.format_conf_vehicle(spec.vehicle_type, _robot_name(spec, robot, dialect), steering_type(spec), spec.mass,
                                 dialect=dialect, **limits)


def conf_mispkg(spec: "RobotSpec", name: str | None = None) -> str | None:
    """``CONF {Type MisPkg} {Name p} {Link i} {JointType} {MaxSpeed} {MaxTorque} {MinRange} {MaxRange} ...``."""
    groups = _groups(spec, name)
    if not groups:
        return None
    return g.format_conf_mispkg(
        [(grp.name, [g.ConfLink(n, "Prismatic" if link.type == "prismatic" else "Revolute", link.max_speed,
                                link.max_torque, link.min, link.max)
                     for n, link in enumerate(grp.links, start=1)]) for grp in groups])


def conf_effecters(spec: "RobotSpec", opcodes: dict[str, dict[str, tuple[float, float]]],
                   name: str | None = None, item_type: str = "Effecter") -> str | None:
    """``CONF {Type Effecter|<its type>} {Name n} {Opcode o} {MaxVal} {MinVal} ...``; ``opcodes[name][op] =
    (min, max)``. USARSim 3.x answered an effecter under its own type (``CONF {Type Gripper} ...``)."""
    effecters = [(e.name, [g.EffecterOpcode(op, hi, lo) for op, (lo, hi) in opcodes.get(e.name, {}).items()])
                 for e in spec.effecters if (name is None or e.name == name) and item_type in ("Effecter", e.type)]
    return g.format_conf_effecters(effecters, item_type) if effecters else None


def conf_sensors(spec: "RobotSpec", sensor_type: str, name: str | None = None, *,
                 params: dict[str, Any] | None = None, current: dict[str, dict[str, Any]] | None = None,
                 dialect: str = "ut2004") -> str | None:
    """``CONF {Type t} {Name n} {Key v} ... {Name n2} ...``; ``params``: live Params per sensor name,
    ``current``: e.g. FOV. Each sensor's fields are those its class sends in the real source
    (``GetConfData``; docs/protocol.md), else the manual's ini keys."""
    chosen = [s for s in spec.sensors if s.type == sensor_type and (name is None or s.name == name)]
    if not chosen:
        return None
    items = []
    for s in chosen:
        prm = (params or {}).get(s.name)
        if prm is None:
            from usarsim.sim.sensors import params_for
            prm = params_for(s)
        interval = prm.scan_interval or spec.msg_period
        items.append((s.name, _conf_fields(s.type, prm, interval, (current or {}).get(s.name, {}), dialect)))
    # UDK's camera glues its segments together ({Name Camera}{TextureOffsetX 0}...)
    tight = dialect == "udk" and sensor_registry.is_camera(sensor_type)
    return g.format_conf_sensors(sensor_type, items, tight=tight)


def _source_conf_fields(sensor_type: str, prm: Any, interval: float, dialect: str) -> list[g.PairIn] | None:
    """The fields a sensor class sends in the real source (docs/protocol.md), None where it has no such class.

    UT2004 forms as USARSim 3.x sent them (quoted in NIST's usarsim_inf, ``Paning`` spelled so),
    UDK forms from the UDK classes' ``GetConfData``.
    """
    udk = dialect == "udk"
    if sensor_type in ("RangeScanner", "IRScanner"):  # RangeSensor + RangeScanner.GetConfData
        return [("MaxRange", prm.max_range), ("MinRange", prm.min_range), ("Resolution", prm.resolution),
                ("Fov", prm.fov), ("Panning" if udk else "Paning", not prm.pitch_plane),
                ("Tilting", bool(prm.pitch_plane))]
    if sensor_type == "Sonar":  # UDK's SonarSensor: its scan interval and cone after RangeSensor's fields
        cone: list[g.PairIn] = [("ScanInterval", interval), ("beamAngle", prm.beam_angle)] if udk else \
            [("BeamAngle", prm.beam_angle)]
        return [("MaxRange", prm.max_range), ("MinRange", prm.min_range)] + cone
    if sensor_type == "IR":  # IRSensor.GetConfData
        return [("MaxRange", prm.max_range), ("MinRange", prm.min_range)]
    if sensor_type == "Odometry":
        return [("ScanInterval", interval)] + ([] if udk else [("EncoderResolution", prm.encoder_resolution)])
    if sensor_type in ("INS", "GPS", "GroundTruth"):
        return [("ScanInterval", interval)]
    if sensor_type == "Encoder":
        return [("Resolution", prm.resolution)]
    if sensor_type == "Touch":
        return [("Diameter", prm.diameter)]
    if sensor_type == "VictSensor":
        return [("MaxRange", prm.distance), ("HorizontalFOV", prm.horizontal_fov),
                ("VerticalFOV", prm.vertical_fov)]
    return None


def _conf_fields(sensor_type: str, prm: Any, interval: float, current: dict[str, Any],
                 dialect: str) -> list[g.PairIn]:
    from usarsim.sim.sensors.camera import CameraParams

    source = _source_conf_fields(sensor_type, prm, interval, dialect)
    if source is not None:
        return source
    fields: list[g.PairIn] = []
    own = dataclasses.fields(prm)
    if sensor_registry.is_camera(sensor_type):  # the manual's RobotCamera keys, then what a kind of camera adds
        fovs: list[g.PairIn] = [("CameraDefFov", prm.fov), ("CameraMinFov", prm.min_fov),
                                ("CameraMaxFov", prm.max_fov), ("CameraFov", current.get("fov", prm.fov))]
        if dialect == "udk":  # USARCamera.GetConfData: the texture's place and size, then the FOVs
            return [("TextureOffsetX", 0), ("TextureOffsetY", 0), ("TextureResolutionX", prm.width),
                    ("TextureResolutionY", prm.height)] + fovs
        fields = fovs + [("Width", prm.width), ("Height", prm.height)]
        camera_keys = {f.name for f in dataclasses.fields(CameraParams)}
        own = tuple(f for f in own if f.name not in camera_keys)
    for f in own:
        value = getattr(prm, f.name)
        if isinstance(value, bool) or (isinstance(value, (int, float)) and math.isfinite(value)):
            fields.append((wire_name(f.name, sensor_type), value))
        elif isinstance(value, str) and value and re.fullmatch(r"[\x21-\x7a\x7c\x7e]+", value):
            fields.append((wire_name(f.name, sensor_type), value))
    return fields


# --------------------------------------------------------------------------- queries on a live robot
# USARSim answers a GETGEO/GETCONF for a type (or name) the robot does not carry with an
# empty reply (e.g. Iridium's GETCONF {Type Actuator} to a P2AT); so does this server.

def _empty(word: str, item_type: str) -> str:
    return g.format_line(word, [("Type", item_type)])


def geo_reply(robot: "Robot", item_type: str, name: str | None = None, dialect: str = "ut2004",
              spec: "RobotSpec | None" = None) -> str:
    """The GEO line answering ``GETGEO {Type item_type} [{Name name}]`` (``spec``: the robot as its
    client named it, default its own)."""
    spec = spec or robot.spec
    name = spec.model_device(name) if name else None
    line = _for_item_type(spec, item_type, robot=lambda: geo_robot(spec, robot.name, dialect),
                          mispkg=lambda: geo_mispkg(spec, name),
                          effecter=lambda: geo_effecters(spec, name, dialect, item_type),
                          sensor=lambda: geo_sensors(spec, item_type, name, dialect))
    return line or _empty("GEO", item_type)


def _for_item_type(spec: "RobotSpec", item_type: str, *, robot: Callable[[], str | None],
                   mispkg: Callable[[], str | None], effecter: Callable[[], str | None],
                   sensor: Callable[[], str | None]) -> str | None:
    # GETGEO and GETCONF name the same kinds of item: the robot, mission packages, effecters (all of
    # them, or those of one type), a sensor type
    if item_type in {e.type for e in spec.effecters} - {s.type for s in spec.sensors}:
        return effecter()
    chosen = {"Robot": robot, "MisPkg": mispkg, "Effecter": effecter}.get(item_type, sensor)
    return chosen()


def conf_reply(robot: "Robot", item_type: str, name: str | None = None, dialect: str = "ut2004",
               spec: "RobotSpec | None" = None) -> str:
    """The CONF line answering ``GETCONF {Type item_type} [{Name name}]``, with live values (camera FOV)."""
    spec = spec or robot.spec
    name = spec.model_device(name) if name else None

    def effecters() -> str | None:
        opcodes = {e.name: dict(getattr(e, "opcodes", {})) for e in robot.effecters.values()}
        return conf_effecters(spec, opcodes, name, item_type)

    def sensors() -> str | None:
        params = {s.name: s.params for s in robot.sensors}
        current = {s.name: {"fov": fov} for s in robot.sensors if isinstance(fov := getattr(s, "fov", None), float)}
        return conf_sensors(spec, item_type, name, params=params, current=current, dialect=dialect)

    line = _for_item_type(spec, item_type, robot=lambda: conf_robot(spec, robot.name, dialect),
                          mispkg=lambda: conf_mispkg(spec, name), effecter=effecters, sensor=sensors)
    return line or _empty("CONF", item_type)
