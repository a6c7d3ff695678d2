"""Typed commands, queued by any front door and applied at the start of a tick.

Values are SI and REP-103 (positive yaw rate = turn left, positive steer =
left). The protocol layer converts USARSim's signs before building these.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Any


class CommandError(ValueError):
    """A command cannot be applied (unknown robot, joint, sensor, bad value)."""


@dataclass(frozen=True)
class Command:
    """Base: every command addresses one robot by name."""

    robot: str

    def __post_init__(self) -> None:
        for f in fields(self):
            _check_finite(f.name, getattr(self, f.name))


def _check_finite(name: str, value: Any) -> None:
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, float) and not math.isfinite(value):
        raise CommandError(f"{name} must be a finite number, got {value}")
    if isinstance(value, dict):
        for k, v in value.items():
            _check_finite(f"{name}[{k}]", v)
    elif isinstance(value, (tuple, list)):
        for i, v in enumerate(value):
            _check_finite(f"{name}[{i}]", v)


@dataclass(frozen=True)
class WheelDrive(Command):
    """Skid/differential drive: spin speed of all left and right wheels (rad/s).

    With ``normalized`` the values are -100..100 of the robot's max spin speed.
    """

    left: float
    right: float
    normalized: bool = False


@dataclass(frozen=True)
class AckermannDrive(Command):
    """Car-like drive: powered-wheel spin (rad/s) and steer angles (rad, +left)."""

    speed: float
    front_steer: float = 0.0
    rear_steer: float = 0.0
    normalized: bool = False


@dataclass(frozen=True)
class AerialDrive(Command):
    """Rotary-wing velocity command, body frame FLU: vx forward, vy left, vz up, yaw rate +left."""

    linear: float = 0.0
    lateral: float = 0.0
    altitude: float = 0.0
    yaw_rate: float = 0.0
    normalized: bool = False


@dataclass(frozen=True)
class NauticDrive(Command):
    """Submarine: propeller spin (rad/s, + forward), rudder (rad, + turns left), stern plane (rad, + rises).

    None keeps the current value (a DRIVE may set only some of the three)."""

    propeller: float | None = None
    rudder: float | None = None
    stern_plane: float | None = None
    normalized: bool = False


@dataclass(frozen=True)
class BlimpDrive(Command):
    """Blimp: thrust-bar angle (rad, + tilts the thrust up), thrust speed (m/s) along it, yaw rate (rad/s, + left).

    None keeps the current value."""

    xz_angle: float | None = None
    thrust: float | None = None
    yaw_rate: float | None = None
    normalized: bool = False


@dataclass(frozen=True)
class OmniDrive(Command):
    """Omni drive: per wheel number, spin (rad/s) and steer angle (rad, + left); None keeps the value.

    With ``normalized`` both are -100..100 of the robot's max spin speed and max steer angle.
    """

    wheels: tuple[tuple[int, float | None, float | None], ...] = ()
    normalized: bool = False


@dataclass(frozen=True)
class SetLight(Command):
    """Headlight on/off."""

    on: bool


TRACE_COLORS = ("Red", "Yellow", "Green", "Cyan", "White", "Blue", "Purple")  # USARSim's, index = colour number


@dataclass(frozen=True)
class SetTrace(Command):
    """Path trace (TRACE): on/off, seconds between points, colour; None keeps the current value."""

    on: bool | None = None
    interval: float | None = None
    color: str | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.interval is not None and self.interval < 0:
            raise CommandError(f"trace interval must be >= 0 s, got {self.interval}")
        if self.color is not None and self.color not in TRACE_COLORS:
            raise CommandError(f"trace colour must be one of {', '.join(TRACE_COLORS)}, got {self.color!r}")


@dataclass(frozen=True)
class Flip(Command):
    """Put a rolled-over robot back on its wheels (keeps x, y and yaw)."""


@dataclass(frozen=True)
class JointTargets(Command):
    """Targets for named joints. order 0: position (rad/m), 1: velocity, 2: effort.

    ``relative`` adds the value to the current position (SET Joint Angle); ``steer`` turns the
    joint that steers each named wheel (its knuckle) to the value instead (DRIVE {Name} {Steer}).
    """

    targets: dict[str, float] = field(default_factory=dict)
    order: int = 0
    relative: bool = False
    steer: bool = False


@dataclass(frozen=True)
class ReachPose(Command):
    """Move a joint group so its end link reaches a pose (base_link frame, REP-103; MISPKG terminal pose).

    ``rpy`` None leaves the orientation free. Fails without moving when the pose is out of reach."""

    package: str = ""
    position: tuple[float, float, float] = (0.0, 0.0, 0.0)
    rpy: tuple[float, float, float] | None = None


@dataclass(frozen=True)
class SensorCommand(Command):
    """An opcode for a sensor or effecter (RESET, SCAN, POSE, Read, Write, Open, FOV ...)."""

    device: str = ""
    opcode: str = ""
    params: tuple[Any, ...] = ()
