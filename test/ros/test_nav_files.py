"""What Nav2 reads that needs no ROS graph: the shipped maps as map_server loads them, the launch's Nav2
parameters and cmd_vel chain (test/ros/test_nav_contract.py drives the bridge)."""
from pathlib import Path

import numpy as np
import pytest
import yaml
from PIL import Image

from usarsim.launch_support import (NAV2_INSTALL, NAV2_PACKAGES, missing_packages, nav2_nodes, nav2_params,
                                    not_installed_message)
from usarsim.paths import share_dir
from usarsim.sim.world import available_worlds, load_world

SHARE = share_dir()


def load_map(world: str) -> tuple[np.ndarray, dict]:
    """The occupancy grid as map_server (trinary mode) reads it: True = free, row 0 = lowest y."""
    meta = yaml.safe_load((SHARE / "worlds" / f"{world}_map.yaml").read_text())
    pixels = np.asarray(Image.open(SHARE / "worlds" / meta["image"]), dtype=float)
    occupancy = (255.0 - pixels) / 255.0 if not meta["negate"] else pixels / 255.0
    free = occupancy < meta["free_thresh"]
    return free[::-1], meta


@pytest.mark.parametrize("world", available_worlds())
def test_shipped_map_loads_as_map_server_reads_it(world):
    meta = yaml.safe_load((SHARE / "worlds" / f"{world}_map.yaml").read_text())
    assert {"image", "resolution", "origin", "occupied_thresh", "free_thresh", "negate", "mode"} <= set(meta)
    assert (SHARE / "worlds" / meta["image"]).is_file()
    free, meta = load_map(world)
    res, (ox, oy, _) = meta["resolution"], meta["origin"]
    for start in load_world(world).start_poses:  # every start pose is free space on the map
        row, col = int((start.xyz[1] - oy) / res), int((start.xyz[0] - ox) / res)
        assert free[row, col], f"{world} {start.tag}"


ROBOT = "scout"


def test_launch_parameters_and_cmd_vel_chain():
    doc = nav2_params(ROBOT, SHARE / "config" / "nav2_params.yaml", SHARE / "worlds" / "yellow_map.yaml", amcl=False)
    params = doc[ROBOT]
    assert "amcl" not in params and params["map_server"]["ros__parameters"]["yaml_filename"].endswith("yellow_map.yaml")
    text = yaml.safe_dump(params)
    assert "/P2AT" not in text and "topic: scan" in text, "topics are relative to the robot's namespace"
    assert params["controller_server"]["ros__parameters"]["enable_stamped_cmd_vel"] is True
    nodes = nav2_nodes(ROBOT, "params.yaml", amcl=True)
    assert {n.namespace for n in nodes} == {ROBOT}
    smoother = next(n for n in nodes if n.name == "velocity_smoother")
    assert ("cmd_vel_smoothed", "cmd_vel") in smoother.remappings, "the smoothed command reaches <robot>/cmd_vel"
    assert all(("/tf", "tf") in n.remappings for n in nodes if n.name != "lifecycle_manager_navigation")
    manager = next(n for n in nodes if n.name == "lifecycle_manager_navigation")
    assert set(manager.parameters[0]["node_names"]) == {n.name for n in nodes} - {manager.name}
    missing = missing_packages(NAV2_PACKAGES)
    if missing:  # CI: no Nav2; the launch says so in one line
        message = not_installed_message("Nav2", missing, "nav:=true", NAV2_INSTALL)
        assert "nav:=true" in message and "nav2_bt_navigator" in message


