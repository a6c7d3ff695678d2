"""Rotations: quaternions, Euler angles, matrices and the angle-wrap convention (pure).

The one place for rotation math, used by the core, the ROS bridge and the protocol.
Conventions: quaternions are (x, y, z, w) as PyBullet and ROS order them; Euler angles are
(roll, pitch, yaw) about static x, y, z (= intrinsic ZYX, REP-103); angles wrap to (-pi, pi]
(``wrap_pi``) everywhere in the core, so a heading never jumps between -pi and pi
representations. Frame changes to USARSim's SAE J670 belong to ``usarsim.protocol.frames``.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

Vec3 = tuple[float, float, float]
Quat = tuple[float, float, float, float]  # (x, y, z, w), PyBullet/ROS order

def vec3(values: Sequence[float] | np.ndarray) -> Vec3:
    """The first three values as a 3-vector of plain floats (numpy arrays and lists alike)."""
    return (float(values[0]), float(values[1]), float(values[2]))


def quat(values: Sequence[float] | np.ndarray) -> Quat:
    """The first four values as a quaternion (x, y, z, w) of plain floats."""
    return (float(values[0]), float(values[1]), float(values[2]), float(values[3]))


def wrap_pi(angle: float) -> float:
    """Wrap an angle to (-pi, pi]."""
    a = math.fmod(angle + math.pi, 2.0 * math.pi)
    if a <= 0.0:
        a += 2.0 * math.pi
    return a - math.pi


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
    return euler_from_matrix(rotation_rows(q))


def euler_from_matrix(rows: Sequence[Sequence[float]] | np.ndarray) -> Vec3:
    """Rotation matrix (rows) -> (roll, pitch, yaw), z-y-x; at gimbal lock the yaw is 0."""
    m0, m1, m2 = ([float(v) for v in row] for row in rows)
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


def yaw_quaternion(yaw: float) -> Quat:
    """Quaternion (x, y, z, w) of a rotation by ``yaw`` about z."""
    return (0.0, 0.0, math.sin(yaw / 2.0), math.cos(yaw / 2.0))


def axis_angle_quaternion(axis: Sequence[float], angle: float) -> Quat:
    """Quaternion (x, y, z, w) of a rotation by ``angle`` about the unit vector ``axis``."""
    s = math.sin(angle / 2.0)
    return (float(axis[0]) * s, float(axis[1]) * s, float(axis[2]) * s, math.cos(angle / 2.0))


def quaternion_multiply(a: Quat, b: Quat) -> Quat:
    """Hamilton product a * b of quaternions (x, y, z, w): rotate by b, then by a."""
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return (aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz)


def rotate_inverse(q: Sequence[float], v: Sequence[float]) -> Vec3:
    """R(q)^T v in plain Python (numpy's per-call overhead dominates for one 3-vector)."""
    x, y, z, w = (float(c) for c in q)
    vx, vy, vz = (float(c) for c in v)
    # rotate by the conjugate quaternion: t = 2 u x v, v' = v + w t + u x t, with u = -(x, y, z)
    ux, uy, uz = -x, -y, -z
    tx, ty, tz = 2.0 * (uy * vz - uz * vy), 2.0 * (uz * vx - ux * vz), 2.0 * (ux * vy - uy * vx)
    return (vx + w * tx + (uy * tz - uz * ty), vy + w * ty + (uz * tx - ux * tz), vz + w * tz + (ux * ty - uy * tx))


def pose_matrix(xyz: Sequence[float], q: Quat) -> np.ndarray:
    """4x4 homogeneous transform of a position and a quaternion (x, y, z, w)."""
    m = np.eye(4)
    m[:3, :3] = rotation_matrix(q)
    m[:3, 3] = list(xyz)
    return m
