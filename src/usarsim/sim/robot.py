"""A spawned robot: its PyBullet body, drive, joint groups, sensors and state."""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, Sequence, cast

import numpy as np
import pybullet as p

from usarsim import rotations
from usarsim.sim import noise
from usarsim.sim.catalogue import JointGroupSpec, JointLinkSpec, Mount, RobotSpec
from usarsim.sim.commands import (Command, CommandError, Flip, JointTargets, ReachPose, SensorCommand, SetLight,
                                  SetTrace)
from usarsim.sim.drives import Drive, drive_for
from usarsim.sim.environment import SensorEnvironment
from usarsim.sim.reach import robot_joint_positions
from usarsim.sim.readings import JointStateReading, MissionPackageState, Reading, RobotState
from usarsim.sim.effecters import create as create_effecter
from usarsim.sim.sensors import CommandResult, Sensor, create
from usarsim.sim.trace import PathTrace

BASE_LINK = "base_link"


def solve_touching_contacts_only(client: int, body: int) -> None:
    """Give the solver only the contacts of ``body`` that touch (distance <= 0).

    Bullet keeps contact points up to 2 cm apart in its manifolds and by default solves each
    as a speculative contact, with its friction and spinning rows; three in four of a tracked
    robot's points are such gaps. Each row costs time in proportion to the robot's joint count,
    so solving the touching points only makes a 32-robot step about 30 % cheaper
    (docs/architecture.md, "Many robots")."""
    for link in range(-1, p.getNumJoints(body, physicsClientId=client)):
        p.changeDynamics(body, link, contactProcessingThreshold=0.0, physicsClientId=client)


@dataclass
class BaseState:
    """Chassis pose and twist in the world frame, refreshed once per tick."""

    position: np.ndarray
    orientation: tuple[float, float, float, float]
    rotation: np.ndarray
    linear_velocity: np.ndarray
    angular_velocity: np.ndarray


class JointGroup:
    """A named group of joints driven together (flippers, arm, pan-tilt, gripper)."""

    def __init__(self, robot: "Robot", spec: JointGroupSpec, hold: bool = True) -> None:
        """``hold``: put the joints at their initial values and hold them there (False for a joint
        that another part drives until a joint command arrives, such as a wheel)."""
        self.robot = robot
        self.spec = spec
        self.indices = [robot.joint_index(link.joint) for link in spec.links]
        self.targets = [link.initial for link in spec.links]
        for link, index, target in zip(spec.links, self.indices, self.targets):
            if hold:
                robot.reset_joint(index, target)
                self._position(link, index, target)

    def link(self, number: int) -> tuple[JointLinkSpec, int]:
        """The (spec, joint index) of link ``number`` (1-based)."""
        if not 1 <= number <= len(self.spec.links):
            raise CommandError(f"{self.spec.name} has links 1..{len(self.spec.links)}, not {number}")
        return self.spec.links[number - 1], self.indices[number - 1]

    def command(self, number: int, value: float, order: int = 0, relative: bool = False) -> None:
        """Drive link ``number``: order 0 position, 1 velocity, 2 effort."""
        link, index = self.link(number)
        if order == 0:
            target = self.robot.joint_position(index) + value if relative else value
            self.targets[number - 1] = self._position(link, index, target)
        elif order == 1:
            speed = max(-link.max_speed, min(link.max_speed, value))
            p.setJointMotorControl2(self.robot.body_id, index, p.VELOCITY_CONTROL, targetVelocity=speed,
                                    force=link.max_torque, physicsClientId=self.robot.client)
        elif order == 2:
            p.setJointMotorControl2(self.robot.body_id, index, p.VELOCITY_CONTROL, force=0.0,
                                    physicsClientId=self.robot.client)
            torque = max(-link.max_torque, min(link.max_torque, value))
            p.setJointMotorControl2(self.robot.body_id, index, p.TORQUE_CONTROL, force=torque,
                                    physicsClientId=self.robot.client)
        else:
            raise CommandError(f"Order must be 0, 1 or 2, got {order}")

    def _position(self, link: JointLinkSpec, index: int, target: float) -> float:
        target = link.clamp(target)
        p.setJointMotorControl2(self.robot.body_id, index, p.POSITION_CONTROL, targetPosition=target,
                                maxVelocity=link.max_speed, force=link.max_torque, physicsClientId=self.robot.client)
        return target

    def state(self) -> tuple[list[float], list[float], list[float]]:
        """Positions, velocities and applied torques of the links."""
        states = p.getJointStates(self.robot.body_id, self.indices, physicsClientId=self.robot.client)
        return [s[0] for s in states], [s[1] for s in states], [s[3] for s in states]


