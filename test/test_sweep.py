"""Sweeps end to end: a 2 worlds x 2 robots x 2 seeds grid on local workers, resume after a kill,
identical results on a second run, failed trials recorded, sweep files checked."""
from __future__ import annotations

import hashlib
import json
import os
import signal
import textwrap
from pathlib import Path

import pyarrow.csv as pa_csv
import pyarrow.parquet as pq
import pytest

from usarsim.cli import main
from usarsim.config_loading import ConfigError
from usarsim.scale.results import COLUMNS
from usarsim.scale.sweep import SweepOptions, run_sweep
from patience import PATIENCE
from usarsim.scale.sweep_file import load_sweep
from sweep_helpers import grid, marked, results, start_gated_sweep, stderr_of, wait_until_gone

RAISING_MODULE = """\
def drive(step):
    if step.robot_class == "P2DX" and step.time >= 0.5:
        raise ValueError("no P2DX today")
    return (1.0, 1.0)
"""


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory):
    """The grid run once on two workers."""
    base = tmp_path_factory.mktemp("reference")
    sweep = grid(base)
    report = run_sweep(sweep, SweepOptions(output=base / "results", workers=2, progress=False))
    return base / "results", report


def test_grid_runs_and_writes_its_table(reference) -> None:
    out, report = reference
    assert report.ran == 8 and report.skipped == 0 and report.failed == 0
    csv_rows = pa_csv.read_csv(out / "summary.csv").to_pylist()
    parquet = pq.read_table(out / "summary.parquet")
    assert parquet.column_names == [name for name, _ in COLUMNS]
    assert parquet.to_pylist() == report.rows
    assert [r["trial"] for r in csv_rows] == [f"{w}__{r}__seed{s}" for w in ("empty", "yellow")
                                              for r in ("P2AT", "P2DX") for s in (0, 1)]
    for row in report.rows:
        assert row["status"] == "ok" and row["sim_time_s"] == pytest.approx(1.0)
        assert row["distance_m"] > 0.05  # it drove
        assert row["area_covered_m2"] > 1.0  # and its laser saw floor
        assert row["real_time_factor"] > 0 and row["readings"] > 0
        folder = out / "trials" / row["trial"]
        lines = (folder / "readings.jsonl").read_text().splitlines()
        assert len(lines) == row["readings"]
        assert {json.loads(line)["robot"] for line in lines} == {f"{row['robot']}_1"}
    # the arena's walls bound what the laser covers; the empty world does not
    by_id = {r["trial"]: r for r in report.rows}
    assert by_id["yellow__P2AT__seed0"]["area_covered_m2"] < by_id["empty__P2AT__seed0"]["area_covered_m2"] / 5
    # seeds change the noise, so the readings differ
    assert by_id["empty__P2AT__seed0"]["readings_sha256"] != by_id["empty__P2AT__seed1"]["readings_sha256"]


