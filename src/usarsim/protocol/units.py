"""Unreal units on the wire (``usarsim serve --units unreal``) for clients of the UU-era protocol.

The server works in SI; with Unreal units every line is converted at the socket:
lengths by the manual's 250 UU = 1 m, angles to integer rotator units (32768 UU = pi rad),
as the tutorial's clients send them (``INIT {Location 312,-600,-305}``,
``CAMERA {Rotation 1820,0,0}``). Which fields are lengths and which angles is listed
below; every other field (time, battery, speeds, ticks, ...) passes unchanged.
"""
from __future__ import annotations

import re
from typing import Callable

from usarsim.protocol.frames import UU_PER_METRE, UU_PER_RADIAN

UNITS = ("si", "unreal")

LENGTH_KEYS = frozenset({
    "Location", "Range", "Dimensions", "COG", "WheelRadius", "WheelSeparation", "WheelBase",
    "MaxRange", "MinRange", "Distance", "Diameter", "MaxSingleShotRange",
})
ANGLE_KEYS = frozenset({
    "Orientation", "Rotation", "FrontSteer", "RearSteer", "Steer", "Resolution", "FOV", "Fov",
    "ScanFov", "BeamAngle", "CameraDefFov", "CameraMinFov", "CameraMaxFov", "CameraFov", "Pan",
    "Tilt", "MaxFrontSteer", "MaxRearSteer", "HorizontalFOV", "VerticalFOV",
    "beamAngle", "EncoderResolution",  # UDK sonar CONF, USARSim 3.x odometry CONF (rad per tick)
})
# Pose x,y,theta (odometry): two lengths and an angle
MIXED_KEYS: dict[str, tuple[str, ...]] = {"Pose": ("length", "length", "angle")}

# a field name and its value; blank-separated numbers after it (4.5 1.9 1.8) belong to the value
_PAIR = re.compile(r"(?<=[{ ])([A-Za-z][A-Za-z0-9_]*) ([^\s{}]+(?: [-+.\d][^\s{}]*)*)")
_START_POSE = re.compile(r"([^\s{}]+) ([^\s{}]+) ([^\s{}]+)")


def _number_map(text: str, kinds: tuple[str, ...] | str, to_unreal: bool) -> str:
    parts = re.split(r"[ ,]+", text)
    out = []
    for i, part in enumerate(parts):
        kind = kinds if isinstance(kinds, str) else kinds[min(i, len(kinds) - 1)]
        try:
            value = float(part)
        except ValueError:
            return text  # not numbers (a name): leave it alone
        out.append(_convert(value, kind, to_unreal))
    return ",".join(out)


def _convert(value: float, kind: str, to_unreal: bool) -> str:
    if kind == "length":
        return f"{value * UU_PER_METRE:.2f}" if to_unreal else f"{value / UU_PER_METRE:.6f}"
    return str(int(round(value * UU_PER_RADIAN))) if to_unreal else f"{value / UU_PER_RADIAN:.6f}"


def _pairs(line: str, to_unreal: bool) -> str:
    def repl(match: re.Match[str]) -> str:
        key, value = match.group(1), match.group(2)
        if key in LENGTH_KEYS:
            return f"{key} {_number_map(value, 'length', to_unreal)}"
        if key in ANGLE_KEYS:
            return f"{key} {_number_map(value, 'angle', to_unreal)}"
        if key in MIXED_KEYS:
            return f"{key} {_number_map(value, MIXED_KEYS[key], to_unreal)}"
        return match.group(0)
    return _PAIR.sub(repl, line)


def _start_poses(line: str) -> str:
    # NFO {StartPoses n} {Tag x,y,z r,p,y Tag ...}: the tags are not field names
    head, sep, body = line.partition("} {")
    if not sep:
        return line
    return head + sep + _START_POSE.sub(
        lambda m: f"{m.group(1)} {_number_map(m.group(2), 'length', True)} {_number_map(m.group(3), 'angle', True)}",
        body)


def to_unreal(line: str) -> str:
    """An outgoing SI line in Unreal units."""
    if line.startswith("NFO {StartPoses"):
        return _start_poses(line)
    return _pairs(line, True)


def from_unreal(line: str) -> str:
    """An incoming Unreal-units line in SI (blank-separated vectors are left to the parser)."""
    return _pairs(line, False)


def converters(units: str) -> tuple[Callable[[str], str], Callable[[str], str]] | None:
    """(incoming, outgoing) converters for ``units``; None for SI (nothing to do)."""
    if units not in UNITS:
        raise ValueError(f"units must be one of {', '.join(UNITS)}, got {units!r}")
    return (from_unreal, to_unreal) if units == "unreal" else None


__all__ = ["UNITS", "LENGTH_KEYS", "ANGLE_KEYS", "to_unreal", "from_unreal", "converters"]
