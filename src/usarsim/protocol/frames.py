"""USARSim's frames and units at the protocol's edge: SAE J670 and Unreal units (pure).

The core world frame is x = north, y = west, z = up; body frames are FLU (REP-103).
USARSim's are x forward/north, y right/east, z down. The map between them is
D = diag(1, -1, -1), its own inverse, so every flip here works both ways. Angles on
the wire stay inside their printed range (decision D10: (-pi, pi], the INS [0, 2pi)).
"""
from __future__ import annotations

import math
from typing import Callable, Sequence

from usarsim.rotations import Quat, Vec3, wrap_pi

UU_PER_METRE = 250.0
UU_PER_RADIAN = 32768.0 / math.pi
WIRE_DIGITS = 4  # the grammar's FLOAT_DIGITS: what a wrapped angle must survive


def flip_vector(v: Sequence[float]) -> Vec3:
    """Apply D = diag(1,-1,-1): a position/velocity between REP-103 and SAE."""
    return (float(v[0]), -float(v[1]), -float(v[2]))


def flip_euler(rpy: Sequence[float]) -> Vec3:
    """Roll, pitch, yaw between REP-103 and SAE (pitch and yaw change sign)."""
    return (float(rpy[0]), -float(rpy[1]), -float(rpy[2]))


def flip_quaternion(q: Quat) -> Quat:
    """Quaternion (x, y, z, w) conjugated by D."""
    return (q[0], -q[1], -q[2], q[3])


def wrap_2pi(angle: float) -> float:
    """Wrap an angle to [0, 2*pi) (the INS's wire range)."""
    a = math.fmod(angle, 2.0 * math.pi)
    if a < 0.0:
        a += 2.0 * math.pi
    return 0.0 if a >= 2.0 * math.pi else a


def wrap_pi_wire(angle: float) -> float:
    """Wrap to (-pi, pi] so that the 4-decimal text stays inside too (-3.14159 would print -3.1416)."""
    a = wrap_pi(angle)
    return math.pi if round(a, WIRE_DIGITS) <= -round(math.pi, WIRE_DIGITS) else a


def wrap_2pi_wire(angle: float) -> float:
    """Wrap to [0, 2pi) so that the 4-decimal text stays inside too (6.28318 would print 6.2832)."""
    a = wrap_2pi(angle)
    return 0.0 if round(a, WIRE_DIGITS) >= round(2.0 * math.pi, WIRE_DIGITS) else a


def to_sae_vector(v: Sequence[float]) -> Vec3:
    """Core (REP-103) vector -> wire (SAE)."""
    return flip_vector(v)


def to_sae_euler(rpy: Sequence[float], wrap: Callable[[float], float] = wrap_pi_wire) -> Vec3:
    """Core roll, pitch, yaw -> wire angles, each wrapped (decision D10: (-pi, pi], INS [0, 2pi))."""
    r, p, y = flip_euler(rpy)
    return (wrap(r), wrap(p), wrap(y))


def metres_from_uu(value: float) -> float:
    """Unreal units to metres (250 UU = 1 m)."""
    return value / UU_PER_METRE


def radians_from_uu(value: float) -> float:
    """Unreal rotator units to radians (32768 UU = pi)."""
    return value / UU_PER_RADIAN