def test_launch_starts_a_stack_per_robot(monkeypatch):
    """robot_stack as `ros2 launch` runs it, with launch_ros's classes recorded instead of started."""
    import importlib
    import sys
    import types

    class Recorded:
        def __init__(self, **kwargs):
            self.kwargs = kwargs

    class LogInfo(Recorded):
        pass

    class Shutdown(Recorded):
        pass

    class Node(Recorded):
        pass

    class DeclareLaunchArgument(Recorded):
        def __init__(self, name, **kwargs):
            super().__init__(name=name, **kwargs)

    fakes = {"launch": types.ModuleType("launch"), "launch.actions": types.ModuleType("launch.actions"),
             "launch_ros": types.ModuleType("launch_ros"), "launch_ros.actions": types.ModuleType("launch_ros.actions")}
    fakes["launch.actions"].LogInfo, fakes["launch.actions"].Shutdown = LogInfo, Shutdown
    fakes["launch.actions"].DeclareLaunchArgument = DeclareLaunchArgument
    fakes["launch_ros.actions"].Node = Node
    for name, module in fakes.items():
        monkeypatch.setitem(sys.modules, name, module)
    sys.modules.pop("usarsim.ros.launch_actions", None)
    try:
        _check_stacks(importlib.import_module("usarsim.ros.launch_actions"), monkeypatch)
    finally:
        sys.modules.pop("usarsim.ros.launch_actions", None)  # not kept bound to the fakes


def _check_stacks(actions, monkeypatch):
    monkeypatch.setattr(actions, "missing_packages", lambda packages: [])  # as if Nav2 and ros2_control were installed
    bridge = {"world": "yellow", "robots": ["a:Kenaf", "b:P2AT:Start3"], "multi_robot": True, "publish_map_to_odom": True}
    started = actions.robot_stack(SHARE, {"nav": "true", "ros2_control": "true", "rviz": "true", "localization": "amcl",
                                          "imu_rate": "100", "scan_rate": "10.0", "physics_rate": "200"},
                                  bridge,
                                  [("a", "Kenaf"), ("b", "P2AT")])
    assert all(isinstance(a, actions.Node) for a in started)  # everything installed: no "not installed" lines
    # the launch ends when the simulator stops
    simulator = next(a for a in started if a.kwargs["executable"] == "usarsim_node")
    assert any(isinstance(a, actions.Shutdown) for a in simulator.kwargs["on_exit"])
    # <kind>_rate launch arguments become the bridge's rates.<kind> (and nothing else ending in _rate does)
    params = simulator.kwargs["parameters"][1]
    assert params["rates.imu"] == 100.0 and params["rates.scan"] == 10.0 and "rates.physics" not in params
    declared = {a.kwargs["name"]: a.kwargs["default_value"] for a in actions.rate_arguments()}
    assert declared["imu_rate"] == "50.0" and declared["odom_rate"] == "20.0" and declared["scan_rate"] == "0.0"
    by_robot = {}
    for action in started:
        by_robot.setdefault(action.kwargs.get("namespace"), []).append(action.kwargs["executable"])
    for robot in ("a", "b"):
        assert {"map_server", "planner_server", "controller_server", "bt_navigator", "velocity_smoother",
                "lifecycle_manager", "ros2_control_node", "spawner"} <= set(by_robot[robot])
    spawned = [a.kwargs["arguments"][0] for a in started if a.kwargs["executable"] == "spawner"
               and a.kwargs["namespace"] == "a"]
    assert spawned == ["flippers_controller", "camerapantilt_controller", "wheels_controller"]
    amcl_b = next(a for a in started if a.kwargs["executable"] == "amcl" and a.kwargs["namespace"] == "b")
    start = yaml.safe_load(Path(amcl_b.kwargs["parameters"][0]).read_text())["b"]["amcl"]["ros__parameters"]["initial_pose"]
    start3 = load_world("yellow").start_poses[2]
    assert (start["x"], start["y"], start["yaw"]) == pytest.approx((start3.xyz[0], start3.xyz[1], start3.rpy[2]))
    rviz = next(a for a in started if a.kwargs["executable"] == "rviz2")
    assert ("/tf", "/a/tf") in rviz.kwargs["remappings"] and rviz.kwargs["arguments"][-2:] == ["-f", "map"]
    # without RViz (a server, CI), rviz:=true starts no rviz2 and says so in one line
    monkeypatch.setattr(actions, "missing_packages", lambda packages: list(packages))
    started = actions.robot_stack(SHARE, {"rviz": "true"}, bridge, [("a", "Kenaf"), ("b", "P2AT")])
    assert not any(isinstance(a, actions.Node) and a.kwargs["executable"] == "rviz2" for a in started)
    logs = [a.kwargs["msg"] for a in started if isinstance(a, actions.LogInfo)]
    assert len(logs) == 1 and logs[0].startswith("rviz:=true needs RViz") and "rviz:=false" in logs[0], logs
