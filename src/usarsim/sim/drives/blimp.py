"""Blimp drive (``drive.type: blimp``): the Passarola's vectored thrust and tail propeller.

- Buoyancy: the envelope is trimmed neutral (as a blimp is ballasted), so a lift equal to
  the robot's weight acts at the centre of the envelope's volume; the gondola hangs below,
  which keeps the blimp level like a pendulum.
- Aerodynamic drag: the fluid model of ``usarsim.sim.fluid`` in air (the world's ``air_density``,
  1.225 kg/m^3 by default) on every shape of the body.
- Thrust: the two side propellers push along the thrust bars, tilted ``XZAngle`` up from the
  body x axis. ``ThrustPropeller`` is the speed (m/s) they drive the blimp at along that
  direction: the force is the drag at that speed plus a speed loop (mass / 1 s).
- Tail propeller: a yaw torque holding the commanded yaw rate (drag at that rate plus a
  rate loop on the body's yaw inertia as PyBullet has it).
With an empty battery the propellers stop; the blimp stays afloat and drifts to rest.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pybullet as p

from usarsim.sim.commands import BlimpDrive
from usarsim.sim.drives.base import Drive, clamp, limited
from usarsim.sim.drives.registry import DRIVES
from usarsim.sim.fluid import FluidBody, rigid_drag

if TYPE_CHECKING:
    from usarsim.sim.catalogue import DriveSpec
    from usarsim.sim.robot import Robot

SPEED_TIME = 1.0  # s, thrust speed loop
YAW_TIME = 0.5  # s, tail-propeller rate loop


def thrust_direction(rotation: np.ndarray, xz_angle: float) -> np.ndarray:
    """World direction of the thrust bars: body x tilted up by ``xz_angle`` about body y."""
    return math.cos(xz_angle) * rotation[:, 0] + math.sin(xz_angle) * rotation[:, 2]


def twist_to_blimp(linear: float, climb: float, angular: float, spec: DriveSpec) -> tuple[float, float, float]:
    """(forward v m/s, climb vz m/s, yaw rate omega rad/s +left) -> (thrust-bar angle rad, thrust m/s, yaw
    rate rad/s): the bars point along (v, vz) (flipped to push backwards when v < 0) and the thrust is
    that velocity's length; angle, thrust and yaw rate clamped to the limits the catalogue gives."""
    sign = 1.0 if linear >= 0 else -1.0
    angle = clamp(math.atan2(sign * climb, sign * linear), spec.max_xz_angle)
    thrust = sign * math.hypot(linear, climb)
    if spec.max_linear_speed > 0:
        thrust = clamp(thrust, spec.max_linear_speed)
    yaw_rate = clamp(angular, spec.max_yaw_rate) if spec.max_yaw_rate > 0 else angular
    return angle, thrust, yaw_rate


@DRIVES.register("blimp")
class BlimpFlightDrive(Drive):
    """Neutral buoyancy, air drag, vectored thrust and a yaw propeller."""

    accepts = (BlimpDrive,)

    def __init__(self, robot: "Robot") -> None:
        super().__init__(robot)
        client, body = robot.client, robot.body_id
        self.fluid = FluidBody(robot)
        # Lift acts straight above the centre of mass (the ballast is trimmed so), at the envelope's height.
        envelope = max(self.fluid.elements, key=lambda e: e.volume)
        env_position, env_rotation = robot.link_pose(envelope.link)
        base = robot.base
        centre = env_position + env_rotation @ np.array(envelope.offset)
        self.lift_height = float(base.rotation[:, 2] @ (centre - base.position))
        # base (merged with the envelope and every fixed link, as the robot is loaded) about its z axis
        self.yaw_inertia = float(p.getDynamicsInfo(body, -1, physicsClientId=client)[2][2])
        self.command = [0.0, 0.0, 0.0]  # xz angle rad, thrust m/s, yaw rate rad/s (+left)
        self.thrust = 0.0

    def take(self, cmd: BlimpDrive) -> None:
        s = self.spec
        limits = (s.max_xz_angle, s.max_linear_speed, s.max_yaw_rate)
        self.command = limited((cmd.xz_angle, cmd.thrust, cmd.yaw_rate), limits, cmd.normalized, self.command)

    def stop(self) -> None:
        self.command[1] = self.command[2] = 0.0

    def update(self, dt: float) -> None:
        robot = self.robot
        gravity = robot.env.gravity
        density = robot.env.world.spec.air_density
        # air drag on every shape; no air buoyancy (gravity 0 for it): the trim below stands for the lifting gas
        self.fluid.apply(density, 0.0, None, np.zeros(3))
        client, body = robot.client, robot.body_id
        base = robot.base
        lift_at = base.position + self.lift_height * base.rotation[:, 2]
        p.applyExternalForce(body, -1, [0.0, 0.0, -self.mass * gravity], lift_at.tolist(), p.WORLD_FRAME,
                             physicsClientId=client)
        if robot.battery_left() <= 0.0:
            self.thrust = 0.0
            return
        angle, speed, yaw_rate = self.command
        direction = thrust_direction(base.rotation, angle)
        up = base.rotation[:, 2]
        hold_force, hold_torque = rigid_drag(self.fluid.elements, base.rotation, speed * direction, yaw_rate * up,
                                             density)
        along = float(direction @ base.linear_velocity)
        self.thrust = float(-hold_force @ direction) + self.mass * (speed - along) / SPEED_TIME
        force = self.thrust * direction
        p.applyExternalForce(body, -1, force.tolist(), base.position.tolist(), p.WORLD_FRAME, physicsClientId=client)
        rate = float(up @ base.angular_velocity)
        torque = (float(-hold_torque @ up) + self.yaw_inertia * (yaw_rate - rate) / YAW_TIME) * up
        p.applyExternalTorque(body, -1, torque.tolist(), p.WORLD_FRAME, physicsClientId=client)

    def power(self) -> float:
        return abs(self.thrust) * 2.0


__all__ = ["BlimpFlightDrive", "thrust_direction", "twist_to_blimp"]
