"""Benchmark: a mixed fleet of robots with their default sensors in one arena.

Prints the simulator's real-time factor with N robots (default 8: P2AT, P2DX, ATRVJr,
Zerg, Kurt2D, Kenaf, Talon and AirRobot, or the classes given with --classes) and the
ratio against raw PyBullet doing the same work in the same run: the same world and
URDFs, the same motor, friction and joint-hold settings and wheel commands, the same
thrust calls for rotorcraft, and the same number of rays per range sensor at the same
rates, in the same directions from the same mounts as the sensors cast them (laser fans,
sonar/IR cones, GPS sky rays, victim-sensor and 3-D scanner grids; one batch per sensor,
large ones on all cores), plus the state queries odometry and INS need and the two chassis
queries (pose, velocity) that a skid-steer drive's yaw-rate loop makes every tick, without the
loop's arithmetic or its motor updates. Cameras are off in both (they render only when a client
asks for images).
Rates are given per wall-clock second and per CPU second of this process (the latter
is what one core delivers when other processes share the machine).

    .venv/bin/python bench/fleet.py [--world orange] [--robots 8] [--seconds 10] [--classes P2AT,Zerg]
    .venv/bin/python bench/fleet.py --vehicle-types [--seconds 10]

``--vehicle-types`` runs one robot of every vehicle type at once (skid, tracked, Ackermann, aerial,
underwater, blimp, omni drive, humanoid) in a floor world with a pool; the raw side makes the same
PyBullet calls per tick as the fluid model (one force and one torque per wet shape, two link-state
reads per wet shape on a jointed link, the blimp's and submarine's two forces and one moment) with
its arithmetic left out.
"""
from __future__ import annotations

import argparse
import math
import time
from dataclasses import dataclass

import numpy as np
import pybullet as p


from usarsim import rotations
from usarsim.sim.catalogue import RobotSpec, available_robots, load_robot
from usarsim.sim.commands import (AckermannDrive, AerialDrive, BlimpDrive, CommandError, JointTargets, NauticDrive,
                                  OmniDrive, WheelDrive)
from usarsim.sim.drives import DRIVES, SkidSteerDrive
from usarsim.sim.water import WaterSpec as WaterVolume
from usarsim.sim.quiet import quiet_stdout
from usarsim.sim.raycast import beam_count, threads_for
from usarsim.sim.robot import solve_touching_contacts_only, spawn_height
from usarsim.sim.sensors import registry
from usarsim.sim.sensors.range import cone_directions
from usarsim.sim.sensors.ray_grid import grid_directions
from usarsim.sim.simulator import SOLVER_ITERATIONS, URDF_FLAGS, Simulator
from usarsim.sim.world import GpsOrigin, StartPose, WorldSpec, load_world

PHYSICS_RATE = 200.0
RAY_SENSORS = ("RangeScanner", "IRScanner", "Sonar", "IR", "GPS", "RangeScanner3D", "RangeImager", "VictSensor")


@dataclass
class RayLoad:
    """One range sensor's rays: unit directions and start in the chassis frame, length, ticks between scans."""

    directions: np.ndarray  # N x 3, chassis frame (the mount's rotation applied)
    origin: np.ndarray  # mount position in the chassis frame (joints at their initial angles)
    length: float
    period: int

    @property
    def rays(self) -> int:
        return len(self.directions)


# Arena-sized robots of every indoor family: wheeled, tracked with flippers, aerial. Cars (3.7-4.3 m)
# do not fit an arena's lanes and are left out unless named with --classes.
MIX = ("P2AT", "P2DX", "ATRVJr", "Zerg", "Kurt2D", "Kenaf", "Talon", "AirRobot")


# One of each vehicle type, and where each starts in the vehicle-type world (the submarine in the pool).
VEHICLE_TYPES = ("Submarine", "P2AT", "Kenaf", "Cooper", "AirRobot", "Passarola", "Lisa", "QRIO", "Soryu")
POOL = WaterVolume((20.0, 20.0), (16.0, 16.0), 8.0, 0.0)


