"""What the launch files start besides the bridge, as plain data: Nav2 per robot, ros2_control per robot, RViz.

Kept free of ``launch`` imports so it can be checked without a ROS 2 install; ``launch/*.launch.py``
turn each ``NodeSpec`` into a ``launch_ros.actions.Node``. Nav2 runs in the robot's namespace with
its TF remapped to ``<robot>/tf`` (the bridge's multi-robot layout, used for one robot too), the
shipped map of the world, and the bridge publishing map -> odom from ground truth unless AMCL
localises (``localization:=amcl``).
"""
from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

NAV2_PACKAGES = ("nav2_map_server", "nav2_planner", "nav2_controller", "nav2_behaviors", "nav2_bt_navigator",
                 "nav2_velocity_smoother", "nav2_lifecycle_manager")
ROS2_CONTROL_PACKAGES = ("controller_manager", "topic_based_ros2_control")
# what every node of a robot's stack remaps: TF lives in the robot's namespace
TF_REMAPS = (("/tf", "tf"), ("/tf_static", "tf_static"))


@dataclass
class NodeSpec:
    """One node a launch file starts."""

    package: str
    executable: str
    name: str
    namespace: str = ""
    parameters: list[Any] = field(default_factory=list)
    remappings: list[tuple[str, str]] = field(default_factory=list)
    arguments: list[str] = field(default_factory=list)


def missing_packages(packages: tuple[str, ...]) -> list[str]:
    """The packages of ``packages`` the ament index does not know (all of them without a ROS 2 install)."""
    try:
        from ament_index_python.packages import PackageNotFoundError, get_package_share_directory
    except ImportError:
        return list(packages)
    missing = []
    for package in packages:
        try:
            get_package_share_directory(package)
        except (PackageNotFoundError, OSError):  # OSError: no AMENT_PREFIX_PATH at all
            missing.append(package)
    return missing


NAV2_INSTALL = "sudo apt install ros-$ROS_DISTRO-navigation2"
ROS2_CONTROL_INSTALL = ("sudo apt install ros-$ROS_DISTRO-ros2-control ros-$ROS_DISTRO-ros2-controllers, and build "
                        "https://github.com/PickNikRobotics/topic_based_ros2_control in your workspace (no binary)")


@dataclass(frozen=True)
class Extra:
    """Software a launch argument starts beside the simulator, which runs without it."""

    feature: str
    argument: str  # the argument as the user turns it on, e.g. nav:=true
    packages: tuple[str, ...]
    install: str


NAV2 = Extra("Nav2", "nav:=true", NAV2_PACKAGES, NAV2_INSTALL)
ROS2_CONTROL = Extra("ros2_control", "ros2_control:=true", ROS2_CONTROL_PACKAGES, ROS2_CONTROL_INSTALL)
# rviz defaults to true in arena.launch.py: a machine without RViz (a server, CI) must still launch
RVIZ = Extra("RViz", "rviz:=true", ("rviz2",), "sudo apt install ros-$ROS_DISTRO-rviz2")


def not_installed_message(feature: str, missing: list[str], argument: str, install: str) -> str:
    """The one clear line a launch prints when ``argument`` asks for software that is not installed."""
    off = argument.replace(":=true", ":=false")
    return (f"{argument} needs {feature}, which is not installed (missing: {', '.join(missing)}). "
            f"Install it ({install}) or set {off}; the simulator runs without it.")


def nav2_params(robot: str, template: Path, map_yaml: Path, amcl: bool,
                initial_pose: tuple[float, float, float] | None = None) -> dict[str, Any]:
    """The shipped Nav2 parameters under the robot's namespace, with the world's map and, for AMCL,
    the robot's start pose (x, y, yaw in the map frame)."""
    doc = yaml.safe_load(template.read_text(encoding="utf-8"))
    doc["map_server"]["ros__parameters"]["yaml_filename"] = str(map_yaml)
    if not amcl:
        doc.pop("amcl", None)
    elif initial_pose is not None:
        x, y, yaw = (float(v) for v in initial_pose)
        doc["amcl"]["ros__parameters"]["initial_pose"] = {"x": x, "y": y, "z": 0.0, "yaw": yaw}
    return {robot: doc}


def start_pose(world: Any, entry: str) -> tuple[float, float, float]:
    """(x, y, yaw) where a ``robots`` entry ('name:Class[:start]') starts in ``world`` (a WorldSpec)."""
    from usarsim.ros.robot_entry import parse_robot_entry

    parsed = parse_robot_entry(entry)
    if parsed.position is not None:
        return parsed.position[0], parsed.position[1], parsed.yaw or 0.0
    pose = next((p for p in world.start_poses if parsed.start and p.tag.lower() == parsed.start.lower()),
                world.start_poses[0])
    return pose.xyz[0], pose.xyz[1], pose.rpy[2]


