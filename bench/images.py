"""Benchmark: the image server.

Prints, in one run:

1. camera frames per second one client receives over the image server (raw and
   JPEG "normal"), against raw PyBullet rendering the same 320x240 view in a loop
   in the same process (the ratio is what the simulator, encoding and the socket
   cost on top of the rendering itself);
2. connection churn: N image connections opened and closed while no camera robot
   exists, then the client threads still alive and the process's thread count
   before and after.

    .venv/bin/python bench/images.py [--seconds 5] [--churn 1000]
"""
from __future__ import annotations

import argparse
import math
import socket
import sys
import threading
import time
from pathlib import Path

from usarsim.protocol.image_server import ImageOptions, ImageServer
from usarsim.protocol.image_wire import HEADER, Encoding
from usarsim.sim.sensors.camera import Camera, vertical_fov
from usarsim.sim.simulator import Simulator

import pybullet as p  # noqa: E402,I001  (after usarsim.sim, which silences its import banner)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
from image_client import read_exactly  # noqa: E402  (the example client, an outside client's reader)


def raw_renders_per_second(seconds: float) -> float:
    """PyBullet alone: the robot camera's view rendered as fast as it goes."""
    with Simulator("yellow", pacing="lockstep") as sim:
        robot = sim.spawn("P2AT", "R1", start="Start1")
        sim.step(10)
        cam = next(s for s in robot.sensors if isinstance(s, Camera))
        eye, rot = robot.mount_pose(cam.spec.mount)
        view = p.computeViewMatrix(eye.tolist(), (eye + rot[:, 0]).tolist(), rot[:, 2].tolist())
        proj = p.computeProjectionMatrixFOV(math.degrees(vertical_fov(cam.fov, 320, 240)), 320 / 240, 0.02, 50.0)
        count, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            p.getCameraImage(320, 240, view, proj, renderer=p.ER_TINY_RENDERER,
                             flags=p.ER_NO_SEGMENTATION_MASK, physicsClientId=sim.client)
            count += 1
        return count / (time.perf_counter() - start)


def served_frames_per_second(seconds: float, encoding: Encoding) -> float:
    """One client asking for frames as fast as it can; the world runs as fast as it can."""
    sim = Simulator("yellow", pacing="fast")
    server = ImageServer(sim, port=0, options=ImageOptions(encoding=encoding, frame_rate=1000.0))
    try:
        sim.spawn("P2AT", "R1", start="Start1")
        server.start()
        sim.start()
        with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
            _read_frame(sock)  # the first frame waits for the camera to start rendering
            count, start = 0, time.perf_counter()
            while time.perf_counter() - start < seconds:
                sock.sendall(b"OK")
                _read_frame(sock)
                count += 1
            return count / (time.perf_counter() - start)
    finally:
        server.stop()
        sim.stop()
        sim.close()


def _read_frame(sock: socket.socket) -> None:
    # read as the example client does, without decoding the picture
    header = read_exactly(sock, HEADER.size)
    read_exactly(sock, HEADER.unpack(header)[1])


def churn(connections: int) -> tuple[int, int, int, int, float]:
    """(threads before, client threads after, threads after, refused, seconds) for open/close cycles."""
    sim = Simulator("empty", pacing="realtime")
    server = ImageServer(sim, port=0)
    server.start()
    sim.start()
    try:
        before = threading.active_count()
        start = time.perf_counter()
        for _ in range(connections):
            socket.create_connection(("127.0.0.1", server.port), timeout=10).close()
        deadline = time.monotonic() + 30
        while server.client_threads and time.monotonic() < deadline:
            time.sleep(0.05)
        return before, server.client_threads, threading.active_count(), server.refused, time.perf_counter() - start
    finally:
        server.stop()
        sim.stop()
        sim.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--churn", type=int, default=1000)
    args = parser.parse_args()

    raw = raw_renders_per_second(args.seconds)
    print(f"raw PyBullet 320x240 renders             {raw:7.1f} /s")
    for label, encoding in (("raw", Encoding(0)), ("JPEG normal", Encoding(3))):
        served = served_frames_per_second(args.seconds, encoding)
        print(f"image server frames, {label:12s}        {served:7.1f} /s   ratio to raw PyBullet {served / raw:.2f}")
    before, left, after, refused, took = churn(args.churn)
    print(f"{args.churn} connections opened and closed with no camera robot in {took:.1f} s "
          f"({refused} refused at the 16-client limit): client threads left {left}, "
          f"process threads {before} before, {after} after")


if __name__ == "__main__":
    main()
