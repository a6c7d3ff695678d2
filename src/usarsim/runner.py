"""Headless scenario runs: spawn one robot, drive it, write every reading as JSON lines."""
from __future__ import annotations

import json
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Callable, Iterator

from usarsim.sim.commands import SetTrace, WheelDrive
from usarsim.sim.readings import Reading
from usarsim.sim.simulator import Pacing, Simulator
from usarsim.sim.world import DEFAULT_WORLD


@dataclass
class Scenario:
    """What ``usarsim run`` does."""

    world: str = DEFAULT_WORLD
    robot: str = "P2AT"
    start: str | None = None
    seed: int = 0
    pacing: Pacing = "fast"
    duration: float = 10.0
    drive: tuple[float, float] = (0.0, 0.0)
    physics_rate: float = 200.0
    cameras: bool = False
    trace: tuple[float, str] | None = None  # path trace (interval s, colour), as TRACE
    noise: bool = True


def reading_lines(readings: list[Reading]) -> Iterator[str]:
    """One compact JSON object per reading."""
    for r in readings:
        yield json.dumps(r.to_dict(), separators=(",", ":"), allow_nan=False, default=str)


def run_scenario(scenario: Scenario, out: IO[str], progress: bool = False,
                 attach: Callable[[Simulator], object] | None = None, stop: threading.Event | None = None) -> int:
    """Run the scenario, writing JSONL to ``out``; returns the number of readings written.

    ``attach`` is called with the simulator once the robot is spawned (the live view hooks in there).
    Setting ``stop`` ends the run after the current 0.1 s of sim time; every line written is whole.
    """
    sim = Simulator(scenario.world, physics_rate=scenario.physics_rate, seed=scenario.seed, pacing=scenario.pacing,
                    noise=scenario.noise)
    try:
        robot = sim.spawn(scenario.robot, start=scenario.start)
        if attach is not None:
            attach(sim)
        if scenario.cameras:
            for sensor in robot.sensors:
                if hasattr(sensor, "active"):
                    sensor.active = True
        sim.submit(WheelDrive(robot.name, *scenario.drive))
        if scenario.trace is not None:
            sim.submit(SetTrace(robot.name, True, *scenario.trace))
        total_ticks = max(1, round(scenario.duration / sim.dt))
        bar = _progress_bar(total_ticks, progress)
        written = 0
        chunk = max(1, round(0.1 / sim.dt))
        done = 0
        pacer = Pacer(scenario.pacing)
        while done < total_ticks and not (stop is not None and stop.is_set()):
            n = min(chunk, total_ticks - done)
            readings = sim.step(n)
            done += n
            for line in reading_lines(readings):
                out.write(line + "\n")
                written += 1
            pacer.wait_until(sim.time)
            if bar is not None:
                bar.update(n)
        if bar is not None:
            bar.close()
        return written
    finally:
        sim.close()


class Pacer:
    """Sleeps so that sim time tracks wall time in realtime pacing."""

    def __init__(self, pacing: str) -> None:
        import time

        self._time = time
        self._realtime = pacing == "realtime"
        self._start = time.monotonic()

    def wait_until(self, sim_time: float) -> None:
        if self._realtime:
            ahead = sim_time - (self._time.monotonic() - self._start)
            if ahead > 0:
                self._time.sleep(ahead)


def _progress_bar(total: int, enabled: bool):  # noqa: ANN202 - tqdm type is optional
    if not enabled or not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    return tqdm(total=total, unit="tick", desc="simulating", file=sys.stderr)


def open_output(path: str | None) -> IO[str]:
    """The JSONL destination, line-buffered (a killed run leaves only whole lines): a file, or stdout for None / '-'."""
    if path in (None, "-"):
        sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
        return sys.stdout
    folder = Path(path).parent
    if not folder.is_dir():
        # a mistyped folder would otherwise be created silently and the readings looked for elsewhere
        what = "is not a folder" if folder.exists() else "does not exist (create it first)"
        raise FileNotFoundError(f"cannot write {path}: {folder} {what}")
    return open(path, "w", encoding="utf-8", buffering=1)