def write_params(doc: dict[str, Any], stem: str) -> str:
    """A parameters file for ``doc`` (launch passes files to nodes)."""
    handle = tempfile.NamedTemporaryFile("w", suffix=".yaml", prefix=f"usarsim-{stem}-", delete=False)
    with handle:
        yaml.safe_dump(doc, handle, sort_keys=False)
    return handle.name


def nav2_nodes(robot: str, params_file: str, amcl: bool) -> list[NodeSpec]:
    """Map server, (AMCL,) planner, controller, behaviors, BT navigator, velocity smoother, lifecycle manager."""
    remaps = list(TF_REMAPS)
    common: dict[str, Any] = {"namespace": robot, "parameters": [params_file, {"use_sim_time": True}]}
    nodes = [NodeSpec("nav2_map_server", "map_server", "map_server", remappings=remaps, **common)]
    if amcl:
        nodes.append(NodeSpec("nav2_amcl", "amcl", "amcl", remappings=remaps, **common))
    nodes += [
        NodeSpec("nav2_planner", "planner_server", "planner_server", remappings=remaps, **common),
        # the controller's output is smoothed; the smoother's output is the robot's cmd_vel
        NodeSpec("nav2_controller", "controller_server", "controller_server",
                 remappings=remaps + [("cmd_vel", "cmd_vel_nav")], **common),
        NodeSpec("nav2_behaviors", "behavior_server", "behavior_server",
                 remappings=remaps + [("cmd_vel", "cmd_vel_nav")], **common),
        NodeSpec("nav2_bt_navigator", "bt_navigator", "bt_navigator", remappings=remaps, **common),
        NodeSpec("nav2_velocity_smoother", "velocity_smoother", "velocity_smoother",
                 remappings=remaps + [("cmd_vel", "cmd_vel_nav"), ("cmd_vel_smoothed", "cmd_vel")], **common),
    ]
    managed = [n.name for n in nodes]
    nodes.append(NodeSpec("nav2_lifecycle_manager", "lifecycle_manager", "lifecycle_manager_navigation",
                          namespace=robot, parameters=[{"use_sim_time": True, "autostart": True,
                                                        "node_names": managed}]))
    return nodes


def ros2_control_nodes(robot: str, urdf_text: str, controllers_file: Path, controllers: list[str]) -> list[NodeSpec]:
    """The controller manager (topic-based hardware) in the robot's namespace and a spawner per controller."""
    manager = NodeSpec("controller_manager", "ros2_control_node", "controller_manager", namespace=robot,
                       parameters=[{"robot_description": urdf_text, "use_sim_time": True}, str(controllers_file)],
                       remappings=list(TF_REMAPS))
    spawners = [NodeSpec("controller_manager", "spawner", f"spawner_{name}", namespace=robot,
                         arguments=[name, "--controller-manager", f"/{robot}/controller_manager"])
                for name in controllers]
    return [manager, *spawners]


def rviz_node(robot: str, config: Path, fixed_frame: str, namespaced_tf: bool) -> NodeSpec:
    """RViz showing one robot: the shipped config's /robot/ topics moved to /<robot>/, its TF (namespaced in
    multi-robot mode) and goals sent to the robot's Nav2."""
    leaves = ("scan", "odom", "camera/image_raw", "camera/camera_info", "robot_description",
              "victim/VictSensor/markers", "rfid/RFID/markers")
    remaps = [("/goal_pose", f"/{robot}/goal_pose"), ("/initialpose", f"/{robot}/initialpose")]
    if namespaced_tf:
        remaps += [("/tf", f"/{robot}/tf"), ("/tf_static", f"/{robot}/tf_static")]
    remaps += [(f"/robot/{leaf}", f"/{robot}/{leaf}") for leaf in leaves]
    return NodeSpec("rviz2", "rviz2", f"rviz2_{robot}", arguments=["-d", str(config), "-f", fixed_frame],
                    parameters=[{"use_sim_time": True}], remappings=remaps)


__all__ = ["Extra", "NAV2", "NAV2_INSTALL", "NAV2_PACKAGES", "ROS2_CONTROL", "ROS2_CONTROL_INSTALL", "NodeSpec",
           "ROS2_CONTROL_PACKAGES", "RVIZ",
           "missing_packages", "nav2_nodes", "nav2_params", "not_installed_message", "ros2_control_nodes",
           "rviz_node", "start_pose", "write_params"]