def vehicle_type_world() -> WorldSpec:
    """A floor with a pool and a start pose per vehicle type."""
    # the submarine is placed first, so it takes the first start: the pool's
    starts = [StartPose("Pool", (20.0, 20.0, 0.0))]
    starts += [StartPose(f"S{i}", (-15.0 + 6.0 * i, -10.0, 0.0)) for i in range(1, len(VEHICLE_TYPES))]
    return WorldSpec(name="vehicle-types", description="bench", gps_origin=GpsOrigin(0.0, 0.0), start_poses=starts,
                     water=[POOL])


def _world(world: "str | WorldSpec") -> WorldSpec:
    return world if isinstance(world, WorldSpec) else load_world(world)


def fleet(n: int, classes: list[str] | None = None) -> list[RobotSpec]:
    """``n`` robots cycling through ``classes`` (default: the arena mix, then the rest of the catalogue)."""
    shipped = available_robots()
    names = classes or [c for c in MIX if c in shipped] or shipped
    specs = [load_robot(name) for name in names]
    movable = [s for s in specs if s.drive.type in ("skid", "differential", "tracked", "ackermann", "aerial", "nautic",
                                                     "blimp", "omni", "legged", "serpentine")]
    return [movable[i % len(movable)] for i in range(n)]


def ray_loads(spec: RobotSpec) -> list[RayLoad]:
    """The rays of each range sensor of ``spec`` with its configured parameters, as the sensors cast them."""
    loads = []
    for sensor in spec.sensors:
        if sensor.type not in RAY_SENSORS:
            continue
        prm = registry.params_for(sensor)
        interval = prm.scan_interval if prm.scan_interval > 0 else spec.msg_period
        period = max(1, round(interval * PHYSICS_RATE))
        if sensor.type in ("RangeScanner", "IRScanner"):
            angles = -prm.fov / 2.0 + prm.resolution * np.arange(beam_count(prm.fov, prm.resolution))
            flat = np.zeros_like(angles)
            local = (np.stack([np.cos(angles), flat, np.sin(angles)], axis=1) if prm.pitch_plane
                     else np.stack([np.cos(angles), np.sin(angles), flat], axis=1))
        elif sensor.type == "Sonar":
            local = cone_directions(prm.beam_angle, prm.vertical_beam_angle)
        elif sensor.type == "GPS":  # sky rays toward satellites (16, a typical constellation above 5 deg)
            azimuth = np.linspace(0.0, 2.0 * math.pi, 16, endpoint=False)
            local = np.stack([0.7 * np.cos(azimuth), 0.7 * np.sin(azimuth), np.full(16, 0.7)], axis=1)
        elif sensor.type == "IR":
            local = np.array([[1.0, 0.0, 0.0]])
        else:  # victim sensor and 3-D scanners: a ray grid over the field of view
            local = grid_directions(prm)[0]
        position, rotation = mount_in_chassis(spec, sensor.mount)
        length = getattr(prm, "max_range", getattr(prm, "distance", 1000.0))
        loads.append(RayLoad(local @ rotation.T, position, length, period))
    return loads


def mount_in_chassis(spec: RobotSpec, mount) -> tuple[np.ndarray, np.ndarray]:
    """Position and rotation of a mount in the chassis frame, following its parent links at rest."""
    links = {link.name: link for link in spec.body.links}
    position, rotation = np.array(mount.xyz, dtype=float), rotations.rotation_matrix(rotations.quaternion_from_euler(mount.rpy))
    parent = mount.parent
    while parent in links:
        link = links[parent]
        link_rotation = rotations.rotation_matrix(rotations.quaternion_from_euler(link.rpy))
        position = np.array(link.xyz) + link_rotation @ position
        rotation = link_rotation @ rotation
        parent = link.parent
    return position, rotation


