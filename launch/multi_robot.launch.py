"""Several robots in one world from a YAML file (config/multi_robot.yaml by default), in multi-robot mode.

ros2 launch usarsim multi_robot.launch.py robots_file:=/path/to/team.yaml rviz:=true nav:=true
Each robot lives in its own namespace /<name>/ with its own TF (/<name>/tf, /<name>/tf_static) and
plain frame names (map, odom, base_link ...), as Nav2's multi-robot bringup expects; map -> odom
comes from ground truth unless localization:=amcl. nav:=true starts a Nav2 stack per robot.
"""
from pathlib import Path

import yaml
from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration

from usarsim.ros.launch_actions import rate_arguments, robot_stack, true


def robot_entries(doc: dict) -> list[tuple[str, str, str]]:
    """(name, class, 'name:Class[:start]') for each of the YAML's robots (each with name, class, optional start)."""
    out = []
    for i, robot in enumerate(doc.get("robots") or []):
        if "class" not in robot:
            raise ValueError(f"robots[{i}] needs a 'class'")
        name = robot.get("name") or f"{robot['class']}_{i + 1}"
        start = robot.get("start")
        if isinstance(start, (list, tuple)):
            start = ",".join(str(v) for v in start)
        out.append((name, robot["class"], f"{name}:{robot['class']}" + (f":{start}" if start else "")))
    return out


def _launch(context, share: Path):
    value = dict(context.launch_configurations)
    path = Path(LaunchConfiguration("robots_file").perform(context))
    doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    robots = robot_entries(doc)
    amcl = value["localization"] == "amcl"
    params = {"world": value["world"] or doc.get("world", "yellow"), "robots": [e for _, _, e in robots],
              "multi_robot": True, "pacing": value["pacing"], "protocol": true(value["protocol"]),
              "publish_map_to_odom": true(value["map_tf"]) and not amcl, "qos": value["qos"]}
    if true(value["nav"]):
        params["cmd_vel_stamped"] = True  # the shipped nav2_params.yaml enables stamped cmd_vel
    return robot_stack(share, value, params, [(name, cls) for name, cls, _ in robots])


def generate_launch_description() -> LaunchDescription:
    share = Path(get_package_share_directory("usarsim"))
    return LaunchDescription([
        *rate_arguments(),  # <kind>_rate:=Hz of each sensor kind (imu_rate, odom_rate, scan_rate, ...)
        DeclareLaunchArgument("robots_file", default_value=str(share / "config" / "multi_robot.yaml"),
                              description="YAML with 'world' and a 'robots' list of {name, class, start}"),
        DeclareLaunchArgument("world", default_value="", description="override the file's world"),
        DeclareLaunchArgument("pacing", default_value="realtime", description="realtime, fast or lockstep"),
        DeclareLaunchArgument("protocol", default_value="false", description="also serve the text protocol"),
        DeclareLaunchArgument("map_tf", default_value="true",
                              description="map -> odom from ground truth, so all robots share the map frame"),
        DeclareLaunchArgument("nav", default_value="false", description="a Nav2 stack per robot"),
        DeclareLaunchArgument("localization", default_value="ground_truth", description="ground_truth or amcl"),
        DeclareLaunchArgument("ros2_control", default_value="false", description="a controller manager per robot"),
        DeclareLaunchArgument("qos", default_value="reliable", description="sensor topics: reliable or best_effort"),
        DeclareLaunchArgument("rviz", default_value="false", description="start RViz for the first robot"),
        OpaqueFunction(function=_launch, args=[share]),
    ])