def test_second_run_on_one_worker_gives_identical_results(reference, tmp_path: Path) -> None:
    _, first = reference
    again = run_sweep(grid(tmp_path), SweepOptions(output=tmp_path / "results", workers=1, progress=False))
    assert results(again.rows) == results(first.rows)


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT])
def test_a_killed_sweep_leaves_no_process_and_resumes_to_the_uninterrupted_results(
        reference, tmp_path: Path, signum: int) -> None:
    _, first = reference
    mark = f"{os.getpid()}-{signum}"
    proc, sweep, out = start_gated_sweep(tmp_path, mark)
    trials = out / "trials"
    os.kill(proc.pid, signum)  # the sweep's main process only, as `kill PID` or a closed terminal would
    proc.wait(timeout=PATIENCE)
    err = stderr_of(tmp_path)
    done_before = (trials / "empty__P2AT__seed0" / "summary.json").stat().st_mtime_ns
    # a resumed sweep right away, the gate open: a worker left over from the killed one would now run
    # the same trial beside it
    (tmp_path / "gate").touch()
    resumed = run_sweep(sweep, SweepOptions(output=out, workers=2, progress=False))
    assert wait_until_gone(mark) == [], "processes of the killed sweep outlived it"
    assert resumed.skipped == 1 and resumed.ran == 7
    assert (trials / "empty__P2AT__seed0" / "summary.json").stat().st_mtime_ns == done_before  # not redone
    assert not list(trials.glob("*.partial*"))
    assert results(resumed.rows) == results(first.rows)
    for row in resumed.rows:  # each hash is that of the file next to it
        data = (trials / row["trial"] / "readings.jsonl").read_bytes()
        assert row["readings_sha256"] == hashlib.sha256(data).hexdigest()
    assert run_sweep(sweep, SweepOptions(output=out, workers=2, progress=False)).ran == 0
    if signum == signal.SIGKILL:
        assert proc.returncode == -signal.SIGKILL
        return
    # stopped like Ctrl-C: status 128 + signal, the table of what finished, one line saying so
    name = signal.Signals(signum).name
    assert proc.returncode == 128 + signum, err
    assert err.strip().splitlines()[-1] == (f"usarsim sweep: stopped by {name}; 1 of 8 trials done (listed in "
                                            f"{out / 'summary.csv'}); run the same command again to resume")
    assert "Traceback" not in err


def test_a_killed_worker_costs_nothing(reference, tmp_path: Path) -> None:
    """A worker killed mid-trial: its trial runs again on its own and the sweep ends as if nothing happened."""
    _, first = reference
    mark = f"{os.getpid()}-worker"
    proc, _, out = start_gated_sweep(tmp_path, mark)
    workers = [pid for pid, cmdline in marked(mark) if "spawn_main" in cmdline]
    assert len(workers) == 1, marked(mark)
    os.kill(workers[0], signal.SIGKILL)
    (tmp_path / "gate").touch()
    assert proc.wait(timeout=PATIENCE) == 0, stderr_of(tmp_path)
    assert wait_until_gone(mark) == []
    rows = pq.read_table(out / "summary.parquet").to_pylist()
    assert results(rows) == results(pq.read_table(reference[0] / "summary.parquet").to_pylist())


def test_a_second_sweep_into_a_busy_folder_is_refused(tmp_path: Path, capsys) -> None:
    proc, sweep, out = start_gated_sweep(tmp_path, f"{os.getpid()}-busy")
    try:
        assert main(["sweep", str(sweep), "-o", str(out)]) == 2
        err = capsys.readouterr().err
        assert f"{out} is in use by another usarsim sweep (pid {proc.pid})" in err and "Traceback" not in err
    finally:
        proc.kill()
        proc.wait(timeout=PATIENCE)


def test_a_raising_trial_is_recorded_as_failed(tmp_path: Path) -> None:
    (tmp_path / "raiser.py").write_text(RAISING_MODULE)
    sweep = tmp_path / "s.yaml"
    sweep.write_text("worlds: [empty]\nrobots: [P2AT, P2DX]\nseeds: [3]\nduration: 1.0\ncontroller: raiser:drive\n")
    report = run_sweep(sweep, SweepOptions(output=tmp_path / "out", workers=2, progress=False))
    by_robot = {row["robot"]: row for row in report.rows}
    assert report.failed == 1 and len(report.rows) == 2
    assert by_robot["P2AT"]["status"] == "ok"
    assert by_robot["P2DX"]["status"] == "failed"
    assert by_robot["P2DX"]["error"] == "ValueError: no P2DX today"
    traceback = (tmp_path / "out" / "trials" / "empty__P2DX__seed3" / "error.txt").read_text()
    assert "raiser.py" in traceback and "no P2DX today" in traceback
    table = pa_csv.read_csv(tmp_path / "out" / "summary.csv").to_pylist()
    assert [r["status"] for r in table] == ["ok", "failed"]
    # a resumed sweep keeps the failure unless asked to retry it
    assert run_sweep(sweep, SweepOptions(output=tmp_path / "out", progress=False)).ran == 0
    retried = run_sweep(sweep, SweepOptions(output=tmp_path / "out", retry_failed=True, progress=False))
    assert retried.ran == 1 and retried.failed == 1