def positions(world: "str | WorldSpec", classes: list[str]) -> list[tuple[float, float, float]]:
    """Where each robot of ``classes`` stands: the world's start poses, then the nearest free spots
    on a 1.2 m grid around them, each checked by spawning it in a probe simulation (so no robot
    starts inside a wall or another robot, whatever the arena's layout)."""
    with Simulator(world, physics_rate=PHYSICS_RATE, seed=1, pacing="lockstep") as probe:
        starts = [s.xyz for s in probe.spec.start_poses]
        offsets = sorted(((i, j) for i in range(-8, 9) for j in range(-8, 9)), key=lambda ij: (ij[0] ** 2 + ij[1] ** 2, ij))
        candidates = [(x + 1.2 * i, y + 1.2 * j, z) for i, j in offsets for x, y, z in starts]
        out: list[tuple[float, float, float]] = []
        for k, class_name in enumerate(classes):
            while candidates:
                try:
                    robot = probe.spawn(class_name, f"R{k}", position=candidates.pop(0))
                except CommandError:
                    continue
                out.append(tuple(float(c) for c in robot.base.position))
                break
            else:
                raise SystemExit(f"{world}: no free spot left for robot {k} ({class_name})")
    return out


def drive_command(name: str, spec: RobotSpec):
    """A gentle command that keeps every kind of robot busy."""
    if spec.drive.type == "aerial":
        return AerialDrive(name, linear=0.5, lateral=0.0, altitude=0.2, yaw_rate=0.1)
    if spec.drive.type == "ackermann":
        return AckermannDrive(name, 2.0, front_steer=0.1)
    if spec.drive.type == "nautic":
        return NauticDrive(name, propeller=3.0, rudder=0.1)
    if spec.drive.type == "blimp":
        return BlimpDrive(name, xz_angle=0.3, thrust=0.5, yaw_rate=0.1)
    if spec.drive.type == "omni":
        return OmniDrive(name, ((0, 2.0, 0.3), (1, 2.0, 0.3)))
    if spec.drive.type == "legged":
        return JointTargets(name, {spec.joint_groups[-1].links[0].joint: 0.3})
    return WheelDrive(name, 2.0, 1.6)


def motor_joints(spec: RobotSpec) -> list[str]:
    """The wheel joints a drive command turns."""
    return list(dict.fromkeys(spec.drive.left_wheels + spec.drive.right_wheels + spec.drive.powered_wheels))


def run_simulator(world: "str | WorldSpec", specs: list[RobotSpec], ticks: int) -> tuple[float, float]:
    """(wall-clock, CPU-time) steps/s of the full simulator."""
    with Simulator(world, physics_rate=PHYSICS_RATE, seed=1, pacing="lockstep") as sim:
        for i, (spec, xyz) in enumerate(zip(specs, positions(world, [s.class_name for s in specs]))):
            robot = sim.spawn(spec.class_name, f"R{i}", position=xyz)
            sim.submit(drive_command(robot.name, spec))
        sim.step(100)
        start, cpu = time.perf_counter(), time.process_time()
        sim.step(ticks)
        return ticks / (time.perf_counter() - start), ticks / (time.process_time() - cpu)


def raw_motors(client: int, body: int, joints: dict[str, int], spec: RobotSpec) -> None:
    """The motor and contact settings the simulator gives a robot, and ``drive_command``'s motion."""
    d = spec.drive
    solve_touching_contacts_only(client, body)
    for name in motor_joints(spec):
        p.changeDynamics(body, joints[name], lateralFriction=spec.body.wheel_friction,
                         spinningFriction=spec.body.spinning_friction, rollingFriction=0.0, physicsClientId=client)
    held = {link.joint: link for g in spec.joint_groups for link in g.links}
    steer = set(d.front_steer_joints + d.rear_steer_joints + d.steer_joints)
    for name, j in joints.items():
        if name in held:
            link = held[name]
            p.setJointMotorControl2(body, j, p.POSITION_CONTROL, targetPosition=link.initial, maxVelocity=link.max_speed,
                                    force=link.max_torque, physicsClientId=client)
        elif name in steer:
            p.setJointMotorControl2(body, j, p.POSITION_CONTROL, targetPosition=0.1, maxVelocity=1.5,
                                    force=4 * d.max_torque, physicsClientId=client)
        elif name not in motor_joints(spec):
            p.setJointMotorControl2(body, j, p.VELOCITY_CONTROL, force=0.0, physicsClientId=client)
    if d.type == "ackermann":
        powered = [joints[w] for w in (d.powered_wheels or motor_joints(spec))]
        p.setJointMotorControlArray(body, powered, p.VELOCITY_CONTROL, targetVelocities=[2.0] * len(powered),
                                    forces=[d.max_torque] * len(powered), physicsClientId=client)
        free = [joints[w] for w in motor_joints(spec) if joints[w] not in powered]
        for j in free:
            p.setJointMotorControl2(body, j, p.VELOCITY_CONTROL, force=0.0, physicsClientId=client)
    elif d.type == "omni":
        powered = [joints[w] for w in d.steered_wheels]
        p.setJointMotorControlArray(body, powered, p.VELOCITY_CONTROL, targetVelocities=[2.0] * len(powered),
                                    forces=[d.max_torque] * len(powered), physicsClientId=client)
    elif d.left_wheels:
        left, right = [joints[w] for w in d.left_wheels], [joints[w] for w in d.right_wheels]
        p.setJointMotorControlArray(body, left + right, p.VELOCITY_CONTROL,
                                    targetVelocities=[2.0] * len(left) + [1.6] * len(right),
                                    forces=[d.max_torque] * (len(left) + len(right)), physicsClientId=client)
    if d.type in ("aerial", "nautic", "blimp"):
        for j in [-1, *joints.values()]:
            p.changeDynamics(body, j, linearDamping=0.0, angularDamping=0.0, physicsClientId=client)


