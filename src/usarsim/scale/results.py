"""The results folder: the sweep it belongs to, finished trials, the summary table.

Layout::

    RESULTS/
      sweep.yaml            the sweep file as run (and sweep.json: its fingerprint)
      trials/<trial id>/    summary.json, readings.jsonl, bag.mcap, error.txt (failed trials)
      summary.csv           one row per finished trial, grid order
      summary.parquet       the same table, typed

The table is written with pyarrow, which writes both CSV and Parquet from one typed table;
pandas would need pyarrow for Parquet anyway and adds nothing a summary table needs.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Iterable

from usarsim.config_loading import ConfigError
from usarsim.scale.sweep_file import SweepSpec, TrialSpec
from usarsim.scale.trial import SUMMARY, TrialResult

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

    def claim(self, sweep: SweepSpec, sweep_file: Path) -> None:
        """Create the folder for ``sweep``, or check an existing one holds the same sweep (resume)."""
        marker = self.path / "sweep.json"
        fingerprint = sweep.fingerprint()
        if marker.exists():
            held = json.loads(marker.read_text(encoding="utf-8")).get("fingerprint")
            if held != fingerprint:
                raise ConfigError(f"{self.path} holds trials run with other settings (duration, controller, "
                                  "record, ...); give another --output folder (or delete this one)")
        self.trials_dir.mkdir(parents=True, exist_ok=True)
        for partial in self.trials_dir.glob("*.partial"):  # left by a killed sweep
            shutil.rmtree(partial, ignore_errors=True)
        shutil.copyfile(sweep_file, self.path / "sweep.yaml")
        marker.write_text(json.dumps({"name": sweep.name, "fingerprint": fingerprint}) + "\n", encoding="utf-8")

    def summary_of(self, trial: TrialSpec) -> dict[str, Any] | None:
        """The finished trial's summary row, None if it has not finished."""
        path = self.trials_dir / trial.trial_id / SUMMARY
        return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None

    def store(self, trial: TrialSpec, result: TrialResult) -> None:
        """Write a remote worker's files into the trial's folder (renamed into place when complete)."""
        if not result.files:
            return
        partial = self.trials_dir / f"{trial.trial_id}.partial"
        partial.mkdir(parents=True, exist_ok=True)
        for name, data in result.files.items():
            (partial / name).write_bytes(data)
        final = self.trials_dir / trial.trial_id
        shutil.rmtree(final, ignore_errors=True)
        partial.rename(final)

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