class Robot:
    """Runtime of one robot instance in the simulator."""

    def __init__(self, name: str, spec: RobotSpec, client: int, body_id: int, env: SensorEnvironment) -> None:
        self.name = name
        self.spec = spec
        self.client = client
        self.body_id = body_id
        self.env = env
        self._joints: dict[str, int] = {}
        self._links: dict[str, int] = {BASE_LINK: -1}
        for i in range(p.getNumJoints(body_id, physicsClientId=client)):
            info = p.getJointInfo(body_id, i, physicsClientId=client)
            self._joints[info[1].decode()] = i
            self._links[info[12].decode()] = i
        self._fixed_parents = {link.name: link for link in spec.body.links if link.joint_type == "fixed"}
        # PyBullet reports the base's centre of mass; merged fixed links with mass move it off base_link.
        self._base_com = np.array(p.getDynamicsInfo(body_id, -1, physicsClientId=client)[3])
        self._state: BaseState | None = None
        self._base_link_pose: tuple[np.ndarray, np.ndarray] | None = None  # this tick's, once asked for
        self._configure_dynamics()
        self.drive: Drive = drive_for(self)
        self.joint_groups = {g.name: JointGroup(self, g) for g in spec.joint_groups}
        self._loose_joints: dict[str, JointGroup] = {}  # joints outside any group, made on first command
        self._moving_joints = [(n, i) for n, i in self._joints.items()
                               if p.getJointInfo(body_id, i, physicsClientId=client)[2] != p.JOINT_FIXED]
        self.light_on = False
        self.trace = PathTrace()
        self._now = 0.0  # sim time of the last tick (commands apply before the next one)
        # world position and quaternion it was spawned at (set by the simulator; reset returns here)
        self.spawn_pose: tuple[Sequence[float], Sequence[float]] | None = None
        self.battery_used = 0.0
        self.next_state_time = 0.0
        self._next_sample = 0.0  # earliest sim time any sensor may be due (skips idle ticks)
        self.effecters = {e.name: create_effecter(e, self) for e in spec.effecters}
        # NoNoise answers the Generator draws sensors make (noise.NoNoise), so sensors take either as a Generator
        self.sensors: list[Sensor] = [create(s, self, env,
                                             cast(np.random.Generator, noise.noise_source(env.seed, name, s.name, env.noise)))
                                      for s in spec.sensors if s.type != "GroundTruth" or spec.ground_truth]

    # --- structure -------------------------------------------------------------------------
    def joint_index(self, joint: str) -> int:
        """PyBullet joint index of a URDF joint name."""
        try:
            return self._joints[joint]
        except KeyError:
            raise CommandError(f"{self.spec.class_name} has no joint '{joint}' "
                               f"(joints: {', '.join(sorted(self._joints))})") from None

    def has_joint(self, joint: str) -> bool:
        """True when the URDF defines ``joint``."""
        return joint in self._joints

    def sensor(self, name: str) -> Sensor:
        """A sensor by name."""
        for s in self.sensors:
            if s.name == name:
                return s
        raise CommandError(f"robot '{self.name}' has no sensor '{name}' "
                           f"(sensors: {', '.join(s.name for s in self.sensors)})")

    def _configure_dynamics(self) -> None:
        solve_touching_contacts_only(self.client, self.body_id)
        body = self.spec.body
        for joint in self.spec.drive.left_wheels + self.spec.drive.right_wheels + self.spec.drive.powered_wheels:
            if joint in self._joints:
                p.changeDynamics(self.body_id, self._joints[joint], lateralFriction=body.wheel_friction,
                                 spinningFriction=body.spinning_friction, rollingFriction=0.0,
                                 physicsClientId=self.client)
        # passive joints (casters) must not hold still by PyBullet's default motor
        driven = set(self.spec.drive.left_wheels + self.spec.drive.right_wheels + self.spec.drive.powered_wheels)
        driven |= {link.joint for g in self.spec.joint_groups for link in g.links}
        driven |= set(self.spec.drive.front_steer_joints + self.spec.drive.rear_steer_joints)
        for joint, index in self._joints.items():
            if joint not in driven:
                p.setJointMotorControl2(self.body_id, index, p.VELOCITY_CONTROL, force=0.0,
                                        physicsClientId=self.client)

    def reset_joint(self, index: int, value: float) -> None:
        """Teleport a joint to ``value`` (spawn-time poses)."""
        p.resetJointState(self.body_id, index, value, physicsClientId=self.client)

    def joint_position(self, index: int) -> float:
        """Current position of a joint."""
        return p.getJointState(self.body_id, index, physicsClientId=self.client)[0]

    # --- state -----------------------------------------------------------------------------
    def invalidate(self) -> None:
        """Forget cached state (called after each physics step)."""
        self._state = None
        self._base_link_pose = None

    @property
    def base(self) -> BaseState:
        """Chassis pose and twist (cached for the current tick)."""
        if self._state is None:
            pos, orn = p.getBasePositionAndOrientation(self.body_id, physicsClientId=self.client)
            lin, ang = p.getBaseVelocity(self.body_id, physicsClientId=self.client)
            rot = np.array(p.getMatrixFromQuaternion(orn, physicsClientId=self.client)).reshape(3, 3)
            self._state = BaseState(np.array(pos), tuple(orn), rot, np.array(lin), np.array(ang))
        return self._state

    def height(self) -> float:
        """World z of the chassis origin now; one position query unless this tick's state is cached
        (the simulator checks every robot for a fall several times a second)."""
        if self._state is not None:
            return float(self._state.position[2])
        return p.getBasePositionAndOrientation(self.body_id, physicsClientId=self.client)[0][2]

    def yaw_rate(self) -> tuple[float, float]:
        """(angular rate about the chassis z axis, world z of that axis): what a body-fixed gyro sees.

        Drive loops ask every tick; unless the tick's state is cached already, this reads the two
        PyBullet tuples without building the full ``BaseState``. Either way the same closed form
        gives the value, so a drive does not depend on whether a sensor read the state first.
        """
        if self._state is not None:
            (x, y, z, w), (wx, wy, wz) = self._state.orientation, self._state.angular_velocity.tolist()
        else:
            _, (x, y, z, w) = p.getBasePositionAndOrientation(self.body_id, physicsClientId=self.client)
            _, (wx, wy, wz) = p.getBaseVelocity(self.body_id, physicsClientId=self.client)
        ux, uy, uz = 2.0 * (x * z + w * y), 2.0 * (y * z - w * x), 1.0 - 2.0 * (x * x + y * y)
        return wx * ux + wy * uy + wz * uz, uz

    def base_link_motion(self) -> tuple[np.ndarray, np.ndarray]:
        """World position and velocity of the base_link frame's origin: PyBullet's base is the
        centre of mass of base_link and every fixed link merged into it, which may lie elsewhere."""
        base = self.base
        position, _ = self.link_pose(BASE_LINK)
        return position, base.linear_velocity + _cross(base.angular_velocity, position - base.position)

    def link_pose(self, link: str) -> tuple[np.ndarray, np.ndarray]:
        """World position and rotation matrix of a link frame (merged fixed links resolved)."""
        if link == BASE_LINK:
            if self._base_link_pose is None:  # every sensor on the chassis asks for it
                base = self.base
                origin = base.position - base.rotation @ self._base_com if self._base_com.any() else base.position
                self._base_link_pose = (origin, base.rotation)
            return self._base_link_pose
        if link in self._links:
            state = p.getLinkState(self.body_id, self._links[link], computeForwardKinematics=True,
                                   physicsClientId=self.client)
            return np.array(state[4]), np.array(p.getMatrixFromQuaternion(state[5])).reshape(3, 3)
        fixed = self._fixed_parents.get(link)
        if fixed is None:
            raise CommandError(f"{self.spec.class_name} has no link '{link}'")
        parent_pos, parent_rot = self.link_pose(fixed.parent)
        offset = _fixed_rotation(tuple(fixed.rpy))
        return parent_pos + parent_rot @ np.array(fixed.xyz), parent_rot @ offset

    def physical_link(self, link: str) -> int:
        """PyBullet link index carrying ``link`` (fixed links are merged into their parents)."""
        while link not in self._links:
            fixed = self._fixed_parents.get(link)
            if fixed is None:
                raise CommandError(f"{self.spec.class_name} has no link '{link}'")
            link = fixed.parent
        return self._links[link]

    def link_motion(self, link: str) -> tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(PyBullet index, frame position, frame rotation, centre-of-mass velocity, angular velocity,
        centre of mass) of a link, all in the world frame."""
        index = self.physical_link(link)
        position, rotation = self.link_pose(link)
        if index == -1:
            base = self.base
            return index, position, rotation, base.linear_velocity, base.angular_velocity, base.position
        state = p.getLinkState(self.body_id, index, computeLinkVelocity=1, physicsClientId=self.client)
        return index, position, rotation, np.array(state[6]), np.array(state[7]), np.array(state[0])

    def mount_pose(self, mount: Mount) -> tuple[np.ndarray, np.ndarray]:
        """World position and rotation matrix of a device mounted at ``mount``."""
        return _mounted(mount, *self.link_pose(mount.parent))

    def mount_motion(self, mount: Mount) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """World position, rotation, velocity and angular velocity of a device mounted at ``mount``:
        the motion of the link that carries it (a torso, a pan-tilt head), at the mount point itself."""
        _, link_position, link_rotation, com_velocity, angular, com = self.link_motion(mount.parent)
        position, rotation = _mounted(mount, link_position, link_rotation)
        return position, rotation, com_velocity + _cross(angular, position - com), angular

    def chassis_pose(self) -> tuple[np.ndarray, np.ndarray]:
        """World position and rotation matrix of the base_link frame (what ``chassis_mount`` is relative to)."""
        return self.link_pose(BASE_LINK)

    def chassis_mount(self, mount: Mount) -> tuple[np.ndarray, np.ndarray] | None:
        """Position and rotation of ``mount`` in the base_link frame, or None when a joint moves it.

        Devices rigid with the chassis can then be placed for a whole batch with one transform.
        """
        position, rotation = _fixed_offset(tuple(mount.xyz)), _fixed_rotation(tuple(mount.rpy))
        link = mount.parent
        while link != BASE_LINK:
            if link in self._links:
                return None
            fixed = self._fixed_parents.get(link)
            if fixed is None:
                raise CommandError(f"{self.spec.class_name} has no link '{link}'")
            offset = _fixed_rotation(tuple(fixed.rpy))
            position, rotation = _fixed_offset(tuple(fixed.xyz)) + offset @ position, offset @ rotation
            link = fixed.parent
        return position, rotation

    # --- commands --------------------------------------------------------------------------
    def apply(self, cmd: Command) -> CommandResult | None:
        """Apply a command at the start of a tick; raises CommandError when impossible."""
        if isinstance(cmd, SetLight):
            self.light_on = cmd.on
        elif isinstance(cmd, Flip):
            self.flip()
        elif isinstance(cmd, SetTrace):
            self.trace.apply(cmd, self._now)
        elif isinstance(cmd, JointTargets):
            self.set_joints(cmd)
        elif isinstance(cmd, SensorCommand):
            return self.device_command(cmd)
        elif isinstance(cmd, ReachPose):
            return self.reach(cmd)
        else:
            self.drive.apply(cmd)  # a clear "cannot execute" error for a type the drive does not accept
        return None

    def set_joints(self, cmd: JointTargets) -> None:
        """Drive named joints (any group) or group links given as '<Group>:<link number>'."""
        plan = []
        for key, value in cmd.targets.items():
            key = self.steer_joint(key) if cmd.steer else key
            plan.append((*self._resolve_joint(key), value))  # validate all before moving any
        for group, number, value in plan:
            group.command(number, value, cmd.order, cmd.relative)

    def _resolve_joint(self, key: str) -> tuple[JointGroup, int]:
        if ":" in key:
            group_name, _, number = key.partition(":")
            group = self.joint_groups.get(group_name)
            if group is None:
                raise CommandError(f"robot '{self.name}' has no joint group '{group_name}' "
                                   f"(groups: {', '.join(self.joint_groups) or 'none'})")
            try:
                return group, int(number)
            except ValueError:
                raise CommandError(f"bad link number '{number}' for {group_name}") from None
        for group in self.joint_groups.values():
            for n, link in enumerate(group.spec.links, start=1):
                if link.joint == key:
                    return group, n
        if any(name == key for name, _ in self._moving_joints):
            if key not in self._loose_joints:
                group_spec = JointGroupSpec(key, "mission_package", [loose_joint_spec(self.spec, key)])
                self._loose_joints[key] = JointGroup(self, group_spec, hold=False)
            return self._loose_joints[key], 1
        known = [name for name, _ in self._moving_joints]
        raise CommandError(f"robot '{self.name}' has no joint '{key}' (joints: {', '.join(known) or 'none'})")

    def steer_joint(self, joint: str) -> str:
        """The joint that steers ``joint``: a wheel's knuckle (RobotSpec.knuckle), else itself."""
        return self.spec.knuckle(joint) or joint

    def moving_joints(self) -> list[tuple[str, int]]:
        """(name, PyBullet index) of every non-fixed joint."""
        return list(self._moving_joints)

    def reach(self, cmd: ReachPose) -> CommandResult:
        """Solve a joint group's end pose by inverse kinematics and drive its links there."""
        group = self.joint_groups.get(cmd.package)
        if group is None:
            raise CommandError(f"robot '{self.name}' has no joint group '{cmd.package}' "
                               f"(groups: {', '.join(self.joint_groups) or 'none'})")
        solution = self.env.reach.for_robot(self.spec).solve(group.spec, robot_joint_positions(self), cmd.position,
                                                             cmd.rpy)
        fields = (("Error", round(solution.position_error, 4)),)
        if not solution.reached:
            return CommandResult(False, fields, f"pose out of reach of {cmd.package} "
                                                f"(closest {solution.position_error:.3f} m away)")
        for number, value in enumerate(solution.values, start=1):
            group.command(number, value, 0)
        return CommandResult(True, fields)

    def device_command(self, cmd: SensorCommand) -> CommandResult:
        """Route an opcode to the named sensor or effecter."""
        for s in self.sensors:
            if s.name == cmd.device or (not cmd.device and s.type_name == cmd.opcode):
                return s.command(cmd.opcode, cmd.params)
        effecter = self.effecters.get(cmd.device)
        if effecter is not None:
            return effecter.command(cmd.opcode, cmd.params)
        return CommandResult(False, message=f"robot '{self.name}' has no device '{cmd.device}'")

    def flip(self) -> None:
        """Upright the robot, keeping x, y and yaw, lifted by its ground clearance."""
        pos = self.base.position
        yaw = rotations.euler_from_quaternion(self.base.orientation)[2]
        z = pos[2] - self.spec.body.lowest_point() + 0.05
        p.resetBasePositionAndOrientation(self.body_id, (pos[0], pos[1], z), rotations.quaternion_from_euler((0, 0, yaw)),
                                          physicsClientId=self.client)
        p.resetBaseVelocity(self.body_id, (0, 0, 0), (0, 0, 0), physicsClientId=self.client)
        self.invalidate()

    # --- per tick --------------------------------------------------------------------------
    def update(self, dt: float) -> None:
        """Per-tick actuation and battery drain (linear in time plus drive load)."""
        self.drive.update(dt)
        for effecter in self.effecters.values():
            effecter.update(dt)
        if self.battery_left() > 0:
            self.battery_used += dt
        elif self.battery_used < self.spec.battery_life + dt:
            self.battery_used += dt
            self.drive.stop()

    def battery_left(self) -> float:
        """Seconds of battery left."""
        return max(0.0, self.spec.battery_life - self.battery_used)

    def robot_readings(self, now: float) -> list[Reading]:
        """STA-like state, joint states and mission-package states at the robot's message rate,
        and the path trace's point when one is due."""
        self._now = now
        point = self.trace.sample(now, self.name, tuple(self.base.position)) if self.trace.on else None
        trail: list[Reading] = [point] if point is not None else []
        if now + 1e-9 < self.next_state_time:
            return trail
        self.next_state_time = max(self.next_state_time + self.spec.msg_period, now)
        front, rear = self.drive.steer_angles()
        rudder, stern_plane = self.drive.fin_angles()
        head: dict[str, Any] = {"time": now, "robot": self.name, "frame": BASE_LINK}
        out: list[Reading] = [RobotState(sensor="State", vehicle_type=self.spec.vehicle_type,
                                         battery=self.battery_left(), battery_life=self.spec.battery_life,
                                         light_on=self.light_on,
                                         light_intensity=self.spec.light_intensity if self.light_on else 0,
                                         front_steer=front, rear_steer=rear, rudder=rudder,
                                         stern_plane=stern_plane, **head)]
        if self._moving_joints:
            states = p.getJointStates(self.body_id, [i for _, i in self._moving_joints], physicsClientId=self.client)
            out.append(JointStateReading(sensor="JointState", names=tuple(n for n, _ in self._moving_joints),
                                         positions=tuple(s[0] for s in states), velocities=tuple(s[1] for s in states),
                                         efforts=tuple(s[3] for s in states), **head))
        for group in self.joint_groups.values():
            positions, _, torques = group.state()
            out.append(MissionPackageState(sensor=group.spec.name, package=group.spec.name,
                                           links=tuple(range(1, len(positions) + 1)),
                                           values=tuple(positions),
                                           torques=tuple(abs(t) for t in torques), **head))
        return out + trail

    def sample_sensors(self, now: float) -> list[Reading]:
        """Readings of every sensor due at ``now``."""
        if now + 1e-9 < self._next_sample:
            return []
        out: list[Reading] = []
        batches: dict[type[Sensor], list[Sensor]] = {}
        for s in self.sensors:
            if s.due(now):
                if s.batchable:
                    batches.setdefault(type(s), []).append(s)
                else:
                    out.extend(s.sample(now))
        for cls, group in batches.items():
            out.extend(cls.sample_batch(group, now))
        self._next_sample = min((s.next_due() for s in self.sensors), default=math.inf)
        return out

    def wake_sensors(self) -> None:
        """A sensor's schedule changed (a manual scan was requested): check every sensor next tick."""
        self._next_sample = 0.0

    def reset_to_spawn(self) -> None:
        """Back to the spawn pose at rest: chassis, joint groups at their initial positions, drive stopped."""
        if self.spawn_pose is not None:
            position, orientation = self.spawn_pose
            p.resetBasePositionAndOrientation(self.body_id, tuple(position), tuple(orientation),
                                              physicsClientId=self.client)
        p.resetBaseVelocity(self.body_id, (0, 0, 0), (0, 0, 0), physicsClientId=self.client)
        for _, index in self._moving_joints:
            self.reset_joint(index, 0.0)
        for group in self.joint_groups.values():
            for n, (link, index) in enumerate(zip(group.spec.links, group.indices)):
                self.reset_joint(index, link.initial)
                group.targets[n] = group._position(link, index, link.initial)  # motor target too
        self.drive.stop()
        self.battery_used = 0.0
        self.invalidate()

    def on_spawned(self, now: float) -> None:
        """Let sensors capture their reference (odometry origin, INS initial estimate)."""
        self.invalidate()
        self.next_state_time = now
        self._now = now
        self._next_sample = now
        for s in self.sensors:
            s.on_spawned(now)


