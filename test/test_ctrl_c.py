"""Ctrl-C (SIGINT) stops a command in the middle of a long world build: one line saying what was
stopped, exit status 130, and no half-written output (no world without its map, no empty bag)."""
from __future__ import annotations

import importlib.util
import os
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from patience import PATIENCE

SRC = Path(__file__).resolve().parents[1] / "src"


@pytest.fixture(scope="module")
def heavy_world(tmp_path_factory) -> Path:
    """A world within the limits that takes many seconds to build: 150 stairs of 1024 steps, 9000 boxes."""
    lines = ["name: heavy", "description: slow to build", "gps_origin: {lat: 0, lon: 0, alt: 0}",
             "start_poses: [{tag: S, xyz: [-5, -5, 0]}]", "static:"]
    lines += [f"  - {{kind: stairs, xyz: [{3 * i}, 120, 0], size: [2, 1, 1], steps: 1024}}" for i in range(150)]
    lines += [f"  - {{kind: box, xyz: [{i % 100}, {i // 100}, 0.5], size: [0.5, 0.5, 1]}}" for i in range(9000)]
    path = tmp_path_factory.mktemp("heavy") / "heavy.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def interrupted(args: list[str], cwd: Path) -> tuple[int, list[str]]:
    """Run ``usarsim -v ARGS``, send SIGINT once it logs that it builds a world; (exit status, stderr lines)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, "-m", "usarsim.cli", "-v", *args], cwd=cwd, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.put(line.rstrip("\n"))
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    seen: list[str] = []
    try:
        while True:
            line = lines.get(timeout=PATIENCE)
            assert line is not None, f"ended before building a world: {seen[-5:]}"
            seen.append(line)
            if "building world" in line:
                break
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=PATIENCE)
        while (line := lines.get(timeout=PATIENCE)) is not None:
            seen.append(line)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return code, [line for line in seen if " DEBUG " not in line and " INFO " not in line]


def test_run_stops_during_the_world_build(heavy_world, tmp_path):
    code, err = interrupted(["run", "--world", str(heavy_world), "--duration", "1", "--output", "out.jsonl"], tmp_path)
    assert code == 130
    assert err == ["usarsim run: stopped by Ctrl-C while starting up; nothing was left half done"]


def test_map_stops_and_leaves_no_map(heavy_world, tmp_path):
    code, err = interrupted(["map", str(heavy_world), "--resolution", "0.5", "--output", "maps"], tmp_path)
    assert code == 130
    assert err == [f"usarsim map: stopped by Ctrl-C while mapping '{heavy_world}'; its maps are as they were"]
    assert list((tmp_path / "maps").iterdir()) == []  # nor a scratch folder


def test_arena_stops_and_leaves_neither_world_nor_map(tmp_path):
    code, err = interrupted(["arena", "--seed", "4", "--size", "30,30", "--output", "out"], tmp_path)
    assert code == 130
    assert err == ["usarsim arena: stopped by Ctrl-C while drawing 'arena_yellow_4'; nothing written"]
    assert list((tmp_path / "out").iterdir()) == []


@pytest.mark.skipif(os.environ.get("USARSIM_EXPECT_ROS") != "1" and (importlib.util.find_spec("rclpy") is None
                                                                     or importlib.util.find_spec("rosbags") is None),
                    reason="usarsim record needs the ROS 2 message packages and rosbags")  # never skipped where ROS is expected
def test_record_stops_during_the_world_build_without_a_bag(heavy_world, tmp_path):
    code, err = interrupted(["record", "--world", str(heavy_world), "--duration", "1", "-o", "x.mcap"], tmp_path)
    assert code == 130
    assert err == ["usarsim record: stopped by SIGINT while loading the world; no bag written"]
    assert not (tmp_path / "x.mcap").exists()
