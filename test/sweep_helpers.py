"""Sweep test helpers: the gated grid, and the processes a sweep leaves behind (read from /proc)."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from patience import PATIENCE
from usarsim.scale.results import TIMING_COLUMNS

GRID = """\
name: grid
worlds: [empty, yellow]
robots: [P2AT, P2DX]
seeds: [0, 1]
duration: 1.0
controller: gate:drive
"""
# Drives a circle; trials of seed 1 wait (bounded) for a gate file, so a test can kill a sweep while
# exactly one trial is running.
GATE_MODULE = """\
import time
from pathlib import Path

GATE = Path(__file__).with_name("gate")


def drive(step):
    if step.seed == 1 and step.time == 0.0:
        deadline = time.monotonic() + PATIENCE
        while not GATE.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
    return (2.0, 1.5)
"""


def grid(folder: Path, gate_open: bool = True) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "gate.py").write_text(GATE_MODULE.replace("PATIENCE", repr(PATIENCE)))
    if gate_open:
        (folder / "gate").touch()
    path = folder / "grid.yaml"
    path.write_text(GRID)
    return path


def results(rows: list[dict]) -> list[dict]:
    """Rows without the columns that measure the machine."""
    return [{k: v for k, v in row.items() if k not in TIMING_COLUMNS} for row in rows]


MARK = "USARSIM_TEST_SWEEP_MARK"  # set in a sweep's environment: every process it starts inherits it


def marked(mark: str) -> list[tuple[int, str]]:
    """(pid, command line) of the live processes whose environment carries ``mark``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            environ = (entry / "environ").read_bytes()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # gone, or not ours to read
            continue
        if state != "Z" and f"{MARK}={mark}".encode() in environ.split(b"\0"):
            found.append((int(entry.name), cmdline))
    return found


def wait_until_gone(mark: str, bound: float = 60.0) -> list[tuple[int, str]]:
    """The marked processes still alive after waiting up to ``bound`` s for them to end (bounded)."""
    deadline = time.monotonic() + bound
    while (left := marked(mark)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def start_gated_sweep(tmp_path: Path, mark: str, *extra: str,
                      running: bool = True) -> tuple[subprocess.Popen, Path, Path]:
    """The grid as `usarsim sweep -j 1` in a subprocess, waited for until its first trial is done and
    (``running``) its second one (seed 1) is held at the gate in the results folder."""
    sweep = grid(tmp_path, gate_open=False)
    out = tmp_path / "results"
    trials = out / "trials"
    env = {**os.environ, MARK: mark}
    # stderr to a file, not a pipe: a process left behind would hold a pipe open, and reading it would never end
    with open(tmp_path / "sweep.stderr", "w", encoding="utf-8") as err:
        proc = subprocess.Popen([sys.executable, "-m", "usarsim.cli", "sweep", str(sweep), "-o", str(out), "-j", "1",
                                 *extra], stdout=subprocess.DEVNULL, stderr=err, env=env)
    deadline = time.monotonic() + PATIENCE
    while not ((trials / "empty__P2AT__seed0" / "summary.json").exists()
               and (not running or list(trials.glob("empty__P2AT__seed1.partial*")))):
        if time.monotonic() > deadline or proc.poll() is not None:
            proc.kill()
            pytest.fail(f"the sweep did not reach its second trial: {stderr_of(tmp_path)[-2000:]}")
        time.sleep(0.05)
    return proc, sweep, out


def stderr_of(tmp_path: Path) -> str:
    """What the sweep started by ``start_gated_sweep`` wrote on stderr."""
    return (tmp_path / "sweep.stderr").read_text(encoding="utf-8")
