"""Frame and unit conversions between the core (REP-103) and USARSim (SAE J670).

The core world frame is x = north, y = west, z = up; body frames are FLU.
USARSim's are x forward/north, y right/east, z down. The map between them is
D = diag(1, -1, -1), its own inverse, so every function here works both ways.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

Vec3 = tuple[float, float, float]
Quat = tuple[float, float, float, float]  # (x, y, z, w), PyBullet/ROS order

UU_PER_METRE = 250.0
UU_PER_RADIAN = 32768.0 / math.pi


def flip_vector(v: Sequence[float]) -> Vec3:
    """Apply D = diag(1,-1,-1): a position/velocity between REP-103 and SAE."""
    return (float(v[0]), -float(v[1]), -float(v[2]))


def flip_euler(rpy: Sequence[float]) -> Vec3:
    """Roll, pitch, yaw between REP-103 and SAE (pitch and yaw change sign)."""
    return (float(rpy[0]), -float(rpy[1]), -float(rpy[2]))


def flip_quaternion(q: Quat) -> Quat:
    """Quaternion (x, y, z, w) conjugated by D."""
    return (q[0], -q[1], -q[2], q[3])


def wrap_pi(angle: float) -> float:
    """Wrap an angle to (-pi, pi]."""
    a = math.fmod(angle + math.pi, 2.0 * math.pi)
    if a <= 0.0:
        a += 2.0 * math.pi
    return a - math.pi


def wrap_2pi(angle: float) -> float:
    """Wrap an angle to [0, 2*pi)."""
    a = math.fmod(angle, 2.0 * math.pi)
    if a < 0.0:
        a += 2.0 * math.pi
    return 0.0 if a >= 2.0 * math.pi else a


# Closed forms rather than transforms3d: these run several times per tick per robot and
# the library's generic axis handling costs ten times more. Same conventions and the same
# gimbal-lock branch as transforms3d's "sxyz" (the unit tests compare the two).
_GIMBAL_EPS = float(np.finfo(float).eps) * 4.0


def quaternion_from_euler(rpy: Sequence[float]) -> Quat:
    """(roll, pitch, yaw) -> quaternion (x, y, z, w), static-axis xyz (= intrinsic ZYX)."""
    hr, hp, hy = 0.5 * float(rpy[0]), 0.5 * float(rpy[1]), 0.5 * float(rpy[2])
    cr, sr = math.cos(hr), math.sin(hr)
    cp, sp = math.cos(hp), math.sin(hp)
    cy, sy = math.cos(hy), math.sin(hy)
    return (sr * cp * cy - cr * sp * sy,
            cr * sp * cy + sr * cp * sy,
            cr * cp * sy - sr * sp * cy,
            cr * cp * cy + sr * sp * sy)


def rotation_rows(q: Quat) -> tuple[Vec3, Vec3, Vec3]:
    """Rows of the 3x3 rotation matrix of quaternion (x, y, z, w), as plain floats."""
    x, y, z, w = (float(c) for c in q)
    n = w * w + x * x + y * y + z * z
    if n < _GIMBAL_EPS / 4.0:
        return (1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)
    s = 2.0 / n
    xs, ys, zs = x * s, y * s, z * s
    wx, wy, wz = w * xs, w * ys, w * zs
    xx, xy, xz = x * xs, x * ys, x * zs
    yy, yz, zz = y * ys, y * zs, z * zs
    return ((1.0 - (yy + zz), xy - wz, xz + wy),
            (xy + wz, 1.0 - (xx + zz), yz - wx),
            (xz - wy, yz + wx, 1.0 - (xx + yy)))


def euler_from_quaternion(q: Quat) -> Vec3:
    """Quaternion (x, y, z, w) -> (roll, pitch, yaw)."""
    m0, m1, m2 = rotation_rows(q)
    cy = math.sqrt(m0[0] * m0[0] + m1[0] * m1[0])
    if cy > _GIMBAL_EPS:
        return (math.atan2(m2[1], m2[2]), math.atan2(-m2[0], cy), math.atan2(m1[0], m0[0]))
    return (math.atan2(-m1[2], m1[1]), math.atan2(-m2[0], cy), 0.0)


def rotation_matrix(q: Quat) -> np.ndarray:
    """3x3 rotation matrix of quaternion (x, y, z, w)."""
    return np.array(rotation_rows(q))


def quaternion_from_matrix(rot: np.ndarray) -> Quat:
    """3x3 rotation matrix -> quaternion (x, y, z, w)."""
    import transforms3d

    w, x, y, z = transforms3d.quaternions.mat2quat(rot)
    return (float(x), float(y), float(z), float(w))


def metres_from_uu(value: float) -> float:
    """Unreal units to metres (250 UU = 1 m)."""
    return value / UU_PER_METRE


def radians_from_uu(value: float) -> float:
    """Unreal rotator units to radians (32768 UU = pi)."""
    return value / UU_PER_RADIAN
