"""Several robots in one world from a YAML file (config/multi_robot.yaml by default).

ros2 launch usarsim multi_robot.launch.py robots_file:=/path/to/team.yaml rviz:=false
Every robot's frames are prefixed with its name (<name>/base_link, <name>/odom ...).
"""
from pathlib import Path

import yaml
from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node


def robot_entries(doc: dict) -> list[str]:
    """'name:Class[:start]' strings from the YAML's robots list (each with name, class, optional start)."""
    out = []
    for i, robot in enumerate(doc.get("robots") or []):
        if "class" not in robot:
            raise ValueError(f"robots[{i}] needs a 'class'")
        name = robot.get("name") or f"{robot['class']}_{i + 1}"
        start = robot.get("start")
        if isinstance(start, (list, tuple)):
            start = ",".join(str(v) for v in start)
        out.append(f"{name}:{robot['class']}" + (f":{start}" if start else ""))
    return out


def _bridge(context, share: Path):
    path = Path(LaunchConfiguration("robots_file").perform(context))
    doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    world = LaunchConfiguration("world").perform(context) or doc.get("world", "yellow")
    params = {"world": world, "robots": robot_entries(doc), "frame_prefix": "{robot}/",
              "pacing": LaunchConfiguration("pacing").perform(context),
              "protocol": LaunchConfiguration("protocol").perform(context).lower() in ("true", "1", "yes"),
              "publish_map_to_odom": LaunchConfiguration("map_tf").perform(context).lower() in ("true", "1", "yes")}
    node = Node(package="usarsim", executable="usarsim_node", name="usarsim", output="screen",
                parameters=[str(share / "config" / "usarsim_node.yaml"), params])
    rviz = Node(package="rviz2", executable="rviz2", name="rviz2", output="log",
                arguments=["-d", str(share / "config" / "usarsim.rviz")], parameters=[{"use_sim_time": True}],
                condition=IfCondition(LaunchConfiguration("rviz")))
    return [node, rviz]


def generate_launch_description() -> LaunchDescription:
    share = Path(get_package_share_directory("usarsim"))
    return LaunchDescription([
        DeclareLaunchArgument("robots_file", default_value=str(share / "config" / "multi_robot.yaml"),
                              description="YAML with 'world' and a 'robots' list of {name, class, start}"),
        DeclareLaunchArgument("world", default_value="", description="override the file's world"),
        DeclareLaunchArgument("pacing", default_value="realtime", description="realtime, fast or lockstep"),
        DeclareLaunchArgument("protocol", default_value="false", description="also serve the text protocol"),
        DeclareLaunchArgument("map_tf", default_value="true",
                              description="map -> <name>/odom from ground truth, so all robots share the map frame"),
        DeclareLaunchArgument("rviz", default_value="false", description="start RViz"),
        OpaqueFunction(function=_bridge, args=[share]),
    ])
