"""The ROS 2 programs of the newcomer's pages, run as written against usarsim_node started as
docs/tutorial.md says: the tutorial's controller and docs/troubleshooting.md's topic lister."""
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

WAIT = 300  # wall seconds for the node to start and a program to finish on a loaded machine


@pytest.fixture(scope="module")
def bridge(tmp_path_factory):
    """The tutorial's usarsim_node line on a private domain; the environment its clients need."""
    (node_line,) = commands("tutorial.md", "usarsim_node")
    env = dict(os.environ, ROS_DOMAIN_ID=str(fresh_domain_id()), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST",
               PYTHONUNBUFFERED="1")
    log_path = tmp_path_factory.mktemp("bridge") / "node.log"
    with open(log_path, "w") as log:
        node = subprocess.Popen([sys.executable, "-m", "usarsim.ros.node", *node_line[1:]], env=env,
                                stdout=log, stderr=subprocess.STDOUT)
        try:
            yield env, log_path
        finally:
            node.send_signal(signal.SIGINT)
            node.wait(timeout=WAIT)


def run_program(bridge, page: str, name: str, cwd) -> str:
    env, log_path = bridge
    done = subprocess.run([sys.executable, "-c", program(page, name)], env=env, capture_output=True, text=True,
                          timeout=WAIT, cwd=cwd)
    assert done.returncode == 0, done.stderr + log_path.read_text()[-2000:]
    return done.stdout


def test_the_topic_lister_shows_the_robots_topics(bridge, tmp_path):
    listed = run_program(bridge, "troubleshooting.md", "ros_topics.py", tmp_path).splitlines()
    assert "/R1/scan sensor_msgs/msg/LaserScan" in listed, listed
    assert "/R1/cmd_vel geometry_msgs/msg/TwistStamped" in listed, listed


def test_the_ros_controller_drives_until_the_wall(bridge, tmp_path):
    lines = run_program(bridge, "tutorial.md", "first_controller_ros.py", tmp_path).strip().splitlines()
    steps = [line for line in lines if "nearest ahead" in line]
    assert len(steps) > 5 and lines[-1] == "stopped", lines
    last = float(steps[-1].split("nearest ahead")[1].split()[0])
    elapsed = float(steps[-1].split("=")[1].split()[0])
    assert last < 1.0 or elapsed > 15.0, lines
