"""ROS command messages -> core commands (pure: validated, clamped, no node).

cmd_vel becomes the command the robot's drive accepts: wheel speeds for
skid/differential/tracked robots (robot geometry, scaled to the wheel speed
limit keeping the turn ratio), speed + bicycle-model steer for Ackermann
vehicles, body velocities for aerial robots. Joint-group commands become
``JointTargets`` keyed ``<group>:<link number>`` or by joint name.
Every function raises ``ValueError`` with a message for a malformed command.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Iterable, Sequence

from usarsim.sim.body import BodySpec
from usarsim.sim.catalogue import DriveSpec, JointGroupSpec
from usarsim.sim.commands import (AckermannDrive, AerialDrive, BlimpDrive, Command, JointTargets, NauticDrive,
                                  OmniDrive, WheelDrive)
from usarsim.sim.drives import blimp, clamp, nautic, twist_to_wheel_speeds
from usarsim.sim.drives.omni import twist_to_wheels
from usarsim.sim.drives.vehicle import twist_to_ackermann, wheel_positions

if TYPE_CHECKING:
    from usarsim.sim.catalogue import RobotSpec


def _finite(values: Iterable[float], what: str) -> list[float]:
    out = [float(v) for v in values]
    if not all(math.isfinite(v) for v in out):
        raise ValueError(f"{what} contains NaN or infinite values: {out}")
    return out


def twist_to_command(robot: str, linear: Sequence[float], angular: Sequence[float], spec: DriveSpec,
                     accepts: Sequence[type[Command]], body: BodySpec | None = None) -> Command:
    """geometry_msgs/Twist (linear xyz m/s, angular xyz rad/s, body FLU) -> a drive command.

    ``body`` gives the omni drive its wheel positions."""
    vx, vy, vz = _finite(linear, "linear velocity")
    _, _, wz = _finite(angular, "angular velocity")
    if WheelDrive in accepts:
        if spec.wheel_radius <= 0 or spec.wheel_separation <= 0:
            raise ValueError("robot has no wheel geometry for cmd_vel")
        left, right = twist_to_wheel_speeds(vx, wz, spec)
        return WheelDrive(robot, left, right)
    if AckermannDrive in accepts:
        if spec.wheel_radius <= 0:
            raise ValueError("robot has no wheel radius for cmd_vel")
        return AckermannDrive(robot, *twist_to_ackermann(vx, wz, spec))
    if AerialDrive in accepts:
        return AerialDrive(robot, linear=_limit(vx, spec.max_linear_speed), lateral=_limit(vy, spec.max_lateral_speed),
                           altitude=_limit(vz, spec.max_altitude_speed), yaw_rate=_limit(wz, spec.max_yaw_rate))
    if NauticDrive in accepts:
        return twist_to_nautic(robot, vx, vz, wz, spec)
    if BlimpDrive in accepts:
        return twist_to_blimp(robot, vx, vz, wz, spec)
    if OmniDrive in accepts and body is not None:
        positions = wheel_positions(body)
        xy = [positions[j][:2] for j in spec.steered_wheels]
        return OmniDrive(robot, tuple(twist_to_wheels(vx, vy, wz, xy, spec)))
    raise ValueError("this robot cannot be driven with cmd_vel")


def twist_to_nautic(robot: str, vx: float, vz: float, wz: float, spec: DriveSpec) -> NauticDrive:
    """Submarine: linear.x -> propeller, angular.z -> rudder, linear.z -> stern plane (drives.nautic.twist_to_nautic)."""
    return NauticDrive(robot, *nautic.twist_to_nautic(vx, vz, wz, spec))


def twist_to_blimp(robot: str, vx: float, vz: float, wz: float, spec: DriveSpec) -> BlimpDrive:
    """Blimp: thrust bars along (linear.x, linear.z), angular.z -> yaw rate (drives.blimp.twist_to_blimp)."""
    return BlimpDrive(robot, *blimp.twist_to_blimp(vx, vz, wz, spec))


def _limit(value: float, limit: float) -> float:
    return clamp(value, limit) if limit > 0 else value


def group_command(robot: str, group: JointGroupSpec, values: Sequence[float]) -> JointTargets:
    """std_msgs/Float64MultiArray on ``<group>/command``: one position per link, in catalogue order."""
    data = _finite(values, f"{group.name} command")
    if len(data) != len(group.links):
        raise ValueError(f"{group.name} has {len(group.links)} joints "
                         f"({', '.join(link.joint for link in group.links)}), got {len(data)} values")
    return JointTargets(robot, {f"{group.name}:{i}": v for i, v in enumerate(data, start=1)})


def trajectory_command(robot: str, groups: Sequence[JointGroupSpec], joint_names: Sequence[str],
                       positions: Sequence[float], velocities: Sequence[float]) -> JointTargets:
    """trajectory_msgs/JointTrajectory: the final point's positions (or, without them, velocities)."""
    known = {link.joint for g in groups for link in g.links}
    unknown = [n for n in joint_names if n not in known]
    if unknown:
        raise ValueError(f"unknown joint(s) {', '.join(unknown)} (controllable: {', '.join(sorted(known)) or 'none'})")
    if positions:
        values, order = positions, 0
    elif velocities:
        values, order = velocities, 1
    else:
        raise ValueError("trajectory point has neither positions nor velocities")
    data = _finite(values, "trajectory point")
    if len(data) != len(joint_names):
        raise ValueError(f"{len(joint_names)} joint names but {len(data)} values")
    return JointTargets(robot, dict(zip(joint_names, data)), order=order)


def joint_state_command(robot: str, spec: "RobotSpec", names: Sequence[str], positions: Sequence[float],
                        velocities: Sequence[float]) -> list[Command]:
    """sensor_msgs/JointState on ``joint_commands`` (topic_based_ros2_control): joint-group positions
    (or velocities) become ``JointTargets``; wheel velocities become one ``WheelDrive`` (mean per side)."""
    drive = spec.drive
    left, right = set(drive.left_wheels), set(drive.right_wheels)
    if len(positions) not in (0, len(names)) or len(velocities) not in (0, len(names)):
        raise ValueError(f"{len(names)} joint names but {len(positions)} positions and {len(velocities)} velocities")
    wheel_speeds: dict[str, list[float]] = {"left": [], "right": []}
    group_names, group_pos, group_vel = [], [], []
    for i, name in enumerate(names):
        side = "left" if name in left else "right" if name in right else None
        if side is not None:
            if not velocities:
                raise ValueError(f"wheel {name} takes a velocity command")
            wheel_speeds[side].append(_finite([velocities[i]], name)[0])
            continue
        group_names.append(name)
        if positions:
            group_pos.append(positions[i])
        if velocities:
            group_vel.append(velocities[i])
    out: list[Command] = []
    if group_names:
        out.append(trajectory_command(robot, spec.joint_groups, group_names, group_pos, [] if group_pos else group_vel))
    if wheel_speeds["left"] or wheel_speeds["right"]:
        mean = {k: sum(v) / len(v) if v else 0.0 for k, v in wheel_speeds.items()}
        out.append(WheelDrive(robot, mean["left"], mean["right"]))
    return out


__all__ = ["group_command", "joint_state_command", "trajectory_command", "twist_to_blimp", "twist_to_command",
           "twist_to_nautic"]
