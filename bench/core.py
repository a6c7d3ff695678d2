"""Core benchmark: the full simulator vs raw PyBullet doing the same work.

Both runs load the same world and the same P2AT URDF, drive the same wheel
motors and cast the same rays at the same rates: laser 181 beams at 10 Hz,
odometry and INS at 50 Hz, GPS (16 sky rays) at 1 Hz, robot state at 5 Hz; the raw
side also makes the two chassis queries the drive's yaw-rate loop makes every tick.
Prints steps/s of each, their ratio and the simulator's real-time factor.

    .venv/bin/python bench/core.py [--world yellow] [--seconds 20]
"""
from __future__ import annotations

import argparse
import dataclasses
import math
import time

import numpy as np
import pybullet as p

from fleet import raw_motors  # bench/ is on the path when this file runs
from usarsim import rotations
from usarsim.sim.catalogue import load_robot
from usarsim.sim.commands import WheelDrive
from usarsim.sim.quiet import quiet_stdout
from usarsim.sim.raycast import threads_for
from usarsim.sim.robot import spawn_height
from usarsim.sim.simulator import SOLVER_ITERATIONS, URDF_FLAGS, Simulator
from usarsim.sim.world import build_world, load_world

PHYSICS_RATE = 200.0
RATES = {"RangeScanner": 10.0, "Odometry": 50.0, "INS": 50.0, "GPS": 1.0}


def bench_spec():
    """P2AT with exactly the benchmark's sensor suite."""
    spec = load_robot("P2AT")
    sensors = []
    for s in spec.sensors:
        if s.type in RATES:
            params = dict(s.params, scan_interval=1.0 / RATES[s.type])
            sensors.append(dataclasses.replace(s, params=params))
    return dataclasses.replace(spec, sensors=sensors, ground_truth=False)


def run_simulator(world: str, ticks: int) -> float:
    """Steps/s of the full simulator."""
    import usarsim.sim.simulator as simulator_module

    spec = bench_spec()
    original = simulator_module.load_robot
    simulator_module.load_robot = lambda name: spec  # the bench suite instead of the catalogue's
    try:
        sim = Simulator(world, physics_rate=PHYSICS_RATE, seed=1, pacing="lockstep")
        robot = sim.spawn("P2AT")
    finally:
        simulator_module.load_robot = original
    sim.submit(WheelDrive(robot.name, 2.0, 1.6))
    sim.step(100)
    start = time.perf_counter()
    sim.step(ticks)
    elapsed = time.perf_counter() - start
    sim.close()
    return ticks / elapsed


def run_raw(world: str, ticks: int) -> float:
    """Steps/s of hand-written PyBullet code doing the same queries."""
    spec = bench_spec()
    client = p.connect(p.DIRECT)
    p.setGravity(0, 0, -9.81, physicsClientId=client)
    p.setTimeStep(1.0 / PHYSICS_RATE, physicsClientId=client)
    p.setPhysicsEngineParameter(numSolverIterations=SOLVER_ITERATIONS, enableConeFriction=0, physicsClientId=client)
    world_spec = load_world(world)
    world = build_world(client, world_spec)
    start_pose = world_spec.start_poses[0]
    base = (start_pose.xyz[0], start_pose.xyz[1], spawn_height(spec, start_pose.xyz[2]))
    with quiet_stdout():
        body = p.loadURDF(str(spec.urdf_path), base, rotations.quaternion_from_euler(start_pose.rpy),
                          flags=URDF_FLAGS, physicsClientId=client)
    joints = {p.getJointInfo(body, i, physicsClientId=client)[1].decode(): i
              for i in range(p.getNumJoints(body, physicsClientId=client))}
    wheels = [joints[j] for j in spec.drive.left_wheels + spec.drive.right_wheels]
    raw_motors(client, body, joints, spec)  # the simulator's contact and motor set-up, and the drive
    angles = -math.pi / 2 + 0.0174 * np.arange(181)
    laser_local = np.stack([np.cos(angles), np.sin(angles), np.zeros(181)], axis=1)
    sky = np.tile([0.3, 0.1, 0.95], (16, 1))
    laser_mount = np.array(next(s for s in spec.sensors if s.type == "RangeScanner").mount.xyz)
    period = {k: round(PHYSICS_RATE / v) for k, v in RATES.items()}
    moving = [i for i in range(p.getNumJoints(body, physicsClientId=client))]
    for _ in range(100):
        p.stepSimulation(physicsClientId=client)
    start = time.perf_counter()
    for tick in range(1, ticks + 1):
        p.stepSimulation(physicsClientId=client)
        world.update(tick / PHYSICS_RATE)  # animated victims, as the simulator does every tick
        p.getBasePositionAndOrientation(body, physicsClientId=client)  # the yaw-rate loop's reads
        p.getBaseVelocity(body, physicsClientId=client)
        if tick % period["INS"] == 0 or tick % period["RangeScanner"] == 0:
            pos, orn = p.getBasePositionAndOrientation(body, physicsClientId=client)
            p.getBaseVelocity(body, physicsClientId=client)
            rot = np.array(p.getMatrixFromQuaternion(orn)).reshape(3, 3)
        if tick % period["Odometry"] == 0:
            p.getJointStates(body, wheels[:1] + wheels[2:3], physicsClientId=client)
        if tick % period["RangeScanner"] == 0:
            origin = np.array(pos) + rot @ laser_mount
            dirs = laser_local @ rot.T
            p.rayTestBatch((origin + dirs * 0.01).tolist(), (origin + dirs * 20.0).tolist(),
                           numThreads=threads_for(181), physicsClientId=client)
        if tick % period["GPS"] == 0:
            p.rayTestBatch([pos] * 16, (np.array(pos) + sky * 1000).tolist(), numThreads=threads_for(16),
                           physicsClientId=client)
        if tick % 40 == 0:
            p.getJointStates(body, moving, physicsClientId=client)
    elapsed = time.perf_counter() - start
    p.disconnect(physicsClientId=client)
    return ticks / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--world", default="yellow")
    parser.add_argument("--seconds", type=float, default=20.0, help="sim seconds per run")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    ticks = round(args.seconds * PHYSICS_RATE)
    raw, full = [], []
    for _ in range(args.repeat):  # interleaved so both see the same machine load
        raw.append(run_raw(args.world, ticks))
        full.append(run_simulator(args.world, ticks))
    raw_rate, sim_rate = max(raw), max(full)
    print(f"world={args.world} physics={PHYSICS_RATE:.0f} Hz  sim seconds per run={args.seconds}  best of {args.repeat}")
    print(f"raw PyBullet : {raw_rate:9.0f} steps/s  (real-time factor {raw_rate / PHYSICS_RATE:6.1f}x)")
    print(f"simulator    : {sim_rate:9.0f} steps/s  (real-time factor {sim_rate / PHYSICS_RATE:6.1f}x)")
    print(f"ratio simulator/raw: {sim_rate / raw_rate:.2f}")


if __name__ == "__main__":
    main()
