"""Benchmark: worlds.

Prints, in one run (ratios are against raw PyBullet doing the same work in the same process,
so they hold on a loaded machine):

1. per shipped world: load time (parse, validate, build, textures) against raw PyBullet creating
   the same bodies (every static item and obstacle as a box of its size, the same height
   field, the floor), and physics steps per second with one P2AT (sensors included) against
   raw ``stepSimulation`` of the same scene;
2. camera frames per second at 320x240 and 640x480 in the yellow arena: textures + shadows +
   lighting against plain colours without shadows, and each against raw ``getCameraImage``;
3. arena generation time (``usarsim arena``) for 20 x 20 m at each difficulty.

    .venv/bin/python bench/worlds.py [--seconds 1.0]
"""
from __future__ import annotations

import argparse
import math
import tempfile
import time
from pathlib import Path

import numpy as np

from usarsim.sim.sensors.camera import Camera, vertical_fov
from usarsim.sim.simulator import Simulator
from usarsim.sim.terrain import load_heights
from usarsim.sim.world import WorldSpec, available_worlds, build_world, load_world
from usarsim.worldgen.arena import DIFFICULTIES, generate

import pybullet as p  # noqa: E402,I001  (after usarsim.sim, which silences its import banner)


def raw_build(client: int, spec: WorldSpec, heights: np.ndarray | None) -> None:
    """The same bodies straight into PyBullet: boxes of each item's size, the same height field."""
    def box(xyz, size, mass=0.0):
        half = [max(s, 0.01) / 2 for s in size]
        col = p.createCollisionShape(p.GEOM_BOX, halfExtents=half, physicsClientId=client)
        vis = p.createVisualShape(p.GEOM_BOX, halfExtents=half, physicsClientId=client)
        p.createMultiBody(mass, col, vis, xyz, physicsClientId=client)
    box((spec.floor.center[0], spec.floor.center[1], spec.floor.z - 0.05), (*spec.floor.size, 0.1))
    for item in spec.static:
        box(item.xyz, item.size)
    for obstacle in spec.obstacles:
        box(obstacle.xyz, obstacle.size, obstacle.mass)
    if heights is not None and spec.terrain is not None:
        rows, cols = heights.shape
        shape = p.createCollisionShape(p.GEOM_HEIGHTFIELD, meshScale=(1, 1, 1), heightfieldData=heights.ravel().tolist(),
                                       numHeightfieldRows=rows, numHeightfieldColumns=cols, physicsClientId=client)
        p.createMultiBody(0, shape, -1, (0, 0, 0), physicsClientId=client)


def timed(fn, repeat: int = 3) -> float:
    best = math.inf
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def load_times(name: str) -> tuple[float, float]:
    spec = load_world(name)
    heights = load_heights(spec.terrain, Path(spec.source).parent, name) if spec.terrain else None

    def ours():
        client = p.connect(p.DIRECT)
        build_world(client, load_world(name))
        p.disconnect(client)

    def raw():
        client = p.connect(p.DIRECT)
        raw_build(client, spec, heights)
        p.disconnect(client)
    return timed(ours), timed(raw)


def step_rates(name: str, seconds: float) -> tuple[float, float]:
    with Simulator(name, pacing="lockstep", physics_rate=200.0) as sim:
        sim.spawn("P2AT", "R1", start=sim.spec.start_poses[0].tag)
        sim.step(50)
        count, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            sim.step(20)
            count += 20
        ours = count / (time.perf_counter() - start)
        count, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            for _ in range(20):
                p.stepSimulation(physicsClientId=sim.client)
            count += 20
        return ours, count / (time.perf_counter() - start)


def camera_rates(width: int, height: int, looks: bool, seconds: float) -> tuple[float, float]:
    """(our camera's frames/s, raw getCameraImage frames/s of the same view) in yellow."""
    render = {"textures": looks, "shadows": looks}
    with Simulator("yellow", pacing="lockstep", render=render) as sim:
        robot = sim.spawn("P2AT", "R1", start="Start1")
        sim.step(10)
        camera = next(s for s in robot.sensors if isinstance(s, Camera))
        camera.params.width, camera.params.height = width, height
        count, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            camera.render()
            count += 1
        ours = count / (time.perf_counter() - start)
        eye, rot = robot.mount_pose(camera.spec.mount)
        view = p.computeViewMatrix(eye.tolist(), (eye + rot[:, 0]).tolist(), rot[:, 2].tolist())
        proj = p.computeProjectionMatrixFOV(math.degrees(vertical_fov(camera.fov, width, height)), width / height,
                                            0.02, 50.0)
        count, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            p.getCameraImage(width, height, view, proj, renderer=p.ER_TINY_RENDERER, flags=p.ER_NO_SEGMENTATION_MASK,
                             physicsClientId=sim.client)
            count += 1
        return ours, count / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="per measurement")
    args = parser.parse_args()

    print("world      load ms  raw ms  ratio | steps/s  raw steps/s  ratio")
    for name in available_worlds():
        ours, raw = load_times(name)
        steps, raw_steps = step_rates(name, args.seconds)
        print(f"{name:9s} {ours * 1e3:8.1f} {raw * 1e3:7.1f} {ours / raw:6.2f} | {steps:7.0f} {raw_steps:12.0f} "
              f"{raw_steps / steps:6.2f}")

    print("\ncamera (yellow)   looks fps  plain fps  looks/plain | raw fps  looks cost vs raw")
    for width, height in ((320, 240), (640, 480)):
        looks, raw = camera_rates(width, height, True, args.seconds)
        plain, _ = camera_rates(width, height, False, args.seconds)
        print(f"{width}x{height:<10d} {looks:9.1f} {plain:10.1f} {looks / plain:12.2f} | {raw:7.1f} {raw / looks:10.2f}")

    print("\narena generation, 20 x 20 m (incl. the path check on its occupancy map)")
    with tempfile.TemporaryDirectory() as tmp:
        for difficulty in DIFFICULTIES:
            seconds = timed(lambda d=difficulty: generate(1, 20.0, 20.0, d, Path(tmp) / "a.yaml"), repeat=2)
            print(f"  {difficulty:7s} {seconds * 1e3:7.0f} ms")


if __name__ == "__main__":
    main()
