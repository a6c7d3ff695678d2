"""Sweep trials recorded as MCAP bags: readable by rosbags, with the robot's topics, for every trial."""
from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("rclpy.serialization", reason="ROS 2 message packages not installed")
pytest.importorskip("rosbags.rosbag2")

from test_record import read_bag, secs  # noqa: E402  (test/ros is on the path)
from usarsim.scale.sweep import SweepOptions, run_sweep  # noqa: E402


def test_each_trial_writes_its_bag(tmp_path: Path) -> None:
    sweep = tmp_path / "s.yaml"
    sweep.write_text("worlds: [yellow]\nrobots: [P2AT, P2DX]\nseeds: [0]\nduration: 1.0\ndrive: [2, 2]\n"
                     "record: {readings: false, bag: true}\n")
    report = run_sweep(sweep, SweepOptions(output=tmp_path / "out", workers=2, progress=False))
    assert [row["status"] for row in report.rows] == ["ok", "ok"]
    for row in report.rows:
        folder = tmp_path / "out" / "trials" / row["trial"]
        assert sorted(p.name for p in folder.iterdir()) == ["bag.mcap", "summary.json"]
        types, messages = read_bag(folder / "bag.mcap")
        name = f"{row['robot']}_1"
        assert types[f"/{name}/scan"] == "sensor_msgs/msg/LaserScan"
        assert types["/clock"] == "rosgraph_msgs/msg/Clock"
        clock = [secs(m.clock) for _, m in messages["/clock"]]
        assert clock[0] == 0.0 and clock[-1] == pytest.approx(1.0)
        assert len(messages[f"/{name}/odom"]) >= 4
