"""The results folder: the sweep it belongs to, finished trials, the summary table.

Layout::

    RESULTS/
      sweep.yaml            the sweep file as run (and sweep.json: its fingerprint)
      trials/<trial id>/    summary.json, readings.jsonl, bag.mcap, error.txt (failed trials)
      summary.csv           one row per finished trial, grid order
      summary.parquet       the same table, typed
      .lock                 held by the sweep writing into the folder

One sweep at a time writes into a folder: ``claim`` takes an exclusive lock on ``.lock`` (released
by the kernel however the sweep ends), so a second sweep started into a busy folder is refused
instead of racing the first one over the same trials.

The table is written with pyarrow, which writes both CSV and Parquet from one typed table;
pandas would need pyarrow for Parquet anyway and adds nothing a summary table needs.
"""
from __future__ import annotations

import fcntl
import json
import os
import shutil
from pathlib import Path
from typing import IO, Any, Iterable

from usarsim.config_loading import ConfigError
from usarsim.scale.sweep_file import SweepSpec, TrialSpec
from usarsim.scale.trial import TrialResult
from usarsim.scale.trial_files import SUMMARY, leftover_partials, new_partial, publish

# Column order and types of the summary table; readings_sha256 is empty when readings were not recorded.
COLUMNS: tuple[tuple[str, str], ...] = (
    ("trial", "string"), ("world", "string"), ("robot", "string"), ("seed", "int64"), ("status", "string"),
    ("error", "string"), ("sim_time_s", "float64"), ("distance_m", "float64"), ("collisions", "int64"),
    ("victims_detected", "int64"), ("victims", "string"), ("false_alarms_detected", "int64"),
    ("area_covered_m2", "float64"), ("readings", "int64"), ("wall_time_s", "float64"),
    ("real_time_factor", "float64"), ("readings_sha256", "string"),
)
# Columns that measure the machine, not the simulation: they differ between identical runs.
TIMING_COLUMNS = ("wall_time_s", "real_time_factor")


class ResultsFolder:
    """One sweep's results folder."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.trials_dir = self.path / "trials"
        self._lock: IO[str] | None = None

    def claim(self, sweep: SweepSpec, sweep_file: Path) -> None:
        """Create the folder for ``sweep``, or check an existing one holds the same sweep (resume).

        Holds the folder's lock until ``release`` (or this process's end).
        """
        self._take_lock()
        marker = self.path / "sweep.json"
        fingerprint = sweep.fingerprint()
        if marker.exists():
            held = json.loads(marker.read_text(encoding="utf-8")).get("fingerprint")
            if held != fingerprint:
                raise ConfigError(f"{self.path} holds trials run with other settings (duration, controller, "
                                  "record, ...); give another --output folder (or delete this one)")
        self.trials_dir.mkdir(parents=True, exist_ok=True)
        for partial in leftover_partials(self.trials_dir):  # left by a killed sweep
            shutil.rmtree(partial, ignore_errors=True)
        shutil.copyfile(sweep_file, self.path / "sweep.yaml")
        marker.write_text(json.dumps({"name": sweep.name, "fingerprint": fingerprint}) + "\n", encoding="utf-8")

    def release(self) -> None:
        """Let another sweep write into the folder."""
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    def _take_lock(self) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        lock = open(self.path / ".lock", "a+", encoding="utf-8")
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.seek(0)
            holder = lock.read().strip() or "another process"
            lock.close()
            raise ConfigError(f"{self.path} is in use by another usarsim sweep ({holder}); wait for it to "
                              "end or stop it, then run this command again") from None
        lock.truncate(0)
        lock.write(f"pid {os.getpid()}\n")
        lock.flush()
        self._lock = lock

    def summary_of(self, trial: TrialSpec) -> dict[str, Any] | None:
        """The finished trial's summary row, None if it has not finished."""
        path = self.trials_dir / trial.trial_id / SUMMARY
        return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None

    def store(self, trial: TrialSpec, result: TrialResult) -> None:
        """Write a remote worker's files into the trial's folder (renamed into place when complete)."""
        if not result.files:
            return
        partial = new_partial(self.trials_dir, trial.trial_id)
        for name, data in result.files.items():
            (partial / name).write_bytes(data)
        publish(partial, self.trials_dir / trial.trial_id)

    def write_table(self, rows: Iterable[dict[str, Any]]) -> tuple[Path, Path]:
        """summary.csv and summary.parquet from the rows (missing values are nulls)."""
        import pyarrow as pa
        import pyarrow.csv as pa_csv
        import pyarrow.parquet as pq

        rows = list(rows)
        schema = pa.schema([(name, pa.type_for_alias(kind)) for name, kind in COLUMNS])
        table = pa.Table.from_pylist([{name: row.get(name) for name, _ in COLUMNS} for row in rows], schema=schema)
        csv_path, parquet_path = self.path / "summary.csv", self.path / "summary.parquet"
        pa_csv.write_csv(table, csv_path)
        pq.write_table(table, parquet_path)
        return csv_path, parquet_path
