"""Where the bootstrap installed ROS 2 (USARSIM_EXPECT_ROS=1, set by scripts/test.sh), every ROS
piece the bridge uses must import: a broken install fails the run instead of skipping its tests."""
import importlib
import os

import pytest

REQUIRED = ("rclpy", "rclpy.serialization", "sensor_msgs.msg", "nav_msgs.msg", "geometry_msgs.msg",
            "rosgraph_msgs.msg", "trajectory_msgs.msg", "visualization_msgs.msg", "tf2_msgs.msg", "usarsim_interfaces.msg",
            "usarsim_interfaces.srv", "simulation_interfaces.msg", "simulation_interfaces.srv", "simulation_interfaces.action",
            "rosbags.rosbag2", "rosbags.typesys")


def pytest_configure(config: pytest.Config) -> None:
    if os.environ.get("USARSIM_EXPECT_ROS") != "1":
        return
    missing = []
    for module in REQUIRED:
        try:
            importlib.import_module(module)
        except ImportError as exc:
            missing.append(f"{module} ({exc})")
    if missing:
        raise pytest.UsageError("ROS 2 was installed for these tests but does not import: " + "; ".join(missing))
