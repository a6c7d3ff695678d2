"""Drive models for car-like (Ackermann) and rotary-wing (aerial) vehicles.

Registered for ``drive.type`` ``ackermann`` and ``aerial`` (spec
worlds-and-robots.md b.4, protocol.md §3.2.2 and §3.2.4). Commands are the
core's REP-103 ones: positive steer and yaw rate turn left, lateral velocity
is positive to the left, altitude velocity positive up.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pybullet as p

from usarsim import rotations
from usarsim.sim.body import BodySpec
from usarsim.sim.brakes import WheelBrake
from usarsim.sim.catalogue import DriveSpec
from usarsim.sim.commands import AckermannDrive, AerialDrive
from usarsim.sim.drives.base import Drive, bicycle_steer, clamp, limited
from usarsim.sim.drives.registry import DRIVES

if TYPE_CHECKING:
    from usarsim.sim.robot import Robot

# Steering actuator speed at the wheel (rad/s). The seeds give only Karma's
# SteerSpeed in engine units; a car's steering rack turns the wheels ~35 deg in ~0.5 s.
STEER_RATE = 1.5
# Traction control (as a car's ASR/ABS): the powered wheels' surface may run ahead of or behind the
# ground by this much (m/s, plus a share of the speed), so full throttle accelerates at the tyres'
# grip instead of spinning them (a spinning tyre has no side grip: the car would yaw at launch).
TRACTION_SLIP_SPEED = 0.3
TRACTION_SLIP_RATIO = 0.1


def twist_to_ackermann(linear: float, angular: float, spec: DriveSpec) -> tuple[float, float]:
    """(v m/s, omega rad/s +left) -> (powered-wheel spin rad/s, front steer rad) with the bicycle model."""
    speed = clamp(linear / spec.wheel_radius, spec.max_wheel_speed) if spec.wheel_radius > 0 else 0.0
    return speed, bicycle_steer(linear, angular, spec.wheelbase, spec.max_front_steer)


def wheel_positions(body: BodySpec) -> dict[str, tuple[float, float, float]]:
    """Wheel-centre positions in base_link at zero joint angles (parent offsets summed)."""
    links = {link.name: link for link in body.links}

    def origin(name: str) -> np.ndarray:
        if name == "base_link" or name not in links:
            return np.zeros(3)
        return origin(links[name].parent) + np.array(links[name].xyz)

    return {w.joint: rotations.vec3(origin(w.parent) + np.array(w.xyz)) for w in body.wheels}


def ackermann_geometry(wheels: dict[str, tuple[float, float]], front: set[str], rear: set[str],
                       front_steer: float, rear_steer: float) -> dict[str, tuple[float, float]]:
    """Per wheel: (steer angle rad, spin ratio to the reference point) for bicycle angles.

    The instantaneous centre of rotation is where the normals of the (virtual,
    centre-line) front and rear wheels cross; every wheel then points
    perpendicular to its own radius, and spins in proportion to it. The
    reference point is the centre-line point nearest that centre (the rear
    axle centre for front-only steering), so ``Speed`` is its wheel spin.
    """
    xs_f = [wheels[j][0] for j in wheels if j in front] or [max(x for x, _ in wheels.values())]
    xs_r = [wheels[j][0] for j in wheels if j not in front] or [min(x for x, _ in wheels.values())]
    x_f, x_r = sum(xs_f) / len(xs_f), sum(xs_r) / len(xs_r)
    det = math.sin(rear_steer - front_steer)
    out: dict[str, tuple[float, float]] = {}
    if abs(det) < 1e-6:  # straight or crab motion: all wheels parallel, same speed
        for j in wheels:
            angle = front_steer if j in front else rear_steer if j in rear else 0.0
            out[j] = (angle, 1.0)
        return out
    # Solve (x - x_f) cos df + y sin df = 0 and the same for the rear axle.
    cf, sf, cr, sr = math.cos(front_steer), math.sin(front_steer), math.cos(rear_steer), math.sin(rear_steer)
    bf, br = x_f * cf, x_r * cr
    cx = (bf * sr - sf * br) / det
    cy = (cf * br - cr * bf) / det
    for j, (x, y) in wheels.items():
        steered = j in front or j in rear
        angle = math.atan((x - cx) / (cy - y)) if steered and abs(cy - y) > 1e-9 else 0.0
        out[j] = (angle, math.hypot(x - cx, y - cy) / abs(cy))
    return out


@DRIVES.register("ackermann")
class AckermannSteerDrive(Drive):
    """Car-like vehicles: powered wheels by velocity motors, steer knuckles by position motors."""

    accepts = (AckermannDrive,)

    def __init__(self, robot: "Robot") -> None:
        super().__init__(robot)
        spec = self.spec
        names = list(dict.fromkeys(spec.left_wheels + spec.right_wheels + spec.powered_wheels))
        positions = wheel_positions(robot.spec.body)
        self.wheels = {j: positions[j][:2] for j in names if j in positions}
        self.powered = spec.powered_wheels or names
        self.front_steer_joints = [robot.joint_index(j) for j in spec.front_steer_joints]
        self.rear_steer_joints = [robot.joint_index(j) for j in spec.rear_steer_joints]
        # A steer knuckle carries the wheel below it: map knuckle joint -> its wheel joint.
        by_link = {w.parent: w.joint for w in robot.spec.body.wheels}
        joint_to_link = {link.joint_name: link.name for link in robot.spec.body.links}
        self._knuckle_wheel = {j: by_link.get(joint_to_link.get(j, ""), "")
                               for j in spec.front_steer_joints + spec.rear_steer_joints}
        self.front_wheels = {self._knuckle_wheel[j] for j in spec.front_steer_joints}
        self.rear_wheels = {self._knuckle_wheel[j] for j in spec.rear_steer_joints}
        self.free = [robot.joint_index(j) for j in names if j not in self.powered]
        # a parked car holds every wheel (a parking brake), driven or not
        self.brake = WheelBrake(robot.client, robot.body_id, [robot.joint_index(j) for j in names], spec.max_torque)
        self.command = (0.0, 0.0, 0.0)
        self._send()

    def take(self, cmd: AckermannDrive) -> None:
        s = self.spec
        speed, front, rear = limited((cmd.speed, cmd.front_steer, cmd.rear_steer),
                                     (s.max_wheel_speed, s.max_front_steer, s.max_rear_steer), cmd.normalized, self.command)
        self.command = (speed, front, rear)
        self._send()

    def stop(self) -> None:
        self.command = (0.0, self.command[1], self.command[2])
        self._send()

    def update(self, dt: float) -> None:
        self.brake.update()
        if not self.brake.engaged:  # the slip window follows the car's speed, driving or braking
            self._send_spin()

    def traction_limited(self, speed: float) -> float:
        """The commanded spin (rad/s of the reference wheel) held within the traction control's slip
        window around the car's speed over ground (``TRACTION_SLIP_SPEED``, ``TRACTION_SLIP_RATIO``)."""
        r = self.spec.wheel_radius
        if r <= 0:
            return speed
        ground = float(self.robot.base.rotation[:, 0] @ self.robot.base.linear_velocity)
        window = TRACTION_SLIP_SPEED + TRACTION_SLIP_RATIO * abs(ground)
        return max((ground - window) / r, min((ground + window) / r, speed))

    def wheel_targets(self, speed: float | None = None) -> dict[str, tuple[float, float]]:
        """Per wheel joint: (steer angle, spin rad/s) for the current command (or reference spin ``speed``)."""
        commanded, front, rear = self.command
        speed = commanded if speed is None else speed
        geometry = ackermann_geometry(self.wheels, self.front_wheels, self.rear_wheels, front, rear)
        return {j: (angle, speed * ratio) for j, (angle, ratio) in geometry.items()}

    def _send_spin(self) -> None:
        """The powered wheels' velocity motors, at the traction-limited spin."""
        robot = self.robot
        targets = self.wheel_targets(self.traction_limited(self.command[0]))
        powered = [j for j in self.powered if j in targets]
        p.setJointMotorControlArray(robot.body_id, [robot.joint_index(j) for j in powered], p.VELOCITY_CONTROL,
                                    targetVelocities=[targets[j][1] for j in powered],
                                    forces=[self.spec.max_torque] * len(powered), physicsClientId=robot.client)

    def _send(self) -> None:
        client, body, robot = self.robot.client, self.robot.body_id, self.robot
        targets = self.wheel_targets()
        if self.command[0] != 0.0:
            self.brake.release()
        else:
            self.brake.request()
        if not self.brake.engaged:
            self._send_spin()
            if self.free:  # free-rolling wheels
                p.setJointMotorControlArray(body, self.free, p.VELOCITY_CONTROL, forces=[0.0] * len(self.free),
                                            physicsClientId=client)
        for joint_name in self.spec.front_steer_joints + self.spec.rear_steer_joints:
            wheel = self._knuckle_wheel[joint_name]
            angle = targets[wheel][0] if wheel in targets else 0.0
            p.setJointMotorControl2(body, robot.joint_index(joint_name), p.POSITION_CONTROL, targetPosition=angle,
                                    maxVelocity=STEER_RATE, force=self.spec.max_torque * 4.0,
                                    physicsClientId=client)

    def steer_angles(self) -> tuple[float, float]:
        """Current (front, rear) steer angles: the mean of each axle's knuckle angles."""
        out = []
        for joints in (self.front_steer_joints, self.rear_steer_joints):
            if not joints:
                out.append(0.0)
                continue
            states = p.getJointStates(self.robot.body_id, joints, physicsClientId=self.robot.client)
            out.append(sum(s[0] for s in states) / len(states))
        return out[0], out[1]

    def power(self) -> float:
        return self.spec.max_torque * abs(self.command[0]) * 0.05


