"""Camera benchmark: the simulator's P2AT camera vs raw ``getCameraImage``, same run.

For each image size (320x240 and 640x480) and each renderer available (TinyRenderer
always; EGL where PyBullet's EGL plugin loads, on the GPU or else on Mesa's llvmpipe), renders the P2AT camera in ``yellow``
through the simulator (``Camera.read``: mount pose, view and projection matrices, render,
RGB bytes, the reading) and with raw ``getCameraImage`` given the very same view and
projection matrices, renderer, world light, shadows and flags, interleaved so both see the same
load. Prints frames/s and the ratio.
Then the same for the OmniP2DX's omnidirectional camera (320x320): the simulator's frame
(five renders at the mirror's focus, remapped to the mirror image) against the five raw
``getCameraImage`` calls with the same matrices and sizes.

    .venv/bin/python bench/camera.py [--frames 30] [--world yellow]
"""
from __future__ import annotations

import argparse
import dataclasses
import math
import os
import time

import pybullet as p

from usarsim.sim.sensors.camera import Camera, vertical_fov
from usarsim.sim.sensors.omnicam import OmniCamera, face_views
from usarsim.sim.simulator import GPU_DEVICES, Simulator, egl_wanted

SIZES = ((320, 240), (640, 480))


def camera_of(sim: Simulator) -> Camera:
    robot = sim.spawn("P2AT", "R1")
    sim.run_for(0.5)
    return next(s for s in robot.sensors if isinstance(s, Camera))


def raw_matrices(camera: Camera) -> tuple[list[float], list[float]]:
    """The view and projection matrices the camera renders with (computed once, as raw code would)."""
    prm = camera.params
    eye, rot = camera.robot.mount_pose(camera.spec.mount)
    view = p.computeViewMatrix(eye.tolist(), (eye + rot[:, 0]).tolist(), rot[:, 2].tolist())
    projection = p.computeProjectionMatrixFOV(math.degrees(vertical_fov(camera.fov, prm.width, prm.height)),
                                              prm.width / prm.height, prm.near, prm.far)
    return view, projection


def timed(sim: Simulator, camera: Camera, renders: list[tuple[int, int, list[float], list[float]]],
          frames: int, rounds: int = 3) -> tuple[float, float]:
    """(simulator frames/s, raw frames/s), best of ``rounds``: ``camera.read`` against the raw
    ``getCameraImage`` calls (width, height, view, projection) one frame needs, with the same
    renderer, light, shadows and flags as the camera's own (``Camera.render_settings``)."""
    settings = camera.render_settings(camera.robot.mount_pose(camera.spec.mount)[0])
    sim_best = raw_best = 0.0
    for _ in range(rounds):  # interleaved so both see the same machine load
        start = time.perf_counter()
        for _ in range(frames):
            for width, height, view, projection in renders:
                p.getCameraImage(width, height, view, projection, **settings, physicsClientId=sim.client)
        raw_best = max(raw_best, frames / (time.perf_counter() - start))
        start = time.perf_counter()
        for _ in range(frames):
            camera.read(sim.time)
        sim_best = max(sim_best, frames / (time.perf_counter() - start))
    return sim_best, raw_best


def bench(sim: Simulator, camera: Camera, frames: int) -> list[tuple[str, float, float]]:
    """(size label, simulator frames/s, raw frames/s) per image size."""
    out = []
    for width, height in SIZES:
        camera.params = dataclasses.replace(camera.params, width=width, height=height)
        view, projection = raw_matrices(camera)
        out.append((f"{width}x{height}", *timed(sim, camera, [(width, height, view, projection)], frames)))
    return out


def bench_omni(sim: Simulator, frames: int) -> tuple[str, float, float]:
    """(label, simulator frames/s, raw frames/s) of the OmniP2DX's omnidirectional camera."""
    robot = sim.spawn("OmniP2DX", "O1", start=sim.spec.start_poses[0].tag)
    sim.run_for(0.3)
    omni = next(s for s in robot.sensors if isinstance(s, OmniCamera))
    eye, rot = robot.mount_pose(omni.spec.mount)
    renders = [(w, h, p.computeViewMatrix(eye.tolist(), (eye + rot @ f).tolist(), (rot @ u).tolist()), projection)
               for f, u, w, h, projection in face_views(omni)]
    prm = omni.params
    label = f"omni {prm.width}x{prm.height} ({len(renders)} renders, {sum(w * h for w, h, *_ in renders)} px)"
    return (label, *timed(sim, omni, renders, frames))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--frames", type=int, default=30)
    parser.add_argument("--world", default="yellow")
    args = parser.parse_args()
    print(f"P2AT camera in {args.world}, {args.frames} frames per timing, best of 3; "
          f"the simulator's default renderer here: {'EGL' if egl_wanted('auto') else 'TinyRenderer'}")
    gpu = any(os.path.exists(device) for device in GPU_DEVICES)
    for egl in (False, True):
        with Simulator(args.world, seed=1, render={"egl": egl}) as sim:
            if egl and not sim.env.render_options.get("egl"):
                print("EGL: not available on this machine")
                continue
            camera = camera_of(sim)
            label = ("EGL on GPU" if gpu else "EGL, no GPU (llvmpipe)") if egl else "TinyRenderer"
            results = bench(sim, camera, args.frames)
            sim.remove("R1")
            results.append(bench_omni(sim, args.frames))
            for size, sim_rate, raw_rate in results:
                print(f"{label:22s} {size:40s} simulator {sim_rate:7.1f} frames/s   raw {raw_rate:7.1f} frames/s"
                      f"   ratio {sim_rate / raw_rate:.2f}")


if __name__ == "__main__":
    main()