def loose_joint_spec(spec: RobotSpec, joint: str) -> JointLinkSpec:
    """Limits of a joint outside every joint group, from the body: wheels spin freely at the
    drive's speed and torque limits, other links keep their URDF limits."""
    if any(w.joint == joint for w in spec.body.wheels):
        return JointLinkSpec(joint, "continuous", 1.0, 0.0, max(spec.drive.max_wheel_speed, 1.0), spec.drive.max_torque)
    link = next(link for link in spec.body.links if link.joint_name == joint)
    kind = link.joint_type if link.joint_type in ("revolute", "prismatic", "continuous") else "revolute"
    lower, upper = (1.0, 0.0) if kind == "continuous" else (link.lower, link.upper)
    return JointLinkSpec(joint, kind, lower, upper, link.velocity, link.effort)  # type: ignore[arg-type]


def _mounted(mount: Mount, link_position: np.ndarray, link_rotation: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """World pose of ``mount`` on a link at ``link_position`` / ``link_rotation``."""
    return (link_position + link_rotation @ _fixed_offset(tuple(mount.xyz)),
            link_rotation @ _fixed_rotation(tuple(mount.rpy)))


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cross product of two 3-vectors (np.cross costs ten times more on arrays this small)."""
    return np.array((a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]))


@functools.lru_cache(maxsize=1024)
def _fixed_rotation(rpy: tuple[float, float, float]) -> np.ndarray:
    """Rotation matrix of a constant mount orientation (sensors ask for it every reading)."""
    rot = rotations.rotation_matrix(rotations.quaternion_from_euler(rpy))
    rot.setflags(write=False)  # shared between callers
    return rot


@functools.lru_cache(maxsize=1024)
def _fixed_offset(xyz: tuple[float, float, float]) -> np.ndarray:
    """A constant mount position as an array (sensors ask for it every reading)."""
    offset = np.array(xyz, dtype=float)
    offset.setflags(write=False)  # shared between callers
    return offset


def spawn_height(spec: RobotSpec, ground_z: float, clearance: float = 0.02) -> float:
    """Base-link z that puts the robot's lowest point ``clearance`` above ``ground_z``."""
    return ground_z - spec.body.lowest_point() + clearance


def pose_tuple(values: Sequence[float]) -> tuple[float, float, float]:
    """Validate and convert a 3-vector."""
    if len(values) != 3 or not all(math.isfinite(v) for v in values):
        raise CommandError(f"expected three finite numbers, got {list(values)}")
    return (float(values[0]), float(values[1]), float(values[2]))


__all__ = ["BaseState", "JointGroup", "Robot", "spawn_height", "pose_tuple"]
