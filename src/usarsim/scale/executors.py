"""Where trials run: local worker processes (default) or a Ray cluster.

Both take the trials still to run and yield ``(trial, result)`` as trials finish, in any
order. Each trial is a fresh simulator in a worker process, so a trial's result does not
depend on which worker ran it or what ran there before.
"""
from __future__ import annotations

import multiprocessing
import os
import signal
import tempfile
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Callable, Iterator, Sequence

from usarsim.config_loading import ConfigError
from usarsim.scale.processes import die_with_parent
from usarsim.scale.ray_cluster import DEFAULT_TIMEOUT, INSTALL, connected
from usarsim.scale.shipping import localize, stage
from usarsim.scale.sweep_file import TrialSpec
from usarsim.scale.trial import TrialResult, execute, failed_result
from usarsim.sim.raycast import use_all_cores


def default_workers() -> int:
    """Every core this process may use."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def run_local(trials: Sequence[TrialSpec], trials_dir: str, workers: int) -> Iterator[tuple[TrialSpec, TrialResult]]:
    """Trials on ``workers`` local processes, each writing straight into ``trials_dir``.

    At most ``workers`` trials are handed out at a time. When a worker dies (killed, out of memory,
    a crash in native code) the pool cannot tell which trial it was running, so the trials then
    running are run again, each on its own: a trial whose worker dies again alone is recorded as
    failed, the others get the results they would have had. Workers end with the sweep however it
    ends (see processes); Ctrl-C or SIGTERM stops them at once, and what they were running is left
    partial, to be run again by a resumed sweep.
    """
    todo = list(trials)
    suspects: list[TrialSpec] = []  # were running when a worker died
    while todo or suspects:
        if suspects:
            trial = suspects.pop(0)
            yield from _pool_run([trial], 1, trials_dir, on_death=_died_alone)
        else:
            yield from _pool_run(todo, max(1, min(workers, len(todo))), trials_dir, on_death=suspects.append)


def _died_alone(trial: TrialSpec) -> TrialResult:
    return failed_result(trial, "its worker process died while it ran, twice (killed, out of memory, or a crash "
                                "in native code)")


def _pool_run(todo: list[TrialSpec], workers: int, trials_dir: str,
              on_death: Callable[[TrialSpec], TrialResult | None]) -> Iterator[tuple[TrialSpec, TrialResult]]:
    """Run trials from ``todo`` (taking them off it) on one pool until it is empty or a worker dies.

    On a death, ``on_death`` gets each trial then running: the result it returns is yielded, None
    leaves the trial to the caller.
    """
    # spawn: workers start clean (no inherited PyBullet client or threads of the parent)
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_init_worker, initargs=(workers == 1, os.getpid()))
    running: dict[Future, TrialSpec] = {}
    try:
        while todo or running:
            while todo and len(running) < workers:
                trial = todo.pop(0)
                running[pool.submit(execute, trial, trials_dir)] = trial
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            broken = [f for f in done if isinstance(f.exception(), BrokenProcessPool)]
            for future in done:
                if future not in broken:
                    trial = running.pop(future)
                    error = future.exception()
                    # an error outside the trial's own code (its results folder vanished, a full disk)
                    yield trial, (future.result() if error is None
                                  else failed_result(trial, f"{type(error).__name__}: {error}"))
            if broken:  # every trial still running went down with the pool
                for trial in running.values():
                    result = on_death(trial)
                    if result is not None:
                        yield trial, result
                return
    finally:
        _stop(pool)


def _init_worker(all_cores: bool, sweep_pid: int) -> None:
    die_with_parent(sweep_pid)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the sweep's to handle, not each trial's
    use_all_cores(all_cores)


def _stop(pool: ProcessPoolExecutor) -> None:
    """Shut the pool down without waiting for running trials (they are partial, resumed later)."""
    terminate = getattr(pool, "terminate_workers", None)  # public from Python 3.14
    if terminate is not None:
        terminate()
    else:
        for process in list(getattr(pool, "_processes", {}).values()):
            process.terminate()
    pool.shutdown(wait=True, cancel_futures=True)


def _execute_on_ray(trial: TrialSpec) -> TrialResult:
    """A Ray task: one trial in this node's copy of the staged files, its files back in the result."""
    import ray

    use_all_cores(False)  # a Ray task holds one CPU
    result = execute(localize(trial, os.getcwd()), None)
    result.ran_on = ray.get_runtime_context().get_node_id()
    return result


def run_ray(trials: Sequence[TrialSpec], address: str,
            timeout: float = DEFAULT_TIMEOUT) -> Iterator[tuple[TrialSpec, TrialResult]]:
    """Trials as Ray tasks (one CPU each, spread over the nodes) on the cluster at ``address``.

    'local' starts a Ray on this machine. Workers may be other machines: the files the sweep names
    travel with the job (see shipping), each trial runs in a temporary folder and its files come
    back in the result, written into the results folder by the caller. A task whose worker dies is
    run once more by Ray (a second death fails the trial, as on local workers).
    """
    try:
        import ray
    except ImportError:
        raise ConfigError(f"--ray needs Ray: {INSTALL}") from None
    if not trials:
        return
    with tempfile.TemporaryDirectory(prefix="usarsim-ship-") as staging:
        staged = stage(trials, Path(staging))
        runtime_env = {"working_dir": staging} if any(Path(staging).iterdir()) else None
        with connected(address, timeout, runtime_env):
            task = ray.remote(num_cpus=1, max_retries=1, scheduling_strategy="SPREAD")(_execute_on_ray)
            running = {task.remote(s): t for s, t in zip(staged, trials)}
            try:
                while running:
                    done, _ = ray.wait(list(running), num_returns=1)
                    for ref in done:
                        trial = running.pop(ref)
                        try:
                            result = ray.get(ref)
                        except ray.exceptions.RayError as exc:  # the task's worker or node died, twice
                            result = failed_result(trial, f"its Ray task failed: {type(exc).__name__}: {exc}")
                        yield trial, result
            finally:
                for ref in running:
                    ray.cancel(ref, force=True)
