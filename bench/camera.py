"""Camera benchmark: the simulator's cameras vs raw ``getCameraImage`` of the same scene, same run.

For each renderer available (TinyRenderer always; EGL where PyBullet's EGL plugin loads, on
the GPU or else on Mesa's llvmpipe) and each scene, renders a robot's camera through the
simulator (``Camera.read``: mount pose, view and projection matrices, render, the finishing
passes - sky, lamps and headlight, water, noise - RGB bytes, the reading) and with raw
``getCameraImage`` given the very same view and projection matrices, renderer, world light,
shadows and flags, interleaved so both see the same load. Prints frames/s and the ratio.
The scenes:

- ``yellow``: the P2AT at Start1 (an indoor arena: its lamps are shaded per pixel), at
  320x240 and 640x480, then at 640x480 with the headlight on and with sensor noise on;
- ``hills``: the P2AT at Start1 over the textured terrain, 640x480;
- ``harbour``: the Submarine 2 m under the surface (the water's optics), 640x480;
- the OmniP2DX's omnidirectional camera (320x320) in ``yellow``: five renders at the
  mirror's focus, remapped to the mirror image, against the five raw calls.

    .venv/bin/python bench/camera.py [--frames 30]
"""
from __future__ import annotations

import argparse
import dataclasses
import math
import os
import time
from typing import Sequence

import numpy as np
import pybullet as p

from usarsim.sim.sensors.camera import Camera, vertical_fov
from usarsim.sim.sensors.omnicam import OmniCamera, face_views
from usarsim.sim.simulator import GPU_DEVICES, Simulator, egl_wanted

SIZES = ((320, 240), (640, 480))
VGA = (640, 480)
UNDERWATER = (8.0, 0.0, -2.5)  # harbour: 2 m below the surface, over the sea bed


def camera_of(sim: Simulator, robot_class: str = "P2AT", position: tuple[float, float, float] | None = None) -> Camera:
    robot = sim.spawn(robot_class, "R1", position=position)
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


def bench(sim: Simulator, camera: Camera, frames: int, sizes: Sequence[tuple[int, int]] = SIZES, label: str = "",
          **params: float) -> list[tuple[str, float, float]]:
    """(label, simulator frames/s, raw frames/s) per image size, with camera ``params`` changed."""
    out = []
    for width, height in sizes:
        camera.params = dataclasses.replace(camera.params, width=width, height=height, **params)
        view, projection = raw_matrices(camera)
        out.append((f"{sim.spec.name} {width}x{height}{label}",
                    *timed(sim, camera, [(width, height, view, projection)], frames)))
    return out


def bench_yellow(sim: Simulator, frames: int) -> list[tuple[str, float, float]]:
    """The P2AT in yellow: both sizes, then VGA with the headlight and with sensor noise."""
    camera = camera_of(sim)
    results = bench(sim, camera, frames)
    camera.robot.light_on = True
    results += bench(sim, camera, frames, (VGA,), " headlight on")
    camera.robot.light_on = False
    results += bench(sim, camera, frames, (VGA,), " noise on", read_noise=2.0, shot_noise=0.05)
    sim.remove("R1")
    return results


LIGHT_CHANGES = {"lightDirection": [1.0, 0.0, 0.3], "lightColor": [1.0, 0.2, 0.2], "lightAmbientCoeff": 0.9,
                 "lightDiffuseCoeff": 0.05, "lightSpecularCoeff": 0.9, "lightDistance": 2.0, "shadow": 0}


def light_parameters(sim: Simulator, camera: Camera) -> dict[str, float]:
    """How much each of ``getCameraImage``'s light keywords changes the camera's frame (mean
    absolute change of the 0..255 values) on this renderer: 0 means the renderer ignores it."""
    view, projection = raw_matrices(camera)
    settings = camera.render_settings(camera.robot.mount_pose(camera.spec.mount)[0])
    prm = camera.params

    def frame(**change: object) -> np.ndarray:
        rgba = p.getCameraImage(prm.width, prm.height, view, projection, **{**settings, **change},
                                physicsClientId=sim.client)[2]
        return np.asarray(rgba, dtype=float).reshape(prm.height, prm.width, 4)[..., :3]
    plain = frame()
    return {key: float(np.abs(frame(**{key: value}) - plain).mean()) for key, value in LIGHT_CHANGES.items()}


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
    args = parser.parse_args()
    print(f"{args.frames} frames per timing, best of 3; "
          f"the simulator's default renderer here: {'EGL' if egl_wanted('auto') else 'TinyRenderer'}")
    gpu = any(os.path.exists(device) for device in GPU_DEVICES)
    for egl in (False, True):
        label = ("EGL on GPU" if gpu else "EGL, no GPU (llvmpipe)") if egl else "TinyRenderer"
        results: list[tuple[str, float, float]] = []
        with Simulator("yellow", seed=1, render={"egl": egl}) as sim:
            if egl and not sim.env.render_options.get("egl"):
                print("EGL: not available on this machine")
                continue
            changes = light_parameters(sim, camera_of(sim))
            sim.remove("R1")
            print(f"{label}: change of the frame per light keyword (0 = ignored): "
                  + ", ".join(f"{key} {change:.1f}" for key, change in changes.items()))
            results += bench_yellow(sim, args.frames)
            results.append(bench_omni(sim, args.frames))
        with Simulator("hills", seed=1, render={"egl": egl}) as sim:
            results += bench(sim, camera_of(sim), args.frames, (VGA,))
        with Simulator("harbour", seed=1, render={"egl": egl}) as sim:
            results += bench(sim, camera_of(sim, "Submarine", UNDERWATER), args.frames, (VGA,), " under water")
        for scene, sim_rate, raw_rate in results:
            print(f"{label:22s} {scene:44s} simulator {sim_rate:7.1f} frames/s   raw {raw_rate:7.1f} frames/s"
                  f"   ratio {sim_rate / raw_rate:.2f}")


if __name__ == "__main__":
    main()