@pytest.mark.parametrize("text, message", [
    ("worlds: [empty]\nrobots: [P2AT]\nseeds: [0]\nduration: 1\ndrive: [1, 1]\nspeed: 3\n", "unknown key 'speed'"),
    ("worlds: [atlantis]\nrobots: [P2AT]\nseeds: [0]\nduration: 1\ndrive: [1, 1]\n", "unknown world 'atlantis'"),
    ("worlds: [empty]\nrobots: [Tank]\nseeds: [0]\nduration: 1\ndrive: [1, 1]\n", "Tank"),
    ("worlds: [empty]\nrobots: [P2AT]\nseeds: [0]\nduration: 1\n", "exactly one of controller, script or drive"),
    ("worlds: [empty]\nrobots: [P2AT]\nseeds: [0, 0]\nduration: 1\ndrive: [1, 1]\n", "'seeds' lists an entry twice"),
    ("worlds: [empty]\nrobots: [P2AT]\nseeds: [0]\nduration: -1\ndrive: [1, 1]\n", "duration must be positive"),
    ("worlds: [empty]\nrobots: [P2AT]\nseeds: [0]\nduration: 1\ncontroller: nocolon\n", "module:function"),
])
def test_bad_sweep_files_are_refused_with_one_clear_error(tmp_path: Path, capsys, text: str, message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_sweep(path)
    assert main(["sweep", str(path), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("usarsim: error:") and message.split("'")[0] in err and "Traceback" not in err


def test_a_missing_controller_fails_each_trial_not_the_sweep(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("worlds: [empty]\nrobots: [P2AT]\nseeds: [0]\nduration: 0.5\ncontroller: nowhere:drive\n")
    report = run_sweep(path, SweepOptions(output=tmp_path / "out", progress=False))
    assert report.rows[0]["status"] == "failed" and "cannot import 'nowhere'" in report.rows[0]["error"]


def test_a_results_folder_takes_only_trials_of_the_same_settings(tmp_path: Path) -> None:
    first, second = tmp_path / "a.yaml", tmp_path / "b.yaml"
    first.write_text("worlds: [empty]\nrobots: [P2AT]\nseeds: [0]\nduration: 0.2\ndrive: [1, 1]\n")
    second.write_text("worlds: [empty]\nrobots: [P2AT]\nseeds: [0]\nduration: 0.3\ndrive: [1, 1]\n")
    run_sweep(first, SweepOptions(output=tmp_path / "out", progress=False))
    with pytest.raises(ConfigError, match="trials run with other settings"):
        run_sweep(second, SweepOptions(output=tmp_path / "out", progress=False))
    # a grown grid with the same settings resumes: only the new trials run
    first.write_text("worlds: [empty]\nrobots: [P2AT]\nseeds: [0, 5]\nduration: 0.2\ndrive: [1, 1]\n")
    grown = run_sweep(first, SweepOptions(output=tmp_path / "out", progress=False))
    assert grown.skipped == 1 and grown.ran == 1 and [r["seed"] for r in grown.rows] == [0, 5]


def test_drive_script_segments_drive_in_turn(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(textwrap.dedent("""\
        worlds: [empty]
        robots: [P2AT]
        seeds: [0]
        duration: 2.0
        script:
          - {until: 1.0, drive: [3.0, 3.0]}
          - {until: 2.0, drive: [0.0, 0.0]}
        record: {readings: false}
        """))
    out = tmp_path / "out"
    report = run_sweep(path, SweepOptions(output=out, progress=False))
    row = report.rows[0]
    assert row["status"] == "ok" and "readings_sha256" not in row
    assert not (out / "trials" / row["trial"] / "readings.jsonl").exists()
    # 1 s at 3 rad/s on 0.11 m wheels is at most 0.33 m; then it stops
    assert 0.1 < row["distance_m"] < 0.4


SMALL_WORLD = """\
name: victim_room
description: a wall ahead of one start pose, a victim ahead of the other
gps_origin: {lat: 39.1347, lon: -77.2163, alt: 130.0}
floor: {size: [10.0, 10.0], center: [0.0, 0.0]}
start_poses:
  - {tag: ToWall, xyz: [0.0, 2.0, 0.0], rpy: [0.0, 0.0, 0.0]}
  - {tag: ToVictim, xyz: [0.0, -2.0, 0.0], rpy: [0.0, 0.0, 0.0]}
static:
  - {kind: box, name: wall, xyz: [1.5, 2.0, 0.6], size: [0.1, 2.0, 1.2]}
victims:
  - {id: V9, xyz: [2.0, -2.0, 0.0], posture: sitting}
"""


@pytest.mark.parametrize("start, collisions, victims", [("ToWall", 1, ""), ("ToVictim", 0, "V9")])
def test_summary_counts_collisions_and_victims(tmp_path: Path, start: str, collisions: int, victims: str) -> None:
    (tmp_path / "worlds").mkdir()
    (tmp_path / "worlds" / "room.yaml").write_text(SMALL_WORLD)
    sweep = tmp_path / "s.yaml"  # the world file is found relative to the sweep file
    # the rescue variant carries the victim sensor (the manual's P2AT has none)
    sweep.write_text(f"worlds: [worlds/room.yaml]\nrobots: [RescueP2AT]\nseeds: [0]\nduration: 4.0\n"
                     f"start: {start}\ndrive: [3.0, 3.0]\n")
    row = run_sweep(sweep, SweepOptions(output=tmp_path / "out", progress=False)).rows[0]
    assert row["trial"] == "room__RescueP2AT__seed0" and row["status"] == "ok", row["error"]
    assert row["collisions"] == collisions
    assert row["victims"] == victims and row["victims_detected"] == len(victims.split())


def test_a_worker_that_dies_fails_its_trial_and_the_sweep_goes_on(tmp_path: Path) -> None:
    (tmp_path / "killer.py").write_text(
        "import os, signal\n\n\ndef drive(step):\n"
        "    if step.seed == 1:\n        os.kill(os.getpid(), signal.SIGKILL)  # as the out-of-memory killer would\n"
        "    return (1.0, 1.0)\n")
    sweep = tmp_path / "s.yaml"
    sweep.write_text("worlds: [empty]\nrobots: [P2AT]\nseeds: [0, 1, 2]\nduration: 0.5\ncontroller: killer:drive\n")
    report = run_sweep(sweep, SweepOptions(output=tmp_path / "out", workers=1, progress=False))
    assert [row["status"] for row in report.rows] == ["ok", "failed", "ok"]
    assert "worker process died" in report.rows[1]["error"]
    assert (tmp_path / "out" / "trials" / "empty__P2AT__seed1" / "error.txt").is_file()


def test_the_example_sweeps_seeds_explore_differently(tmp_path: Path) -> None:
    """The example sweep's controller, shortened: two seeds drive different paths, not only other noise."""
    example = load_sweep(Path(__file__).parents[1] / "examples" / "sweep.yaml")
    sweep = tmp_path / "s.yaml"
    sweep.write_text(f"worlds: [yellow]\nrobots: [P2AT]\nseeds: [0, 1]\nduration: 4.0\n"
                     f"controller: {example.controller}\nrecord: {{readings: false}}\n")
    rows = run_sweep(sweep, SweepOptions(output=tmp_path / "out", workers=2, progress=False)).rows
    assert [row["status"] for row in rows] == ["ok", "ok"]
    assert rows[0]["distance_m"] != rows[1]["distance_m"] and rows[0]["area_covered_m2"] != rows[1]["area_covered_m2"]
