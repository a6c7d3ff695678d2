"""Where trials run: local worker processes (default) or a Ray cluster.

Both take the trials still to run and yield ``(trial, result)`` as trials finish, in any
order. Each trial is a fresh simulator in a worker process, so a trial's result does not
depend on which worker ran it or what ran there before.
"""
from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Iterator, Sequence

from usarsim.scale.sweep_file import TrialSpec
from usarsim.scale.trial import TrialResult, execute
from usarsim.sim.raycast import use_all_cores


def default_workers() -> int:
    """Every core this process may use."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def run_local(trials: Sequence[TrialSpec], trials_dir: str, workers: int) -> Iterator[tuple[TrialSpec, TrialResult]]:
    """Trials on ``workers`` local processes, each writing straight into ``trials_dir``."""
    if not trials:
        return
    # spawn: workers start clean (no inherited PyBullet client or threads of the parent)
    workers = min(workers, len(trials))
    with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                             initializer=use_all_cores, initargs=(workers == 1,)) as pool:
        running: dict[Future, TrialSpec] = {pool.submit(execute, t, trials_dir): t for t in trials}
        try:
            while running:
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in done:
                    yield running.pop(future), future.result()
        finally:  # interrupted: drop what has not started, let running trials end
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
                yield running.pop(ref), ray.get(ref)
    finally:
        for ref in running:
            ray.cancel(ref, force=True)
