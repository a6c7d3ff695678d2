"""One robot in an arena: the usarsim bridge node, optionally RViz and the text protocol.

ros2 launch usarsim arena.launch.py world:=yellow robot:=P2AT name:=robot1 start:=Start1 rviz:=true
"""
from pathlib import Path

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

ARGS = {
    "world": ("yellow", "world name (usarsim worlds) or world YAML path"),
    "robot": ("P2AT", "robot class from the catalogue (usarsim robots)"),
    "name": ("", "robot name = topic namespace (default: <robot>_1)"),
    "start": ("", "start-pose name of the world or x,y[,z[,yaw]] (default: the world's first)"),
    "rviz": ("true", "start RViz with config/usarsim.rviz"),
    "protocol": ("false", "also serve the USARSim text protocol (TCP 3000, images 5003)"),
    "pacing": ("realtime", "realtime, fast or lockstep"),
    "map_tf": ("false", "publish map -> odom from ground truth (no SLAM/AMCL needed)"),
}


def _bridge(context, share: Path):
    value = {k: LaunchConfiguration(k).perform(context) for k in ARGS}
    name = value["name"] or f"{value['robot']}_1"
    entry = f"{name}:{value['robot']}" + (f":{value['start']}" if value["start"] else "")
    params = {
        "world": value["world"],
        "robots": [entry],
        "pacing": value["pacing"],
        "protocol": value["protocol"].lower() in ("true", "1", "yes"),
        "publish_map_to_odom": value["map_tf"].lower() in ("true", "1", "yes"),
        "frame_prefix": "",
    }
    node = Node(package="usarsim", executable="usarsim_node", name="usarsim", output="screen",
                parameters=[str(share / "config" / "usarsim_node.yaml"), params])
    # RViz's fixed frame in the shipped config is odom; remap the robot's TF-free topics it shows
    rviz = Node(package="rviz2", executable="rviz2", name="rviz2", output="log",
                arguments=["-d", str(share / "config" / "usarsim.rviz")],
                parameters=[{"use_sim_time": True}],
                remappings=[(f"/robot/{leaf}", f"/{name}/{leaf}") for leaf in
                            ("scan", "odom", "camera/image_raw", "camera/camera_info", "robot_description",
                             "victim/VictSensor/markers", "rfid/RFID/markers")],
                condition=IfCondition(LaunchConfiguration("rviz")))
    return [node, rviz]


def generate_launch_description() -> LaunchDescription:
    share = Path(get_package_share_directory("usarsim"))
    return LaunchDescription([
        *(DeclareLaunchArgument(k, default_value=d, description=text) for k, (d, text) in ARGS.items()),
        OpaqueFunction(function=_bridge, args=[share]),
    ])
