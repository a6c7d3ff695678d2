"""Ctrl-C under `ros2 launch`: the node gets SIGINT from the terminal and again from launch, mid-publishing,
and still stops cleanly (exit 0, no traceback, no publish errors after the ROS context is gone)."""
import signal
import subprocess

import pytest

rclpy = pytest.importorskip("rclpy")

from rclpy.qos import QoSProfile  # noqa: E402
from rosgraph_msgs.msg import Clock  # noqa: E402

from bridge_process import BridgeProcess  # noqa: E402
from patience import PATIENCE  # noqa: E402


def test_two_sigints_while_publishing_stop_the_node_cleanly(tmp_path):
    bridge = BridgeProcess(tmp_path / "node.log", ["world:=yellow", "robots:=['bot:P2AT']"])
    try:
        clock = bridge.listen(Clock, "/clock", QoSProfile(depth=10))
        assert bridge.wait_for(lambda: len(bridge.messages(clock)) > 20, PATIENCE), bridge.log_tail()
        assert bridge.proc.poll() is None, bridge.log_tail()  # publishing, not stopped yet
        bridge.proc.send_signal(signal.SIGINT)  # the terminal's
        bridge.proc.send_signal(signal.SIGINT)  # and at once launch forwards its own
        try:
            code = bridge.proc.wait(timeout=PATIENCE)
        except subprocess.TimeoutExpired:
            pytest.fail("the node did not stop on SIGINT\n" + bridge.log_tail())
        log = bridge.log_tail()
        assert code == 0, log
        assert "Traceback" not in log and "publishing failed" not in log, log
    finally:
        bridge.close()
