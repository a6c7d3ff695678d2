"""One trial of a sweep: a fresh lockstep simulator, one robot, its controller, its outputs.

``execute`` never raises for a failing trial: the summary says ``failed`` and carries the
error, the traceback goes to ``error.txt``. Outputs are written into a partial folder of this
attempt's own and renamed into place at the end (see trial_files), so a trial folder with a
``summary.json`` is complete and a killed sweep leaves only partial folders, which a resumed
sweep discards. The readings' hash is taken from the bytes as they are written.
"""
from __future__ import annotations

import contextlib
import json
import os
import socket
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from usarsim.runner import reading_lines
from usarsim.scale.controllers import ControlStep, as_commands, make_controller
from usarsim.scale.metrics import TrialMetrics, real_time_factor
from usarsim.scale.sweep_file import RecordSpec, TrialSpec
from usarsim.scale.trial_files import BAG, ERROR, READINGS, SUMMARY, HashedLines, new_partial, publish
from usarsim.sim.readings import Reading
from usarsim.sim.robot import Robot
from usarsim.sim.simulator import Simulator

# Called with the simulator once the robot is spawned (a live view attaches here); may return a
# per-control-step callback (the live view paces there).
Attach = Callable[[Simulator], Callable[[], None] | None]


@dataclass
class TrialResult:
    """A finished trial: its summary row, and its files when the worker had no shared folder to write to."""

    summary: dict[str, Any]
    files: dict[str, bytes] = field(default_factory=dict)
    ran_on: str = ""  # where it ran (host, process; a Ray node id on Ray): for logs and tests, not results


def execute(trial: TrialSpec, trials_dir: str | None, attach: Attach | None = None) -> TrialResult:
    """Run ``trial`` into ``trials_dir/<id>`` (or a temporary folder whose files come back in the result)."""
    import tempfile

    with contextlib.ExitStack() as stack:
        if trials_dir is None:
            root = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="usarsim-trial-")))
        else:
            root = Path(trials_dir)
        partial = new_partial(root, trial.trial_id)
        summary = _run_recorded(trial, partial, attach)
        (partial / SUMMARY).write_text(_summary_text(summary), encoding="utf-8")
        final = root / trial.trial_id
        publish(partial, final)
        files = {} if trials_dir is not None else {f.name: f.read_bytes() for f in sorted(final.iterdir())}
        return TrialResult(summary, files, ran_on=f"{socket.gethostname()}:{os.getpid()}")


def failed_result(trial: TrialSpec, message: str) -> TrialResult:
    """The result of a trial that could not report for itself (its process died), as files to store."""
    summary = {"trial": trial.trial_id, "world": trial.world, "robot": trial.robot, "seed": trial.seed,
               "status": "failed", "error": message}
    return TrialResult(summary, {SUMMARY: _summary_text(summary).encode(), ERROR: (message + "\n").encode()})


def _summary_text(summary: dict[str, Any]) -> str:
    return json.dumps(summary, indent=1, sort_keys=True) + "\n"


def _run_recorded(trial: TrialSpec, folder: Path, attach: Attach | None) -> dict[str, Any]:
    row: dict[str, Any] = {"trial": trial.trial_id, "world": trial.world, "robot": trial.robot, "seed": trial.seed}
    started = time.perf_counter()
    hashes: list[str] = []  # the readings' hash, once the file is closed
    try:
        row.update(status="ok", error="", **_simulate(trial, folder, attach, hashes))
    except Exception as exc:  # noqa: BLE001 - any failure of a trial is its result, never the sweep's end
        (folder / ERROR).write_text(traceback.format_exc(), encoding="utf-8")
        row.update(status="failed", error=f"{type(exc).__name__}: {exc}")
    wall = time.perf_counter() - started
    row["wall_time_s"] = round(wall, 4)
    row["real_time_factor"] = round(real_time_factor(row.get("sim_time_s", 0.0), wall), 3)
    if hashes:
        row["readings_sha256"] = hashes[0]
    return row


def _simulate(trial: TrialSpec, folder: Path, attach: Attach | None, hashes: list[str]) -> dict[str, Any]:
    sweep = trial.sweep
    controller = make_controller(sweep)
    sim = Simulator(trial.world_file, physics_rate=sweep.physics_rate, seed=trial.seed, pacing="lockstep")
    with contextlib.closing(sim), _outputs(sweep.record, folder, hashes) as (jsonl, bag_path):
        robot = sim.spawn(trial.robot, start=sweep.start)
        if sweep.record.cameras:
            for sensor in robot.sensors:
                if hasattr(sensor, "active"):
                    sensor.active = True
        metrics = TrialMetrics(sim, robot)
        sim.add_listener(metrics.on_tick)
        pending: list[Reading] = []
        sim.add_listener(lambda _now, readings: pending.extend(readings))
        with _bag(bag_path, sim, robot) as clock:
            paced = attach(sim) if attach is not None else None
            total = max(1, round(sweep.duration / sim.dt))
            chunk = max(1, round(sweep.control_period / sim.dt))
            while sim.ticks < total:
                step = ControlStep(sim.time, robot.name, robot.spec.class_name, trial.seed, tuple(pending))
                pending.clear()
                submitted = [sim.submit(c) for c in as_commands(controller(step), robot.name)]
                sim.step(min(chunk, total - sim.ticks))
                for future in submitted:  # applied at the first tick: a refused command fails the trial
                    future.result()
                metrics.sample()
                if jsonl is not None:
                    jsonl.writelines(line + "\n" for line in reading_lines(list(step.readings)))
                clock()
                if paced is not None:
                    paced()
            if jsonl is not None:
                jsonl.writelines(line + "\n" for line in reading_lines(pending))
        return {"sim_time_s": round(sim.time, 9), **metrics.summary()}


@contextlib.contextmanager
def _outputs(record: RecordSpec, folder: Path, hashes: list[str]) -> Iterator[tuple[HashedLines | None, Path | None]]:
    """The readings file (hashed as written, the hash appended to ``hashes`` at the end) and the bag's path."""
    if not record.readings:
        yield None, (folder / BAG if record.bag else None)
        return
    with open(folder / READINGS, "wb") as stream:
        jsonl = HashedLines(stream)
        try:
            yield jsonl, (folder / BAG if record.bag else None)
        finally:  # a failed trial's row still hashes what it wrote
            hashes.append(jsonl.hexdigest())


@contextlib.contextmanager
def _bag(path: Path | None, sim: Simulator, robot: Robot) -> Iterator[Callable[[], None]]:
    """Records the bag alongside, when asked; yields the per-control-step /clock writer."""
    if path is None:
        yield lambda: None
        return
    from usarsim.record import BagRecorder, open_bag

    with open_bag(path) as sink:
        recorder = BagRecorder(sink, sim, robot)
        recorder.start()
        yield recorder.clock
