"""docs/tutorial.md's ROS 2 controller, run as written against usarsim_node started as the page says."""
from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

pytest.importorskip("rclpy")
pytest.importorskip("geometry_msgs.msg")

from doc_blocks import commands, program  # noqa: E402
from ros_domains import fresh_domain_id  # noqa: E402

PAGE = "tutorial.md"
WAIT = 300  # wall seconds for the node to start and the program to finish on a loaded machine


def test_the_ros_controller_drives_until_the_wall(tmp_path):
    (node_line,) = commands(PAGE, "usarsim_node")
    env = dict(os.environ, ROS_DOMAIN_ID=str(fresh_domain_id()), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST",
               PYTHONUNBUFFERED="1")
    with open(tmp_path / "node.log", "w") as log:
        node = subprocess.Popen([sys.executable, "-m", "usarsim.ros.node", *node_line[1:]], env=env,
                                stdout=log, stderr=subprocess.STDOUT)
        try:
            done = subprocess.run([sys.executable, "-c", program(PAGE, "first_controller_ros.py")], env=env,
                                  capture_output=True, text=True, timeout=WAIT, cwd=tmp_path)
        finally:
            node.send_signal(signal.SIGINT)
            node.wait(timeout=WAIT)
    assert done.returncode == 0, done.stderr + (tmp_path / "node.log").read_text()[-2000:]
    lines = done.stdout.strip().splitlines()
    steps = [line for line in lines if "nearest ahead" in line]
    assert len(steps) > 5 and lines[-1] == "stopped", done.stdout
    last = float(steps[-1].split("nearest ahead")[1].split()[0])
    elapsed = float(steps[-1].split("=")[1].split()[0])
    assert last < 1.0 or elapsed > 15.0, done.stdout
