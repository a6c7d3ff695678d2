"""Benchmark: a mixed fleet of robots with their default sensors in one arena.

Prints the simulator's real-time factor with N robots (default 8, cycling through
the catalogue's ground and aerial robots) and the ratio against raw PyBullet doing
the same work in the same run: the same world and URDFs, the same wheel motors,
and the same number of rays per range sensor at the same rates (laser scans,
sonar/IR cones, GPS sky rays), plus the state queries odometry and INS need.
Cameras are off in both (they render only when a client asks for images).

    .venv/bin/python bench/fleet.py [--world orange] [--robots 8] [--seconds 10]
"""
from __future__ import annotations

import argparse
import math
import time
from dataclasses import dataclass

import numpy as np
import pybullet as p

from usarsim import frames
from usarsim.sim.catalogue import RobotSpec, available_robots, load_robot
from usarsim.sim.commands import AerialDrive, WheelDrive
from usarsim.sim.quiet import quiet_stdout
from usarsim.sim.robot import spawn_height
from usarsim.sim.sensors import registry
from usarsim.sim.sensors.range import cone_directions
from usarsim.sim.simulator import SOLVER_ITERATIONS, Simulator
from usarsim.sim.world import load_world

PHYSICS_RATE = 200.0
RAY_SENSORS = ("RangeScanner", "IRScanner", "Sonar", "IR", "GPS", "RangeScanner3D", "RangeImager")


@dataclass
class RayLoad:
    """One range sensor's ray cost: rays per scan, length, ticks between scans."""

    rays: int
    length: float
    period: int


def fleet(n: int) -> list[RobotSpec]:
    """``n`` robots cycling through the catalogue (legged and static ones left out)."""
    specs = [load_robot(name) for name in available_robots()]
    movable = [s for s in specs if s.drive.type in ("skid", "differential", "ackermann", "aerial")]
    return [movable[i % len(movable)] for i in range(n)]


def ray_loads(spec: RobotSpec) -> list[RayLoad]:
    """The ray cost of each range sensor of ``spec`` with its configured parameters."""
    loads = []
    for sensor in spec.sensors:
        if sensor.type not in RAY_SENSORS:
            continue
        prm = registry.params_for(sensor)
        interval = prm.scan_interval if prm.scan_interval > 0 else spec.msg_period
        period = max(1, round(interval * PHYSICS_RATE))
        if sensor.type in ("RangeScanner", "IRScanner"):
            rays = int(math.floor(prm.fov / prm.resolution + 1e-9)) + 1
        elif sensor.type == "Sonar":
            rays = len(cone_directions(prm.beam_angle, prm.vertical_beam_angle))
        elif sensor.type == "GPS":
            rays = 16
        elif sensor.type == "IR":
            rays = 1
        else:
            rays = getattr(prm, "columns", 181) * getattr(prm, "rows", 16)
        loads.append(RayLoad(rays, getattr(prm, "max_range", 1000.0), period))
    return loads


