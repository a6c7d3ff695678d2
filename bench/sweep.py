"""Sweep benchmark: trials per minute on 1 worker and on every core, parallel efficiency, and the
sweep machinery's overhead against running the same trials with bare ``usarsim run``, one after another.

The grid is 2 worlds x 2 robots x N seeds of D sim seconds each, driven at constant wheel speeds,
readings recorded as JSON lines in both cases. Every figure is measured in this run on this
machine, the fastest of ``--repeat`` runs each (the least disturbed by other load). "Cores busy"
is the workers' CPU time per wall second: well below the worker count means other load had the
machine.

    .venv/bin/python bench/sweep.py [--seeds 2] [--duration 5] [--ray-nodes 2]
"""
from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from usarsim.scale.executors import default_workers
from usarsim.scale.sweep import SweepOptions, run_sweep
from usarsim.scale.sweep_file import load_sweep, trials

WORLDS = ("yellow", "orange")
ROBOTS = ("P2AT", "P2DX")
DRIVE = (2.0, 1.5)


def sweep_file(folder: Path, seeds: int, duration: float) -> Path:
    path = folder / "bench.yaml"
    path.write_text(f"name: bench\nworlds: [{', '.join(WORLDS)}]\nrobots: [{', '.join(ROBOTS)}]\n"
                    f"seeds: [{', '.join(map(str, range(seeds)))}]\nduration: {duration}\n"
                    f"drive: [{DRIVE[0]}, {DRIVE[1]}]\n")
    return path


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


BUSY: dict[int, float] = {}  # workers -> most cores the workers kept busy (CPU seconds per wall second)


def timed_sweep(path: Path, output: Path, workers: int) -> float:
    start, cpu = time.perf_counter(), children_cpu()
    report = run_sweep(path, SweepOptions(output=output, workers=workers, progress=False))
    elapsed = time.perf_counter() - start
    # cores the workers actually got: far below the worker count means other load took the machine
    BUSY[workers] = max(BUSY.get(workers, 0.0), (children_cpu() - cpu) / elapsed)
    if report.failed or report.ran != len(report.rows):
        raise SystemExit(f"benchmark sweep failed: {[r['error'] for r in report.rows if r['error']]}")
    return elapsed


def timed_bare_runs(path: Path, output: Path) -> float:
    """The same trials as `usarsim run` processes, one after another (what a shell loop would do)."""
    output.mkdir()
    start = time.perf_counter()
    for trial in trials(load_sweep(path)):
        subprocess.run([sys.executable, "-m", "usarsim.cli", "run", "--world", trial.world, "--robot", trial.robot,
                        "--seed", str(trial.seed), "--duration", str(trial.sweep.duration),
                        "--drive", f"{DRIVE[0]},{DRIVE[1]}", "--output", str(output / f"{trial.trial_id}.jsonl")],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def timed_ray_nodes(path: Path, output: Path, nodes: int) -> float:
    """The sweep on a Ray cluster of ``nodes`` one-CPU nodes on 127.0.0.1 (started beforehand, not timed)."""
    import os

    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"  # keep Ray's addresses on loopback
    from ray._private import ray_constants
    from ray.cluster_utils import Cluster

    ray_constants.ENABLE_RAY_CLUSTER = False
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "node_ip_address": "127.0.0.1",
                                                            "include_dashboard": False})
    try:
        for _ in range(nodes - 1):
            cluster.add_node(num_cpus=1, node_ip_address="127.0.0.1")
        start = time.perf_counter()
        report = run_sweep(path, SweepOptions(output=output, ray=cluster.address, progress=False))
        elapsed = time.perf_counter() - start
    finally:
        cluster.shutdown()
    if report.failed or len(set(report.ran_on.values())) != nodes:
        raise SystemExit(f"Ray sweep failed or missed a node: {report.ran_on}")
    return elapsed


def timed_in_process(path: Path, output: Path) -> float:
    """The same trials through `usarsim run`'s own loop, in this process: the simulation alone."""
    from usarsim.runner import Scenario, run_scenario

    output.mkdir()
    start = time.perf_counter()
    for trial in trials(load_sweep(path)):
        scenario = Scenario(world=trial.world, robot=trial.robot, seed=trial.seed, duration=trial.sweep.duration,
                            drive=DRIVE, pacing="lockstep")
        with open(output / f"{trial.trial_id}.jsonl", "w", encoding="utf-8") as out:
            run_scenario(scenario, out)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--duration", type=float, default=5.0, help="sim seconds per trial")
    parser.add_argument("--curve", action="store_true", help="also trials/min for every worker count 1..cores")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each measurement; the fastest counts")
    parser.add_argument("--ray-nodes", type=int, default=0, metavar="N",
                        help="also the sweep on a Ray cluster of N one-CPU nodes on 127.0.0.1 (connection, node "
                             "checks and shipping included; the cluster's start is not)")
    args = parser.parse_args()
    cores = default_workers()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        path = sweep_file(folder, args.seeds, args.duration)
        count = len(trials(load_sweep(path)))
        runs = iter(range(1_000_000))  # a fresh output folder per run

        def best(measure, *extra):  # noqa: ANN001, ANN202 - fastest of --repeat runs: least disturbed by other load
            return min(measure(path, folder / f"run{next(runs)}", *extra) for _ in range(args.repeat))

        bare = best(timed_bare_runs)
        alone = best(timed_in_process)
        one = best(timed_sweep, 1)
        every = best(timed_sweep, cores)
        curve = {n: best(timed_sweep, n) for n in range(1, cores + 1)} if args.curve else {}
        on_ray = best(timed_ray_nodes, args.ray_nodes) if args.ray_nodes else None
    per_minute = lambda seconds: 60.0 * count / seconds  # noqa: E731
    speedup = one / every
    print(f"fastest of {args.repeat} runs each; {count} trials of {args.duration:g} sim s "
          f"({' x '.join(WORLDS)} worlds, {' x '.join(ROBOTS)}, "
          f"{args.seeds} seeds) on {cores} cores")
    print(f"bare `usarsim run`, one after another: {bare:7.2f} s  {per_minute(bare):7.1f} trials/min")
    print(f"`usarsim run`'s loop in one process:    {alone:7.2f} s  {per_minute(alone):7.1f} trials/min")
    print(f"sweep, 1 worker:                        {one:7.2f} s  {per_minute(one):7.1f} trials/min  "
          f"(workers kept {BUSY[1]:.2f} cores busy)")
    print(f"sweep, {cores} workers:                       {every:7.2f} s  {per_minute(every):7.1f} trials/min  "
          f"(workers kept {BUSY[cores]:.2f} cores busy)")
    print(f"speed-up {speedup:.2f} of ideal {cores}; parallel efficiency {speedup / cores:.0%}")
    for n, seconds in curve.items():
        print(f"  {n:3d} workers: {per_minute(seconds):7.1f} trials/min, speed-up {curve[1] / seconds:.2f}")
    if on_ray is not None:
        print(f"sweep, Ray, {args.ray_nodes} nodes x 1 CPU:             {on_ray:7.2f} s  {per_minute(on_ray):7.1f} "
              f"trials/min  ({on_ray / every:.2f}x the time of {cores} local workers)")
    print(f"sweep on 1 worker vs bare runs: {one / bare:.2f}x the time ({(one - bare) / count * 1000:+.0f} ms per "
          f"trial; each bare run starts Python and PyBullet)")
    print(f"sweep on 1 worker vs the simulation alone: {one / alone:.2f}x the time "
          f"({(one - alone) / count * 1000:+.0f} ms per trial: worker start, metrics, result files, table)")


if __name__ == "__main__":
    main()
