"""Live-view bench (not a test): what the live view costs the simulator's thread, against raw PyBullet.

A lockstep world with one P2AT, the live view attached, and ``--points`` TRACE points filed
in one tick (what 300 s of TRACE leaves). Prints, as time and as raw ``stepSimulation`` calls
of the same world in the same run: the simulator-thread cost of a tick (filing only), and the
publisher thread's cost of one ``/trails`` update (built from the bounded history).

    .venv/bin/python bench/live.py [--points 13000]
"""
from __future__ import annotations

import argparse
import statistics
import time

import pybullet as p

from usarsim.live.trails import TRACE_LIMIT
from usarsim.live.view import LiveView
from usarsim.sim.readings import TracePoint
from usarsim.sim.simulator import Simulator


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--points", type=int, default=13000)
    args = parser.parse_args()
    sim = Simulator("empty", seed=0, pacing="lockstep")
    view = LiveView(port=0)
    try:
        robot = sim.spawn("P2AT")
        view.attach(sim)
        feed = view._feeds[-1]
        sim.step(1)
        trace = [TracePoint(time=0.0, robot=robot.name, sensor="Trace", frame="base_link",
                            position=(0.01 * i, 0.0, 0.0), color="Red", index=i) for i in range(args.points)]
        view._on_tick(feed, sim.time, trace)
        ticks, updates = [], []
        for _ in range(20):
            start = time.perf_counter()
            view._on_tick(feed, sim.time, [])
            ticks.append(time.perf_counter() - start)
            start = time.perf_counter()
            view._trail_update(feed, sim.time)
            updates.append(time.perf_counter() - start)
        start = time.perf_counter()
        for _ in range(500):
            p.stepSimulation(physicsClientId=sim.client)
        raw = (time.perf_counter() - start) / 500
    finally:
        view.stop()
        sim.close()
    tick, update = statistics.median(ticks), statistics.median(updates)
    print(f"{args.points} TRACE points filed ({min(args.points, TRACE_LIMIT)} kept); medians of 20:")
    print(f"  simulator thread, one tick:       {tick * 1000:8.3f} ms = {tick / raw:7.1f} raw PyBullet steps")
    print(f"  publisher thread, /trails update: {update * 1000:8.3f} ms = {update / raw:7.1f} raw PyBullet steps")
    print(f"  raw PyBullet step:                {raw * 1000:8.3f} ms")


if __name__ == "__main__":
    main()
