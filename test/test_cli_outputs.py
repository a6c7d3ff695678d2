"""Where `usarsim run` and `usarsim urdf` write, as the README says, and nothing made by mistake."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
USARSIM = [sys.executable, "-m", "usarsim.cli"]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*USARSIM, *args], capture_output=True, text=True, timeout=300)


def test_run_into_a_missing_folder_is_refused_and_creates_nothing(tmp_path):
    target = tmp_path / "nonexistent" / "dir" / "x.jsonl"
    done = run("run", "--world", "empty", "--duration", "0.1", "--output", str(target))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [
        f"usarsim: error: cannot write {target}: {target.parent} does not exist (create it first)"]
    assert not (tmp_path / "nonexistent").exists()


def test_run_into_an_existing_folder_writes_the_readings(tmp_path):
    target = tmp_path / "x.jsonl"
    done = run("run", "--world", "empty", "--duration", "0.1", "--output", str(target))
    assert done.returncode == 0, done.stderr
    assert target.read_text().count("\n") > 0


def test_urdf_writes_the_model_and_its_controllers_as_the_readme_says(tmp_path):
    done = run("urdf", "P2AT", "--output", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["P2AT.urdf", "P2AT.yaml"]
    assert (tmp_path / "P2AT.urdf").read_text() == (ROOT / "urdf" / "P2AT.urdf").read_text()
    assert (tmp_path / "P2AT.yaml").read_text() == (ROOT / "config" / "controllers" / "P2AT.yaml").read_text()
    row = next(line for line in (ROOT / "README.md").read_text().splitlines() if line.startswith("| `usarsim urdf"))
    assert "urdf/<Class>.urdf" in row and "config/controllers/<Class>.yaml" in row
    assert re.search(r"config/controllers", run("urdf", "--help").stdout)


def test_urdf_of_an_unknown_class_writes_nothing(tmp_path):
    out = tmp_path / "models"
    done = run("urdf", "P2AT", "Nope", "--output", str(out))
    assert done.returncode == 2 and "unknown robot class 'Nope'" in done.stderr
    assert not out.exists()
