"""Typed protocol commands -> core commands (pure: no sockets, no simulator).

Incoming values are SAE J670 (y right, z down, positive yaw/steer = right);
core commands are REP-103 (y left, z up, positive yaw/steer = left). The
conversion happens here and nowhere else on the way in.

A command the robot cannot execute raises :class:`Unsupported`; the server
answers it with ``ERR {Command X} {Reason ...}``. SET never raises: every
outcome is a ``RES`` line (Status OK/Failed), as the manual specifies.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

from usarsim.protocol import frames
from usarsim.protocol import grammar as g
from usarsim.sim.catalogue import RobotSpec
from usarsim.sim.commands import (AckermannDrive, AerialDrive, BlimpDrive, Command, Flip, JointTargets, NauticDrive,
                                  OmniDrive, ReachPose, SensorCommand, SetLight, WheelDrive)
from usarsim.sim.sensors import is_camera

WHEEL_DRIVES = ("skid", "differential", "tracked", "serpentine")


class Unsupported(ValueError):
    """The robot cannot execute this command (answered with ERR, connection kept)."""


# --------------------------------------------------------------------------- INIT

@dataclass(frozen=True)
class SpawnRequest:
    """Arguments of ``Simulator.spawn`` for an INIT (core frame)."""

    class_name: str
    name: str | None
    start: str | None
    position: tuple[float, float, float] | None
    rpy: tuple[float, float, float] | None

    @property
    def station(self) -> bool:
        """True for ``USARBot.ComStation``: a wireless relay, not a robot."""
        return self.class_name.lower() in ("usarbot.comstation", "comstation")


def spawn_request(init: g.Init) -> SpawnRequest:
    """INIT -> spawn arguments; Location/Rotation converted from SAE to the core frame.

    ``Location`` z is the ground height under the robot (SAE, z down): the
    simulator rests the robot's lowest point just above it, so the
    coordinates returned by GETSTARTPOSES can be sent back as they are.
    """
    class_name = init.class_name
    position = frames.flip_vector(init.location) if init.location is not None else None
    rpy = frames.flip_euler(init.rotation) if init.rotation is not None else None
    start = init.start if init.location is None else None
    return SpawnRequest(class_name, init.name, start, position, rpy)


# --------------------------------------------------------------------------- DRIVE family

def _neg(x: float | None) -> float:
    return 0.0 if x is None else -x


def _or0(x: float | None) -> float:
    return 0.0 if x is None else x


def drive_commands(drive: g.Drive, robot: str, spec: RobotSpec) -> list[Command]:
    """Core commands of one DRIVE line for ``robot`` (raises Unsupported).

    As USARSim did, the fields that fit the robot's vehicle are applied and the others
    ignored: Iridium's Stop line (``{Left 0} {Right 0} {Speed 0} {AltitudeVelocity 0} ...``)
    stops any robot, and ``{Name robot_0}`` without ``{Value}``/``{Steer}`` names the robot,
    not a joint. Only a line of which nothing applies is refused.
    """
    kind = spec.drive.type
    normalized = bool(drive.normalized)
    out: list[Command] = []
    ignored: list[str] = []
    if drive.left is not None or drive.right is not None:
        if kind in WHEEL_DRIVES:
            out.append(WheelDrive(robot, _or0(drive.left), _or0(drive.right), normalized))
        else:
            ignored.append("Left/Right")
    if drive.speed is not None or drive.front_steer is not None or drive.rear_steer is not None:
        if kind == "ackermann":
            # SAE steer is positive to the right, the core's to the left
            out.append(AckermannDrive(robot, _or0(drive.speed), _neg(drive.front_steer), _neg(drive.rear_steer),
                                      normalized))
        else:
            ignored.append("Speed/FrontSteer/RearSteer")
    aerial = (drive.altitude_velocity, drive.linear_velocity, drive.lateral_velocity, drive.rotational_velocity)
    if any(v is not None for v in aerial):
        if kind == "aerial":
            # SAE lateral is +right and yaw rate +clockwise; core is +left / +counter-clockwise
            out.append(AerialDrive(robot, linear=_or0(drive.linear_velocity), lateral=_neg(drive.lateral_velocity),
                                   altitude=_or0(drive.altitude_velocity), yaw_rate=_neg(drive.rotational_velocity),
                                   normalized=normalized))
        else:
            ignored.append("AltitudeVelocity/LinearVelocity/LateralVelocity/RotationalVelocity")
    if drive.propeller is not None or drive.rudder is not None or drive.stern_plane is not None:
        if kind == "nautic":
            # SAE rudder +right -> core +left; SAE stern plane +pitch up (rise) is the core's sense too
            out.append(NauticDrive(robot, drive.propeller, None if drive.rudder is None else -drive.rudder,
                                   drive.stern_plane, normalized))
        else:
            ignored.append("Propeller/Rudder/SternPlane")
    if drive.wheels:
        if kind == "omni":
            # SAE WheelSteer +right (clockwise from above) -> core +left
            out.append(OmniDrive(robot, tuple((w.number, w.speed, None if w.steer is None else -w.steer)
                                              for w in drive.wheels), normalized))
        else:
            ignored.append("WheelNumber/WheelSpeed/WheelSteer")
    if drive.xz_angle is not None or drive.thrust_propeller is not None or drive.tail_propeller is not None:
        if kind == "blimp":
            # XZAngle +up in both frames (SAE pitch up); TailPropeller +right (SAE yaw) -> core +left
            out.append(BlimpDrive(robot, drive.xz_angle, drive.thrust_propeller,
                                  None if drive.tail_propeller is None else -drive.tail_propeller, normalized))
        else:
            ignored.append("XZAngle/ThrustPropeller/TailPropeller")
    if drive.name is not None:
        joint = spec.model_joint(drive.name)  # the manual's names (LeftFWheel) answer too
        if drive.steer is not None:  # a steer angle: SAE +right -> core +left
            out.append(JointTargets(robot, {joint: -drive.steer}, order=0, steer=True))
        if drive.value is not None:
            order = 0 if drive.order is None else drive.order
            if order not in (0, 1, 2):
                raise Unsupported(f"Order must be 0, 1 or 2, got {order}")
            out.append(JointTargets(robot, {joint: drive.value}, order=order))
    if drive.light is not None:
        out.append(SetLight(robot, bool(drive.light)))
    if drive.flip:
        out.append(Flip(robot))
    if not out:
        what = f"; {', '.join(ignored)} do not apply" if ignored else ""
        raise Unsupported(f"no drive parameter for {spec.class_name}{what} ({_drive_hint(spec)})")
    return out


def _drive_hint(spec: RobotSpec) -> str:
    kind = spec.drive.type
    if kind in WHEEL_DRIVES:
        return "use {Left} {Right}"
    if kind == "ackermann":
        return "use {Speed} {FrontSteer} {RearSteer}"
    if kind == "aerial":
        return "use {AltitudeVelocity} {LinearVelocity} {LateralVelocity} {RotationalVelocity}"
    if kind == "nautic":
        return "use {Propeller} {Rudder} {SternPlane}"
    if kind == "omni":
        return "use {WheelNumber} {WheelSpeed} {WheelSteer} groups"
    if kind == "blimp":
        return "use {XZAngle} {ThrustPropeller} {TailPropeller}"
    return "use joint DRIVE {Name} or MULTIDRIVE"


def multidrive_commands(cmd: g.MultiDrive, robot: str, spec: RobotSpec) -> list[Command]:
    """MULTIDRIVE -> one JointTargets with absolute angles (joint's own sense)."""
    return [JointTargets(robot, {spec.model_joint(name): value for name, value in cmd.joints}, order=0)]


def mispkg_commands(cmd: g.MisPkg, robot: str, spec: RobotSpec) -> list[Command]:
    """MISPKG -> JointTargets on ``<package>:<link>`` keys, one command per Order; the terminal-pose
    form -> one ReachPose (Location/Rotation converted from SAE to the core frame)."""
    group = next((grp for grp in spec.joint_groups if grp.name == cmd.name), None)
    if group is None:
        names = ", ".join(grp.name for grp in spec.joint_groups) or "none"
        raise Unsupported(f"{spec.class_name} has no mission package '{cmd.name}' (packages: {names})")
    if cmd.location is not None:
        rpy = frames.flip_euler(cmd.rotation) if cmd.rotation is not None else None
        return [ReachPose(robot, cmd.name, frames.flip_vector(cmd.location), rpy)]
    by_order: dict[int, dict[str, float]] = {}
    for link in cmd.links:
        if not 1 <= link.link <= len(group.links):
            raise Unsupported(f"{cmd.name} has links 1..{len(group.links)}, not {link.link}")
        if link.order not in (0, 1, 2):
            raise Unsupported(f"Order must be 0, 1 or 2, got {link.order}")
        by_order.setdefault(link.order, {})[f"{cmd.name}:{link.link}"] = link.value
    return [JointTargets(robot, targets, order=order) for order, targets in sorted(by_order.items())]


def camera_commands(cmd: g.Camera, robot: str, spec: RobotSpec) -> list[Command]:
    """Legacy CAMERA on the main (first) camera: Rotation pitch,yaw,roll (rad) -> PanTilt, Zoom (deg) -> FOV."""
    camera = next((s.name for s in spec.sensors if is_camera(s.type)), None)
    if camera is None:
        raise Unsupported(f"{spec.class_name} has no camera")
    out: list[Command] = []
    if cmd.rotation is not None:
        pitch, yaw, _roll = cmd.rotation
        order = 0 if cmd.order is None else cmd.order
        if order not in (0, 1):
            raise Unsupported(f"CAMERA Order must be 0 or 1, got {order}")
        # SAE pitch up / yaw right -> core tilt (+down) / pan (+left): both change sign
        out.append(SensorCommand(robot, camera, "PanTilt", (-yaw, -pitch, float(order))))
    if cmd.zoom is not None:
        out.append(SensorCommand(robot, camera, "FOV", (math.radians(cmd.zoom),)))
    if not out:
        raise Unsupported("CAMERA needs {Rotation p,y,r} or {Zoom deg}")
    return out


# --------------------------------------------------------------------------- SET

@dataclass(frozen=True)
class SetRequest:
    """A SET turned into core commands plus what the RES reply needs.

    ``kind``: ``generic`` (one device opcode), ``joint``, ``camera`` (FOV per
    camera), ``viewports`` (answered at once) or ``failed`` (answered at once
    with Status Failed, e.g. INS POSE without six numbers).
    """

    kind: str
    res_type: str
    names: tuple[str | None, ...] = ()
    commands: tuple[Command, ...] = ()
    extra: tuple[tuple[str, Any], ...] = ()
    viewports: tuple[tuple[str, bool], ...] = ()
    config: str = "SingleView"
    reason: str = ""  # of a ``failed`` request: sent as the RES line's {Reason}


def _device_name(spec: RobotSpec, set_type: str, name: str | None) -> str | None:
    if name is not None:
        return spec.model_device(name)
    for s in spec.sensors:
        if s.type.lower() == set_type.lower():
            return s.name
    for e in spec.effecters:
        if e.type.lower() == set_type.lower():
            return e.name
    return None


def _split_params(text: str | None) -> tuple[str, ...]:
    if text is None or text == "":
        return ()
    return tuple(text.split(","))


_JOINT_OPCODES = {"angle": (0, True), "0": (0, True), "velocity": (1, False), "1": (1, False),
                  "torque": (2, False), "2": (2, False)}


def set_request(cmd: g.Set, robot: str, spec: RobotSpec) -> SetRequest:
    """SET -> SetRequest (never raises for device problems: they become Status Failed)."""
    set_type = cmd.type
    if set_type == "Viewports":
        return _viewports(cmd, spec)
    if set_type == "Camera" and cmd.cameras:
        return SetRequest("camera", "Camera", tuple(c.name for c in cmd.cameras),
                          tuple(SensorCommand(robot, c.name, "FOV", (c.fov,)) for c in cmd.cameras))
    if set_type == "Joint":
        return _joint(cmd, robot, spec)
    name = _device_name(spec, set_type, cmd.name)
    if name is None:
        device = f"'{cmd.name}'" if cmd.name else f"of type {set_type}"
        return SetRequest("failed", set_type, (cmd.name,), reason=f"this robot has no device {device}")
    if cmd.opcode is None:
        return SetRequest("failed", set_type, (cmd.name,), reason="SET needs an Opcode")
    params: tuple[Any, ...] = _split_params(cmd.params)
    if set_type.upper() == "INS" and cmd.opcode.upper() == "POSE":
        try:
            values = [g.parse_float(v) for v in params]
        except g.ProtocolError:
            values = []
        if len(values) != 6:
            return SetRequest("failed", set_type, (name,), reason="POSE needs six numbers x,y,z,roll,pitch,yaw")
        # SAE location and roll,pitch,yaw -> core frame
        params = frames.flip_vector(values[:3]) + frames.flip_euler(values[3:])
    if set_type.upper() == "CAMERA" and cmd.opcode.upper() == "PANTILT":
        # SAE pan (+right) and tilt (+up) -> core; the RES reply converts back, so it
        # carries the request's signs
        params = _pan_tilt_to_core(params)
    return SetRequest("generic", set_type, (name,), (SensorCommand(robot, name, cmd.opcode, params),))


def _pan_tilt_to_core(params: tuple[Any, ...]) -> tuple[Any, ...]:
    try:
        pan, tilt = (g.parse_float(str(v)) for v in params[:2])
    except (g.ProtocolError, ValueError):
        return params  # the camera answers Status Failed with its own reason
    return (-pan, -tilt) + tuple(params[2:])


def _joint(cmd: g.Set, robot: str, spec: RobotSpec) -> SetRequest:
    # SET {Type Joint} {Name j} {Opcode o} {Params p1[,p2]}: p1 the value of the opcode, p2 the steer
    # angle of a steerable wheel (SAE, +right); a wheel that cannot steer ignores p2.
    mode = _JOINT_OPCODES.get((cmd.opcode or "").lower())
    params = tuple((cmd.params or "").replace(",", " ").split())  # "v" or "v,steer" (or space-separated)
    if cmd.name is None or mode is None or not params or len(params) > 2:
        return SetRequest("failed", "Joint", (cmd.name,),
                          reason="a joint SET needs Name, Opcode (Angle, Velocity or Torque) and Params "
                                 "(a value, and a steer angle for a steerable wheel)")
    try:
        value, *steer = (g.parse_float(p) for p in params)
    except g.ProtocolError as exc:
        return SetRequest("failed", "Joint", (cmd.name,), reason=str(exc))
    order, relative = mode
    joint = spec.model_joint(cmd.name)
    commands: list[Command] = [JointTargets(robot, {joint: value}, order=order, relative=relative)]
    if steer and spec.knuckle(joint) is not None:
        commands.append(JointTargets(robot, {joint: -steer[0]}, order=0, steer=True))
    return SetRequest("joint", "Joint", (cmd.name,), tuple(commands))


def _viewports(cmd: g.Set, spec: RobotSpec) -> SetRequest:
    cameras = {s.name for s in spec.sensors if is_camera(s.type)}
    config = cmd.config or ("QuadView" if len(cameras) > 1 else "SingleView")
    config = {"0": "SingleView", "1": "QuadView"}.get(config, config)
    ok = config.lower() in ("singleview", "quadview")
    ports = []
    for vp in cmd.viewports:
        if vp is None:
            continue
        if vp.lower() in ("disable", "disabled"):
            ports.append(("Disabled", True))
        elif vp in cameras:
            ports.append((vp, True))
        else:
            ports.append(("None", False))
    return SetRequest("viewports", "Viewports", viewports=tuple(ports), config=config,
                      extra=(("ok", ok),))


def _result_fields(result: Any) -> tuple[bool, tuple[tuple[str, Any], ...], str]:
    """(ok, extra fields, why it failed) of a command outcome: CommandResult, None (done) or an exception."""
    if isinstance(result, BaseException):
        return False, (), str(result) or type(result).__name__
    if result is None:
        return True, (), ""
    ok = bool(getattr(result, "ok", False))
    fields = tuple((str(k), _wire_value(v)) for k, v in getattr(result, "fields", ()))
    return ok, fields, str(getattr(result, "message", ""))


def _wire_value(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return 0.0
    return v


def set_reply(req: SetRequest, time: float, results: Sequence[Any]) -> str:
    """RES line of a SetRequest once its commands have run (``results`` in command order)."""
    if req.kind == "viewports":
        ok = bool(dict(req.extra).get("ok", True))
        return g.format_res_viewports(time, req.config, ok, list(req.viewports))
    if req.kind == "failed":
        return g.format_res(time, req.res_type, req.names[0] if req.names else None, False, reason=req.reason)
    if req.kind == "camera":
        cams: list[tuple[str, Any, bool, str]] = []
        for name, result in zip(req.names, results):
            if name is None:  # camera requests always name their cameras
                continue
            ok, fields, why = _result_fields(result)
            fov = dict(fields).get("FOV", 0.0)
            cams.append((name, fov, ok, why))
        return g.format_res_camera(time, cams)
    # the first failure, if any, speaks for the SET (a joint's value and its wheel's steer angle)
    ok, fields, why = _result_fields(next((r for r in results if isinstance(r, Exception)),
                                          results[0] if results else None))
    if req.res_type == "Camera":
        # camera pan/tilt targets go out in SAE (both angles change sign)
        fields = tuple((k, -v if k in ("Pan", "Tilt") and isinstance(v, (int, float)) else v)
                       for k, v in fields)
    return g.format_res(time, req.res_type, req.names[0] if req.names else None, ok, fields, reason=why)


# --------------------------------------------------------------------------- queries

def query_types(spec: RobotSpec) -> list[str]:
    """Types a GETGEO/GETCONF can name for this robot."""
    out = ["Robot"]
    if spec.joint_groups:
        out.append("MisPkg")
    if spec.effecters:
        out.append("Effecter")
    for s in spec.sensors:
        if s.type not in out:
            out.append(s.type)
    return out


__all__ = ["Unsupported", "SpawnRequest", "spawn_request", "drive_commands", "multidrive_commands",
           "mispkg_commands", "camera_commands", "SetRequest", "set_request", "set_reply", "query_types",
           "WHEEL_DRIVES"]
