"""Measuring a skid-steer drive: turn rate by heading and the effective track width.

``drives.SkidSteerDrive`` turns by ``DriveSpec.track_width``; the catalogue's
``effective_track_width`` values come from ``bench/turning.py``, which spins each robot
through a full turn in place with this module, and the tests check the drive against it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pybullet as p

from usarsim import rotations
from usarsim.sim.catalogue import load_robot
from usarsim.sim.commands import WheelDrive
from usarsim.sim.simulator import Simulator

# Wheel surface speed per side of the calibration turn (m/s): a slow, deliberate turn (P2AT 0.35 rad/s).
TURN_SURFACE_SPEED = 0.1


@dataclass(frozen=True)
class TurnProfile:
    """One full turn in place: yaw rate per heading sector and over the whole turn."""

    spin: float  # wheel spin commanded per side, rad/s (left -spin, right +spin)
    sector_rates: list[float]  # rad/s in each of the equal heading sectors, from the first crossed edge
    mean_rate: float  # a full turn's angle over its duration, rad/s
    wheel_track_width: float  # r * (right - left wheel angle) / yaw over the turn: what odometry needs

    @property
    def spread(self) -> float:
        """Fastest over slowest sector."""
        return max(self.sector_rates) / min(self.sector_rates)



def turn_in_place(class_name: str, sectors: int = 16, surface_speed: float = TURN_SURFACE_SPEED) -> TurnProfile:
    """Spin a robot through a full turn on the flat ``empty`` world and time each heading sector.

    A sector's rate is its angle over the time the robot took to cross it (interpolated edge
    crossings), so the scrubbing chatter of the instantaneous rate averages out. The wheel
    track width compares the odometry wheels' angles (first wheel of each side) with the yaw
    over the same whole turn.
    """
    drive = load_robot(class_name).drive
    spin = min(surface_speed / drive.wheel_radius, drive.max_wheel_speed)
    width = 2.0 * math.pi / sectors
    with Simulator("empty", seed=1) as sim:
        robot = sim.spawn(class_name, "r", position=(0.0, 0.0, 0.0))
        odometry_wheels = [robot.joint_index(drive.left_wheels[0]), robot.joint_index(drive.right_wheels[0])]
        sim.run_for(0.5)
        sim.submit(WheelDrive("r", -spin, spin))
        sim.run_for(1.0)  # spin up
        yaw = rotations.euler_from_quaternion(sim.ground_truth("r").orientation)[2]
        first_edge = (math.floor(yaw / width) + 1) * width
        times, angles, wheels = [sim.time], [yaw], [_wheel_angles(sim, robot.body_id, odometry_wheels)]
        while angles[-1] < first_edge + 2.0 * math.pi and sim.time < 300.0:
            sim.step(2)
            now = rotations.euler_from_quaternion(sim.ground_truth("r").orientation)[2]
            angles.append(angles[-1] + math.remainder(now - angles[-1], 2.0 * math.pi))
            times.append(sim.time)
            wheels.append(_wheel_angles(sim, robot.body_id, odometry_wheels))
    if angles[-1] < first_edge + 2.0 * math.pi:
        raise RuntimeError(f"{class_name} did not complete a turn in place")
    edges = first_edge + width * np.arange(sectors + 1)
    # the unwrapped yaw grows while turning left; a chattering sample must not make it step back
    crossings = np.interp(edges, np.maximum.accumulate(angles), times)
    rates = (width / np.diff(crossings)).tolist()
    spread = np.array(wheels)[:, 1] - np.array(wheels)[:, 0]
    wheel_turn = np.interp(crossings[[0, -1]], times, spread)
    return TurnProfile(spin=spin, sector_rates=rates, mean_rate=2.0 * math.pi / float(crossings[-1] - crossings[0]),
                       wheel_track_width=drive.wheel_radius * float(wheel_turn[1] - wheel_turn[0]) / (2.0 * math.pi))


def _wheel_angles(sim: Simulator, body: int, joints: list[int]) -> tuple[float, float]:
    left, right = p.getJointStates(body, joints, physicsClientId=sim.client)
    return left[0], right[0]


__all__ = ["TURN_SURFACE_SPEED", "TurnProfile", "turn_in_place"]