@DRIVES.register("aerial")
class RotaryWingDrive(Drive):
    """Stabilised, velocity-controlled multirotor: thrust along the airframe's own up axis.

    Each tick the commanded body-frame velocities (yaw-aligned, so pitch and roll of the
    airframe do not tilt the command) pass through a first-order lag of ``response_time``
    (the velocity reference). The velocity loop asks for the reference's own acceleration plus
    a proportional correction; the thrust vector that gives it (against gravity) sets the
    attitude the airframe must take, as a real multirotor can push only along its rotor axis:
    it pitches forward about atan(a / g) to accelerate (22 deg for 4 m/s^2) and back to brake.
    A PD attitude loop turns the airframe's up axis onto that vector while tracking the yaw
    rate, and the rotors' thrust is the vector's share along the up axis it has now. With an
    empty battery the rotors stop and the robot falls.
    """

    accepts = (AerialDrive,)
    VELOCITY_GAIN = 6.0  # 1/s: velocity error -> acceleration, on top of the reference's own
    MAX_ACCELERATION = 8.0  # m/s^2 beyond gravity compensation (a tilt of at most 39 deg)
    # Attitude loop: natural frequency 20 rad/s, damping 0.9, as a small quadrotor's; fast enough that
    # with the reference's acceleration fed forward the vehicle's 63 % response time is the reference
    # lag's, the catalogue's ``response_time`` (0.305 s measured for 0.3 s, docs/robots.md).
    ATTITUDE_KP = 400.0  # 1/s^2
    ATTITUDE_KD = 36.0  # 1/s
    YAW_GAIN = 8.0  # 1/s

    def __init__(self, robot: "Robot") -> None:
        super().__init__(robot)
        client, body = robot.client, robot.body_id
        links = list(range(p.getNumJoints(body, physicsClientId=client)))
        masses = [p.getDynamicsInfo(body, i, physicsClientId=client)[0] for i in [-1, *links]]
        # Thrust acts through the whole robot's centre of mass (else the camera's weight pitches
        # the airframe): its offset from the base's, in the base frame, taken at spawn.
        base = robot.base
        com = masses[0] * base.position
        for mass, state in zip(masses[1:], p.getLinkStates(body, links, physicsClientId=client) if links else []):
            com = com + mass * np.array(state[0])
        self.com_offset = base.rotation.T @ (com / self.mass - base.position)
        inertia = p.getDynamicsInfo(body, -1, physicsClientId=client)[2]
        self.inertia = (max(inertia[0], inertia[1]), max(inertia[0], inertia[1]), inertia[2])
        self.command = np.zeros(4)  # forward, left, up (m/s), yaw rate (rad/s)
        self.reference = [0.0, 0.0, 0.0, 0.0]  # the command through the response lag
        self.thrust = 0.0

    def take(self, cmd: AerialDrive) -> None:
        s = self.spec
        limits = (s.max_linear_speed, s.max_lateral_speed, s.max_altitude_speed, s.max_yaw_rate)
        values = (cmd.linear, cmd.lateral, cmd.altitude, cmd.yaw_rate)
        self.command = np.array(limited(values, limits, cmd.normalized, self.command))

    def stop(self) -> None:
        self.command = np.zeros(4)

    def update(self, dt: float) -> None:
        robot = self.robot
        if robot.battery_left() <= 0.0:
            self.thrust = 0.0
            return
        lag = min(1.0, dt / max(self.spec.response_time, dt))
        previous = self.reference
        self.reference = [ref + (cmd - ref) * lag for ref, cmd in zip(previous, self.command.tolist())]
        fwd, left, up, yaw_rate = self.reference
        dfwd, dleft, dup = ((new - old) / dt for new, old in zip(self.reference[:3], previous[:3]))
        # plain PyBullet tuples: this runs for every rotorcraft on every tick, before the tick's state is cached
        client, body = robot.client, robot.body_id
        (px, py, pz), orientation = p.getBasePositionAndOrientation(body, physicsClientId=client)
        (vx, vy, vz), (wx, wy, wz) = p.getBaseVelocity(body, physicsClientId=client)
        r00, r01, r02, r10, r11, r12, r20, r21, r22 = p.getMatrixFromQuaternion(orientation, physicsClientId=client)
        yaw = math.atan2(r10, r00)
        c, s = math.cos(yaw), math.sin(yaw)
        k = self.VELOCITY_GAIN
        ax = c * dfwd - s * dleft + k * (c * fwd - s * left - vx)
        ay = s * dfwd + c * dleft + k * (s * fwd + c * left - vy)
        az = dup + k * (up - vz)
        norm = math.sqrt(ax * ax + ay * ay + az * az)
        if norm > self.MAX_ACCELERATION:
            scale = self.MAX_ACCELERATION / norm
            ax, ay, az = ax * scale, ay * scale, az * scale
        m = self.mass
        wanted = (m * ax, m * ay, m * (az - robot.env.gravity))  # the thrust vector, world frame
        size = math.sqrt(wanted[0] ** 2 + wanted[1] ** 2 + wanted[2] ** 2)
        # the rotors push along the airframe's up axis (third column) only
        self.thrust = max(0.0, wanted[0] * r02 + wanted[1] * r12 + wanted[2] * r22)
        ox, oy, oz = self.com_offset.tolist()
        at = (px + r00 * ox + r01 * oy + r02 * oz, py + r10 * ox + r11 * oy + r12 * oz,
              pz + r20 * ox + r21 * oy + r22 * oz)
        force = (self.thrust * r02, self.thrust * r12, self.thrust * r22)
        p.applyExternalForce(body, -1, force, at, p.WORLD_FRAME, physicsClientId=client)
        # Turn the up axis onto the wanted thrust direction (error = up x wanted), track the yaw rate.
        dx, dy, dz = (wanted[0] / size, wanted[1] / size, wanted[2] / size) if size > 0 else (0.0, 0.0, 1.0)
        ex, ey = r12 * dz - r22 * dy, r22 * dx - r02 * dz
        kp, kd = self.ATTITUDE_KP, self.ATTITUDE_KD
        ixx, iyy, izz = self.inertia
        torque = (ixx * (kp * ex - kd * wx), iyy * (kp * ey - kd * wy), izz * self.YAW_GAIN * (yaw_rate - wz))
        p.applyExternalTorque(body, -1, torque, p.WORLD_FRAME, physicsClientId=client)

    def power(self) -> float:
        return self.thrust * 5.0  # rough: ~50 W per kg-force of thrust for a small quad



__all__ = ["AckermannSteerDrive", "RotaryWingDrive", "STEER_RATE", "ackermann_geometry", "twist_to_ackermann",
           "wheel_positions"]
