"""``run_sweep``: every trial of a sweep file not yet finished, in parallel, into one results folder."""
from __future__ import annotations

import contextlib
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generator

from usarsim.config_loading import ConfigError
from usarsim.scale.executors import default_workers, run_local, run_ray
from usarsim.scale.processes import Stopped, stop_signals_raise
from usarsim.scale.ray_cluster import DEFAULT_TIMEOUT
from usarsim.scale.results import ResultsFolder
from usarsim.scale.sweep_file import TrialSpec, load_sweep, trials
from usarsim.scale.trial import Attach, TrialResult, execute


@dataclass
class SweepOptions:
    """How to run a sweep (the sweep file says what)."""

    output: str | Path
    workers: int = 0  # local worker processes; 0: every core
    ray: str | None = None  # Ray cluster address ('local' for a local Ray), None: local processes
    ray_timeout: float = DEFAULT_TIMEOUT  # s to connect to the cluster and check its nodes
    retry_failed: bool = False  # run failed trials again on resume
    live_trial: str | None = None  # run this trial in this process with a live view attached
    live_attach: Attach | None = None
    progress: bool = True


@dataclass
class SweepReport:
    """What a sweep call did."""

    rows: list[dict[str, Any]] = field(default_factory=list)  # every finished trial, grid order
    ran: int = 0  # trials run by this call
    skipped: int = 0  # finished before (resumed past)
    failed: int = 0  # rows with status failed
    table: tuple[Path, Path] | None = None
    total: int = 0  # trials in the grid
    ran_on: dict[str, str] = field(default_factory=dict)  # trial id -> where this call ran it


class SweepStopped(Exception):
    """A signal stopped the sweep; the table of what finished is written and the rest resumes."""

    def __init__(self, stopped: Stopped, report: SweepReport) -> None:
        assert report.table is not None
        super().__init__(f"stopped by {stopped.signal_name}; {len(report.rows)} of {report.total} trials done "
                         f"(listed in {report.table[0]}); run the same command again to resume")
        self.exit_status = stopped.exit_status
        self.report = report


def run_sweep(sweep_file: str | Path, options: SweepOptions) -> SweepReport:
    """Run the sweep; the table is rewritten even when interrupted, so it always lists what finished.

    SIGINT, SIGTERM and SIGHUP stop it alike: workers stopped, table written, ``SweepStopped`` raised.
    """
    spec = load_sweep(sweep_file)
    grid = trials(spec)
    folder = ResultsFolder(options.output)
    with stop_signals_raise(), contextlib.ExitStack() as stack:
        folder.claim(spec, Path(sweep_file))
        stack.callback(folder.release)
        todo = [t for t in grid if not _finished(folder.summary_of(t), options.retry_failed)]
        live = _live_trial(grid, options.live_trial)
        report = SweepReport(skipped=len(grid) - len(todo), total=len(grid))
        bar = _progress_bar(len(grid), report.skipped, options.progress)
        try:
            with contextlib.closing(_execute(todo, live, folder, options)) as results:
                for trial, result in results:
                    folder.store(trial, result)
                    report.ran += 1
                    report.ran_on[trial.trial_id] = result.ran_on
                    if bar is not None:
                        bar.set_postfix_str(f"{trial.trial_id} {result.summary['status']}", refresh=False)
                        bar.update(1)
        except Stopped as stopped:
            _finish(report, folder, grid, bar)
            raise SweepStopped(stopped, report) from None
        except BaseException:
            _finish(report, folder, grid, bar)
            raise
        _finish(report, folder, grid, bar)
        return report


def _finish(report: SweepReport, folder: ResultsFolder, grid: list[TrialSpec], bar: Any) -> None:
    """Close the bar and write the table of every finished trial."""
    if bar is not None:
        bar.close()
    report.rows = [row for row in map(folder.summary_of, grid) if row is not None]
    report.failed = sum(row["status"] == "failed" for row in report.rows)
    report.table = folder.write_table(report.rows)


def _finished(row: dict[str, Any] | None, retry_failed: bool) -> bool:
    return row is not None and not (retry_failed and row["status"] == "failed")


def _live_trial(grid: list[TrialSpec], trial_id: str | None) -> TrialSpec | None:
    if trial_id is None:
        return None
    for trial in grid:
        if trial.trial_id == trial_id:
            return trial
    raise ConfigError(f"no trial {trial_id!r} in this sweep (trials: {', '.join(t.trial_id for t in grid)})")


def _execute(todo: list[TrialSpec], live: TrialSpec | None, folder: ResultsFolder,
             options: SweepOptions) -> Generator[tuple[TrialSpec, TrialResult], None, None]:
    """The live trial (if any, and not finished) in this process first, then the rest on the executor."""
    if live is not None and live in todo:
        todo = [t for t in todo if t is not live]
        yield live, execute(live, str(folder.trials_dir), options.live_attach)
    if options.ray:
        yield from run_ray(todo, options.ray, options.ray_timeout)
    else:
        yield from run_local(todo, str(folder.trials_dir), options.workers or default_workers())


def _progress_bar(total: int, initial: int, enabled: bool) -> Any:
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, initial=initial, unit="trial", desc="sweep", file=sys.stderr,
                disable=None)  # None: no bar when stderr is not a terminal