def positions(world: str, n: int) -> list[tuple[float, float, float]]:
    """Spawn points: the world's start poses, then a grid beside the first one."""
    starts = [s.xyz for s in load_world(world).start_poses]
    out = list(starts[:n])
    x0, y0, z0 = starts[0]
    k = 0
    while len(out) < n:
        out.append((x0 + 1.2 * (k % 3), y0 + 1.2 * (k // 3 + 1), z0))
        k += 1
    return out


def drive_command(name: str, spec: RobotSpec):
    """A gentle command that keeps every kind of robot busy."""
    if spec.drive.type == "aerial":
        return AerialDrive(name, linear=0.5, lateral=0.0, altitude=0.2, yaw_rate=0.1)
    return WheelDrive(name, 2.0, 1.6)


def run_simulator(world: str, specs: list[RobotSpec], ticks: int) -> float:
    """Steps/s of the full simulator."""
    with Simulator(world, physics_rate=PHYSICS_RATE, seed=1, pacing="lockstep") as sim:
        for i, (spec, xyz) in enumerate(zip(specs, positions(world, len(specs)))):
            robot = sim.spawn(spec.class_name, f"R{i}", position=xyz)
            sim.submit(drive_command(robot.name, spec))
        sim.step(100)
        start = time.perf_counter()
        sim.step(ticks)
        return ticks / (time.perf_counter() - start)


def run_raw(world: str, specs: list[RobotSpec], ticks: int) -> float:
    """Steps/s of hand-written PyBullet code doing the same physics and ray queries."""
    from usarsim.sim.world import build_world

    with quiet_stdout():
        client = p.connect(p.DIRECT)
    p.setGravity(0, 0, -9.81, physicsClientId=client)
    p.setTimeStep(1.0 / PHYSICS_RATE, physicsClientId=client)
    p.setPhysicsEngineParameter(numSolverIterations=SOLVER_ITERATIONS, physicsClientId=client)
    built = build_world(client, load_world(world))
    bodies, loads = [], []
    for spec, xyz in zip(specs, positions(world, len(specs))):
        with quiet_stdout():
            body = p.loadURDF(str(spec.urdf_path), (xyz[0], xyz[1], spawn_height(spec, xyz[2])),
                              flags=p.URDF_USE_INERTIA_FROM_FILE | p.URDF_MERGE_FIXED_LINKS, physicsClientId=client)
        joints = {p.getJointInfo(body, j, physicsClientId=client)[1].decode(): j
                  for j in range(p.getNumJoints(body, physicsClientId=client))}
        wheels = [joints[w] for w in spec.drive.left_wheels + spec.drive.right_wheels if w in joints]
        if wheels:
            p.setJointMotorControlArray(body, wheels, p.VELOCITY_CONTROL, targetVelocities=[2.0] * len(wheels),
                                        forces=[spec.drive.max_torque] * len(wheels), physicsClientId=client)
        bodies.append((body, wheels))
        loads.append(ray_loads(spec))
    rng = np.random.default_rng(0)
    directions = {n: rng.normal(size=(n, 3)) for n in {l.rays for ls in loads for l in ls}}
    for d in directions.values():
        d /= np.linalg.norm(d, axis=1, keepdims=True)
    for _ in range(100):
        p.stepSimulation(physicsClientId=client)
    start = time.perf_counter()
    for tick in range(1, ticks + 1):
        p.stepSimulation(physicsClientId=client)
        built.update(tick / PHYSICS_RATE)
        for (body, wheels), robot_loads in zip(bodies, loads):
            if tick % 10 == 0:  # odometry / INS / state at 20 Hz
                p.getBasePositionAndOrientation(body, physicsClientId=client)
                p.getBaseVelocity(body, physicsClientId=client)
                if wheels:
                    p.getJointStates(body, wheels, physicsClientId=client)
            for load in robot_loads:
                if tick % load.period == 0:
                    pos, _ = p.getBasePositionAndOrientation(body, physicsClientId=client)
                    origin = np.array(pos) + [0.0, 0.0, 0.3]
                    dirs = directions[load.rays]
                    p.rayTestBatch((origin + dirs * 0.01).tolist(), (origin + dirs * load.length).tolist(),
                                   physicsClientId=client)
    elapsed = time.perf_counter() - start
    p.disconnect(physicsClientId=client)
    return ticks / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--world", default="orange")
    parser.add_argument("--robots", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=10.0, help="sim seconds per run")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    specs = fleet(args.robots)
    ticks = round(args.seconds * PHYSICS_RATE)
    raw, full = [], []
    for _ in range(args.repeat):  # interleaved so both see the same machine load
        raw.append(run_raw(args.world, specs, ticks))
        full.append(run_simulator(args.world, specs, ticks))
    raw_rate, sim_rate = max(raw), max(full)
    print(f"world={args.world} robots={', '.join(s.class_name for s in specs)}")
    print(f"physics={PHYSICS_RATE:.0f} Hz  sim seconds per run={args.seconds}  best of {args.repeat}")
    print(f"raw PyBullet : {raw_rate:8.0f} steps/s  (real-time factor {raw_rate / PHYSICS_RATE:5.2f}x)")
    print(f"simulator    : {sim_rate:8.0f} steps/s  (real-time factor {sim_rate / PHYSICS_RATE:5.2f}x)")
    print(f"ratio simulator/raw: {sim_rate / raw_rate:.2f}")


if __name__ == "__main__":
    main()