def fluid_calls(spec: RobotSpec) -> tuple[int, int]:
    """(wet shapes, wet shapes on jointed links) of a robot the fluid model acts on: one force and
    torque per shape each tick, and the two link-state reads a jointed link's motion takes."""
    if spec.drive.type not in ("nautic", "blimp"):
        return 0, 0
    body = spec.body
    jointed = len(body.wheels) + sum(1 for link in body.links if link.shape != "none" and link.joint_type != "fixed")
    return 1 + len(body.wheels) + sum(1 for link in body.links if link.shape != "none"), jointed


def run_raw(world: "str | WorldSpec", specs: list[RobotSpec], ticks: int) -> tuple[float, float]:
    """(wall-clock, CPU-time) steps/s of hand-written PyBullet code doing the same physics and ray queries."""
    from usarsim.sim.world import build_world

    with quiet_stdout():
        client = p.connect(p.DIRECT)
    p.setGravity(0, 0, -9.81, physicsClientId=client)
    p.setTimeStep(1.0 / PHYSICS_RATE, physicsClientId=client)
    p.setPhysicsEngineParameter(numSolverIterations=SOLVER_ITERATIONS, enableConeFriction=0, physicsClientId=client)
    built = build_world(client, _world(world))
    bodies, loads = [], []
    for spec, xyz in zip(specs, positions(world, [s.class_name for s in specs])):
        with quiet_stdout():
            body = p.loadURDF(str(spec.urdf_path), (xyz[0], xyz[1], spawn_height(spec, xyz[2])),
                              flags=URDF_FLAGS, physicsClientId=client)
        joints = {p.getJointInfo(body, j, physicsClientId=client)[1].decode(): j
                  for j in range(p.getNumJoints(body, physicsClientId=client))}
        wheels = [joints[w] for w in motor_joints(spec) if w in joints]
        raw_motors(client, body, joints, spec)
        aerial = spec.drive.type in ("aerial", "blimp", "nautic")
        mass = sum(p.getDynamicsInfo(body, j, physicsClientId=client)[0] for j in range(-1, len(joints))) if aerial else 0.0
        # drives that read the chassis state every tick: rotorcraft/blimp/submarine controllers, yaw-rate loops
        controlled = aerial or issubclass(DRIVES.get(spec.drive.type), SkidSteerDrive)
        bodies.append((body, wheels, mass, controlled, fluid_calls(spec)))
        loads.append(ray_loads(spec))
    for _ in range(100):
        p.stepSimulation(physicsClientId=client)
    start, cpu = time.perf_counter(), time.process_time()
    for tick in range(1, ticks + 1):
        p.stepSimulation(physicsClientId=client)
        built.update(tick / PHYSICS_RATE)
        for (body, wheels, mass, controlled, (shapes, jointed)), robot_loads in zip(bodies, loads):
            if controlled:  # the drive controller's state query, every tick
                pos, _ = p.getBasePositionAndOrientation(body, physicsClientId=client)
                p.getBaseVelocity(body, physicsClientId=client)
            if mass:  # rotorcraft, blimp, submarine: thrust, every tick
                p.applyExternalForce(body, -1, (0.0, 0.0, 9.81 * mass), pos, p.WORLD_FRAME, physicsClientId=client)
                p.applyExternalTorque(body, -1, (0.0, 0.0, 0.0), p.WORLD_FRAME, physicsClientId=client)
                if shapes:  # the blimp's and submarine's drives apply a second force (lift, hull drag)
                    p.applyExternalForce(body, -1, (0.0, 0.0, 0.0), pos, p.WORLD_FRAME, physicsClientId=client)
            for _ in range(shapes):  # fluid forces: one force and torque per wet shape
                p.applyExternalForce(body, -1, (0.0, 0.0, 0.0), pos, p.WORLD_FRAME, physicsClientId=client)
                p.applyExternalTorque(body, -1, (0.0, 0.0, 0.0), p.WORLD_FRAME, physicsClientId=client)
            for _ in range(jointed):  # a jointed link's pose and velocity
                p.getLinkState(body, 0, computeForwardKinematics=True, physicsClientId=client)
                p.getLinkState(body, 0, computeLinkVelocity=1, physicsClientId=client)
            if tick % 10 == 0:  # odometry / INS / state at 20 Hz
                p.getBasePositionAndOrientation(body, physicsClientId=client)
                p.getBaseVelocity(body, physicsClientId=client)
                if wheels:
                    p.getJointStates(body, wheels, physicsClientId=client)
            for load in robot_loads:
                if tick % load.period == 0:
                    pos, orn = p.getBasePositionAndOrientation(body, physicsClientId=client)
                    rot = np.array(p.getMatrixFromQuaternion(orn)).reshape(3, 3)
                    origin = np.array(pos) + rot @ load.origin
                    dirs = load.directions @ rot.T
                    p.rayTestBatch((origin + dirs * 0.01).tolist(), (origin + dirs * load.length).tolist(),
                                   numThreads=threads_for(load.rays), physicsClientId=client)
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    p.disconnect(physicsClientId=client)
    return ticks / elapsed, ticks / cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--world", default="orange")
    parser.add_argument("--robots", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=10.0, help="sim seconds per run")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--classes", default="", help="comma-separated robot classes to cycle through")
    parser.add_argument("--vehicle-types", action="store_true", help="one robot of each vehicle type, with a pool")
    args = parser.parse_args()
    world: str | WorldSpec = args.world
    if args.vehicle_types:
        world, specs = vehicle_type_world(), [load_robot(c) for c in VEHICLE_TYPES]
    else:
        specs = fleet(args.robots, [c for c in args.classes.split(",") if c] or None)
    ticks = round(args.seconds * PHYSICS_RATE)
    raw, full = [], []
    for _ in range(args.repeat):  # interleaved so both see the same machine load
        raw.append(run_raw(world, specs, ticks))
        full.append(run_simulator(world, specs, ticks))
    raw_wall, sim_wall = max(r[0] for r in raw), max(r[0] for r in full)
    raw_cpu, sim_cpu = max(r[1] for r in raw), max(r[1] for r in full)
    print(f"world={_world(world).name} robots={', '.join(s.class_name for s in specs)}")
    print(f"physics={PHYSICS_RATE:.0f} Hz  sim seconds per run={args.seconds}  best of {args.repeat}")
    # CPU-time rates are what one core delivers; wall-clock rates also show load from other processes.
    for label, rw, sm in (("wall-clock", raw_wall, sim_wall), ("CPU time", raw_cpu, sim_cpu)):
        print(f"{label:10s} raw PyBullet : {rw:8.0f} steps/s  (real-time factor {rw / PHYSICS_RATE:5.2f}x)")
        print(f"{label:10s} simulator    : {sm:8.0f} steps/s  (real-time factor {sm / PHYSICS_RATE:5.2f}x)")
        print(f"{label:10s} ratio simulator/raw: {sm / rw:.2f}")

if __name__ == "__main__":
    main()
