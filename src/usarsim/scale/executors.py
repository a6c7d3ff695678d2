"""Where trials run: local worker processes (default) or a Ray cluster.

Both take the trials still to run and yield ``(trial, result)`` as trials finish, in any
order. Each trial is a fresh simulator in a worker process, so a trial's result does not
depend on which worker ran it or what ran there before.
"""
from __future__ import annotations

import multiprocessing
import os
import signal
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Iterator, Sequence

from usarsim.scale.sweep_file import TrialSpec
from usarsim.scale.trial import TrialResult, execute, failed_result
from usarsim.sim.raycast import use_all_cores


def default_workers() -> int:
    """Every core this process may use."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def run_local(trials: Sequence[TrialSpec], trials_dir: str, workers: int) -> Iterator[tuple[TrialSpec, TrialResult]]:
    """Trials on ``workers`` local processes, each writing straight into ``trials_dir``.

    At most ``workers`` trials are handed out at a time, so a worker that dies (killed, out of
    memory, a crash in native code) costs only the trials then running: they are recorded as
    failed and the rest go on in a fresh pool. Ctrl-C stops the workers at once; what they were
    running is left partial and run again by a resumed sweep.
    """
    todo = list(trials)
    workers = max(1, min(workers, len(todo)))
    while todo:
        # spawn: workers start clean (no inherited PyBullet client or threads of the parent)
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=_init_worker, initargs=(workers == 1,))
        running: dict[Future, TrialSpec] = {}
        try:
            while todo or running:
                while todo and len(running) < workers:
                    trial = todo.pop(0)
                    running[pool.submit(execute, trial, trials_dir)] = trial
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                broken = False
                for future in done:
                    trial = running.pop(future)
                    try:
                        yield trial, future.result()
                    except BrokenProcessPool:
                        broken = True
                        yield trial, failed_result(trial, "its worker process died while it ran (killed, out "
                                                          "of memory, or a crash in native code)")
                if broken:
                    for trial in running.values():  # the other trials of the broken pool
                        yield trial, failed_result(trial, "a worker process died while it ran")
                    running.clear()
                    break
        finally:
            _stop(pool)


def _init_worker(all_cores: bool) -> None:
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


def _execute_on_one_core(trial: TrialSpec, trials_dir: str | None) -> TrialResult:
    use_all_cores(False)  # a Ray task holds one CPU
    return execute(trial, trials_dir)


def run_ray(trials: Sequence[TrialSpec], address: str) -> Iterator[tuple[TrialSpec, TrialResult]]:
    """Trials as Ray tasks (one CPU each) on the cluster at ``address`` ('local': a local Ray).

    Workers may be other machines, so each trial runs in a temporary folder and its files come
    back in the result, written into the results folder by the driver.
    """
    try:
        import ray
    except ImportError:
        from usarsim.config_loading import ConfigError

        raise ConfigError("--ray needs Ray: pip install 'usarsim[ray]'") from None
    if not trials:
        return
    if not ray.is_initialized():
        ray.init(address=None if address == "local" else address, include_dashboard=False,
                 log_to_driver=False, configure_logging=False)
    task = ray.remote(num_cpus=1)(_execute_on_one_core)
    running = {task.remote(t, None): t for t in trials}
    try:
        while running:
            done, _ = ray.wait(list(running), num_returns=1)
            for ref in done:
                trial = running.pop(ref)
                try:
                    result = ray.get(ref)
                except ray.exceptions.RayError as exc:  # the task's worker or node died
                    result = failed_result(trial, f"its Ray task failed: {type(exc).__name__}: {exc}")
                yield trial, result
    finally:
        for ref in running:
            ray.cancel(ref, force=True)
