"""Underwater drive (``drive.type: nautic``): propeller, rudder and stern plane of the Submarine.

Buoyancy and drag come from the world's water (``usarsim.sim.fluid``); this drive adds
what the boat itself does:

- Propeller: the ideal advance speed through the water is ``pitch * spin / 2 pi`` (slip ignored;
  the pitch is metres per revolution, so full spin, 6.28 rad/s, gives 0.305 m/s). The speed is the
  boat's through the water (a current carries it along). A reference speed follows the command with
  a first-order lag of ``SPEED_TIME``; thrust = the hull's drag at the reference speed, plus mass times
  the reference's acceleration, plus a PI loop on what is left, so the boat reaches the advance speed
  without overshoot.
- Rudder and stern plane: thin-foil lift 1/2 rho A v^2 * 2 pi * angle on each fin, times
  ``fin_lever`` (their distance behind the centre), as a yaw / pitch moment (the fins are
  revolute links turned to the command at their links' ``velocity`` with their ``effort``;
  their direct force is left out, see update()).
- The propeller shaft runs through the centre of the hull's drag (area-weighted height of the
  shapes seen from ahead), so cruising does not pitch the boat.
- Ballast: a trim force makes the boat exactly neutral when submerged (a real boat trims
  its tanks); its keel sits below the centre of buoyancy, so it floats level.
With an empty battery the propeller stops (no thrust, no speed loop); trim and fins still act.
Out of the water nothing but the fins' joints moves.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pybullet as p

from usarsim.sim.commands import NauticDrive
from usarsim.sim.drives.base import Drive, bicycle_steer, clamp, limited
from usarsim.sim.drives.registry import DRIVES
from usarsim.sim.fluid import LINEAR_SPEED, element_forces, robot_elements, total_volume

if TYPE_CHECKING:
    from usarsim.sim.body import LinkSpec
    from usarsim.sim.catalogue import DriveSpec
    from usarsim.sim.robot import Robot

SPEED_TIME = 2.0  # s: time constant of the propeller's reference speed and of its PI loop


def advance_speed(spin: float, pitch: float) -> float:
    """Ideal speed through the water (m/s) of a propeller turning at ``spin`` rad/s: ``pitch`` is the
    distance it advances in one revolution (a screw's pitch), so speed = pitch * spin / 2 pi."""
    return pitch * spin / (2.0 * math.pi)


def propeller_spin(speed: float, pitch: float) -> float:
    """Propeller spin (rad/s) whose ideal advance speed is ``speed`` m/s: the inverse of advance_speed."""
    return 2.0 * math.pi * speed / pitch


def twist_to_nautic(linear: float, climb: float, angular: float, spec: DriveSpec) -> tuple[float, float, float]:
    """(forward v m/s, climb vz m/s, yaw rate omega rad/s +left) -> (propeller rad/s, rudder rad +left,
    stern plane rad +rise): the propeller spun for the advance speed v, the rudder as the bicycle model's
    steer with the fin lever as wheelbase, the stern plane at the climb angle atan(vz / v); each clamped."""
    if spec.propeller_pitch <= 0:
        raise ValueError("the robot has no propeller pitch (drive.propeller_pitch) to turn a speed into a spin")
    propeller = clamp(propeller_spin(linear, spec.propeller_pitch), spec.max_propeller)
    rudder = bicycle_steer(linear, angular, spec.fin_lever, spec.max_rudder)
    stern = clamp(math.atan(climb / linear), spec.max_stern_plane) if abs(linear) > 1e-6 else 0.0
    return propeller, rudder, stern


def fin_lift(density: float, area: float, speed: float, angle: float) -> float:
    """Thin-foil lift (N) of a fin at ``angle`` rad in a flow of ``speed`` m/s (sign follows speed*angle)."""
    return 0.5 * density * area * speed * abs(speed) * 2.0 * math.pi * angle


@DRIVES.register("nautic")
class SubmarineDrive(Drive):
    """Propeller thrust, fin lift and ballast trim, applied as forces on the hull."""

    accepts = (NauticDrive,)

    def __init__(self, robot: "Robot") -> None:
        super().__init__(robot)
        elements = robot_elements(robot)
        self.volume = total_volume(elements)
        # Area the hull shows to the flow along its own x axis (the fins' links have no shape).
        # Drag of the hull moving ahead (the fluid model itself, no buoyancy): its size and the height
        # of its line of action above the centre of mass, where the propeller shaft is put so that
        # cruising does not pitch the boat (a trimmed boat's planes would cancel that moment).
        base = robot.base
        force, moment = np.zeros(3), np.zeros(3)
        for element in elements:
            _, position, rotation, _, _, _ = robot.link_motion(element.link)
            ahead = base.rotation[:, 0]
            result = element_forces(element, position, rotation, ahead, np.zeros(3), 1.0, 0.0, None, np.zeros(3))
            if result is not None:
                force, moment = force + result.force, moment + np.cross(result.at - base.position, result.force)
        drag = float(-force @ base.rotation[:, 0])
        self.axial_area = 2.0 * drag / (1.0 + LINEAR_SPEED)  # drag = 1/2 rho A v (v + 0.1) at 1 m/s, rho 1
        self.shaft_height = -float(moment @ base.rotation[:, 1]) / drag if drag > 0 else 0.0
        self.rudder_joint = robot.joint_index("rudder_joint")
        self.stern_joint = robot.joint_index("stern_plane_joint")
        # how fast (rad/s) and how hard (N m) each fin follows the command: its catalogue link's limits
        self.fins = ((self.rudder_joint, _joint_link(robot, "rudder_joint")),
                     (self.stern_joint, _joint_link(robot, "stern_plane_joint")))
        self.command = [0.0, 0.0, 0.0]  # propeller rad/s, rudder rad (+left), stern plane rad (+rise)
        self.thrust = 0.0
        self._integral = 0.0
        self._reference = 0.0  # the speed through the water the propeller is bringing the boat to
        self._send_fins()

    def take(self, cmd: NauticDrive) -> None:
        s = self.spec
        limits = (s.max_propeller, s.max_rudder, s.max_stern_plane)
        self.command = limited((cmd.propeller, cmd.rudder, cmd.stern_plane), limits, cmd.normalized, self.command)
        self._send_fins()

    def stop(self) -> None:
        self.command[0] = 0.0

    def _send_fins(self) -> None:
        client, body = self.robot.client, self.robot.body_id
        for (joint, link), target in zip(self.fins, (self.command[1], self.command[2])):
            p.setJointMotorControl2(body, joint, p.POSITION_CONTROL, targetPosition=target,
                                    maxVelocity=link.velocity, force=link.effort, physicsClientId=client)

    def fin_angles(self) -> tuple[float, float]:
        """Current (rudder +left, stern plane +rise) angles, rad."""
        return (self.robot.joint_position(self.rudder_joint), self.robot.joint_position(self.stern_joint))

    def update(self, dt: float) -> None:
        robot = self.robot
        water = robot.env.world.water
        base = robot.base
        volume = water.at(base.position)
        depth = water.depth(base.position)
        if volume is None or depth is None or depth <= 0.0:
            self.thrust = 0.0
            return
        density = volume.density
        rot = base.rotation
        forward, left, up = rot[:, 0], rot[:, 1], rot[:, 2]
        speed = float(forward @ (base.linear_velocity - np.array(volume.current)))  # through the water
        if robot.battery_left() > 0:
            target = advance_speed(self.command[0], self.spec.propeller_pitch)
            target_limit = advance_speed(self.spec.max_propeller, self.spec.propeller_pitch)
            previous = self._reference
            self._reference += (target - previous) * min(1.0, dt / SPEED_TIME)
            reference = self._reference
            hull_drag = 0.5 * density * self.axial_area * reference * (abs(reference) + LINEAR_SPEED)
            # the integral takes up drag the estimate above misses (fins, pitch, linear part); critically
            # damped (integral rate 1 / (4 T^2)) around a reference that itself moves smoothly
            error = reference - speed
            self._integral = max(-target_limit, min(target_limit, self._integral + error * dt / (4.0 * SPEED_TIME)))
            speed_loop = self.mass * ((reference - previous) / dt + (error + self._integral) / SPEED_TIME)
        else:  # the propeller stands still: no thrust and no braking either, the boat coasts
            hull_drag = speed_loop = self._integral = 0.0
            self._reference = speed
        self.thrust = hull_drag + speed_loop
        # How deep the hull is: neutral trim only once the whole height is under water.
        submerged = min(1.0, depth / max(robot.spec.dimensions[2], 1e-6))
        trim = (self.mass - density * self.volume) * abs(robot.env.gravity) * submerged
        rudder, stern = self.fin_angles()
        # The fins' lift times their lever, as pure moments: rudder +left yaws left, stern plane +rise
        # pitches the nose up (negative about body y). Their direct side/lift force is left out: it is
        # what the hull's own lift at an angle of attack (not modelled) would outweigh in a real boat.
        lever = self.spec.fin_lever
        moment = (fin_lift(density, self.spec.rudder_area, speed, rudder) * lever * up
                  - fin_lift(density, self.spec.stern_plane_area, speed, stern) * lever * left)
        client, body = robot.client, robot.body_id
        # the drag-balancing thrust acts on the shaft; the speed loop (accelerating the whole mass)
        # through the centre of mass, so speeding up does not pitch the boat either
        shaft = base.position + self.shaft_height * up
        p.applyExternalForce(body, -1, (hull_drag * forward).tolist(), shaft.tolist(), p.WORLD_FRAME,
                             physicsClientId=client)
        centre = speed_loop * forward + np.array([0.0, 0.0, trim])
        p.applyExternalForce(body, -1, centre.tolist(), base.position.tolist(), p.WORLD_FRAME, physicsClientId=client)
        p.applyExternalTorque(body, -1, moment.tolist(), p.WORLD_FRAME, physicsClientId=client)

    def power(self) -> float:
        return abs(self.thrust) * 0.3


def _joint_link(robot: "Robot", joint: str) -> "LinkSpec":
    """The catalogue link that ``joint`` moves."""
    return next(link for link in robot.spec.body.links if link.joint_name == joint)


__all__ = ["SubmarineDrive", "advance_speed", "fin_lift", "propeller_spin", "twist_to_nautic"]
