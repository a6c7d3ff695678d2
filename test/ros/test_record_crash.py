"""A recording stopped early keeps what it recorded: SIGINT/SIGTERM finish the bag, SIGKILL loses at most one chunk."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("rclpy.serialization", reason="ROS 2 message packages not installed")
rosbag2 = pytest.importorskip("rosbags.rosbag2")

from usarsim.bagfile import is_complete, repair  # noqa: E402
from usarsim.record import RecordOptions, record  # noqa: E402
from patience import PATIENCE  # noqa: E402
from usarsim.ros.rates import DEFAULT_CLOCK_RATE  # noqa: E402

CHUNK_SECONDS = 1.0


def recorder(out: Path) -> subprocess.Popen:
    """``usarsim record`` of a long run, in its own process."""
    return subprocess.Popen(
        [sys.executable, "-m", "usarsim.cli", "record", "--world", "yellow", "--duration", "600", "--drive", "2,2",
         "--chunk-seconds", str(CHUNK_SECONDS), "--output", str(out)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def wait_for_data(out: Path, proc: subprocess.Popen, size: int = 300_000) -> None:
    """Until the recording has sealed a few chunks on disk (bounded)."""
    deadline = time.monotonic() + PATIENCE
    while time.monotonic() < deadline and proc.poll() is None:
        if out.exists() and out.stat().st_size > size:
            return
        time.sleep(0.05)
    raise AssertionError(f"the recorder wrote nothing (rc {proc.poll()}): {proc.stderr.read() if proc.stderr else ''}")


def bag_contents(path: Path) -> tuple[int, int]:
    """(messages, /clock messages) read back with rosbags."""
    with rosbag2.Reader(path) as reader:
        clock = [c for c in reader.connections if c.topic == "/clock"]
        total = sum(1 for _ in reader.messages())
        clocks = sum(1 for _ in reader.messages(connections=clock))
    return total, clocks


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 0)])
def test_signal_finishes_the_bag(tmp_path, sig, code):
    out = tmp_path / "run.mcap"
    proc = recorder(out)
    wait_for_data(out, proc)
    proc.send_signal(sig)
    assert proc.wait(timeout=PATIENCE) == code
    assert is_complete(out)
    total, clocks = bag_contents(out)
    assert total > 500 and clocks > 50  # at least what was on disk (300 kB) when the signal came
    assert [p.name for p in tmp_path.iterdir()] == ["run.mcap"]  # no staging folder left


def test_directory_bag_gets_metadata_on_sigterm(tmp_path):
    out = tmp_path / "run"
    proc = recorder(out)
    wait_for_data(out / "run.mcap", proc)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=PATIENCE) == 0
    assert (out / "metadata.yaml").is_file()
    with rosbag2.Reader(out) as reader:  # the directory form is read through metadata.yaml
        assert reader.message_count == sum(1 for _ in reader.messages()) > 500


def test_sigkill_loses_at_most_the_last_chunk_and_repair_restores_the_rest(tmp_path):
    out = tmp_path / "run.mcap"
    proc = recorder(out)
    wait_for_data(out, proc)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=PATIENCE)
    assert not is_complete(out)
    with pytest.raises(Exception):  # noqa: B017  cut off: the standard reader fails on it in its own way
        bag_contents(out)
    size_at_kill = out.stat().st_size
    report = repair(out)
    assert report.messages > 500 and report.chunks >= 2
    total, clocks = bag_contents(out)
    assert total == report.messages
    # Everything before the last chunk is there: /clock runs at its rate without a gap.
    with rosbag2.Reader(out) as reader:
        clock = [c for c in reader.connections if c.topic == "/clock"]
        stamps = [t for _, t, _ in reader.messages(connections=clock)]
    period = round(1e9 / DEFAULT_CLOCK_RATE)
    assert stamps[0] == 0 and all(b - a == period for a, b in zip(stamps, stamps[1:]))
    assert clocks >= report.chunks * DEFAULT_CLOCK_RATE * CHUNK_SECONDS - 1
    assert size_at_kill > 0 and not list(tmp_path.glob(".run.*"))  # the staging folder is cleaned up


def test_same_seed_gives_byte_identical_bags(tmp_path):
    options = RecordOptions(world="empty", robot="P2AT", seed=11, duration=1.0, drive=(1.0, 0.5))
    first, second = tmp_path / "a" / "run.mcap", tmp_path / "b" / "run.mcap"
    record(options, first)
    record(options, second)
    assert first.read_bytes() == second.read_bytes()
