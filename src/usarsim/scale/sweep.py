"""``run_sweep``: every trial of a sweep file not yet finished, in parallel, into one results folder."""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from usarsim.config_loading import ConfigError
from usarsim.scale.executors import default_workers, run_local, run_ray
from usarsim.scale.results import ResultsFolder
from usarsim.scale.sweep_file import TrialSpec, load_sweep, trials
from usarsim.scale.trial import Attach, TrialResult, execute


@dataclass
class SweepOptions:
    """How to run a sweep (the sweep file says what)."""

    output: str | Path
    workers: int = 0  # local worker processes; 0: every core
    ray: str | None = None  # Ray cluster address ('local' for a local Ray), None: local processes
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


def run_sweep(sweep_file: str | Path, options: SweepOptions) -> SweepReport:
    """Run the sweep; the table is rewritten even when interrupted, so it always lists what finished."""
    spec = load_sweep(sweep_file)
    grid = trials(spec)
    folder = ResultsFolder(options.output)
    folder.claim(spec, Path(sweep_file))
    todo = [t for t in grid if not _finished(folder.summary_of(t), options.retry_failed)]
    live = _live_trial(grid, options.live_trial)
    report = SweepReport(skipped=len(grid) - len(todo))
    bar = _progress_bar(len(grid), report.skipped, options.progress)
    try:
        for trial, result in _execute(todo, live, folder, options):
            folder.store(trial, result)
            report.ran += 1
            if bar is not None:
                bar.set_postfix_str(f"{trial.trial_id} {result.summary['status']}", refresh=False)
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
        report.rows = [row for row in map(folder.summary_of, grid) if row is not None]
        report.failed = sum(row["status"] == "failed" for row in report.rows)
        report.table = folder.write_table(report.rows)
    return report


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
             options: SweepOptions) -> Iterator[tuple[TrialSpec, TrialResult]]:
    """The live trial (if any, and not finished) in this process first, then the rest on the executor."""
    if live is not None and live in todo:
        todo = [t for t in todo if t is not live]
        yield live, execute(live, str(folder.trials_dir), options.live_attach)
    if options.ray:
        yield from run_ray(todo, options.ray)
    else:
        yield from run_local(todo, str(folder.trials_dir), options.workers or default_workers())


def _progress_bar(total: int, initial: int, enabled: bool) -> Any:
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, initial=initial, unit="trial", desc="sweep", file=sys.stderr,
                disable=None)  # None: no bar when stderr is not a terminal
