"""Frame and unit conversions between the core (REP-103) and USARSim (SAE J670).

The core world frame is x = north, y = west, z = up; body frames are FLU.
USARSim's are x forward/north, y right/east, z down. The map between them is
D = diag(1, -1, -1), its own inverse, so every function here works both ways.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import transforms3d

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


def quaternion_from_euler(rpy: Sequence[float]) -> Quat:
    """(roll, pitch, yaw) -> quaternion (x, y, z, w), static-axis xyz (= intrinsic ZYX)."""
    w, x, y, z = transforms3d.euler.euler2quat(rpy[0], rpy[1], rpy[2], "sxyz")
    return (float(x), float(y), float(z), float(w))


def euler_from_quaternion(q: Quat) -> Vec3:
    """Quaternion (x, y, z, w) -> (roll, pitch, yaw)."""
    r, p, y = transforms3d.euler.quat2euler((q[3], q[0], q[1], q[2]), "sxyz")
    return (float(r), float(p), float(y))


def rotation_matrix(q: Quat) -> np.ndarray:
    """3x3 rotation matrix of quaternion (x, y, z, w)."""
    return transforms3d.quaternions.quat2mat((q[3], q[0], q[1], q[2]))


def metres_from_uu(value: float) -> float:
    """Unreal units to metres (250 UU = 1 m)."""
    return value / UU_PER_METRE


def radians_from_uu(value: float) -> float:
    """Unreal rotator units to radians (32768 UU = pi)."""
    return value / UU_PER_RADIAN
