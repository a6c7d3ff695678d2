"""One robot in an arena: the usarsim bridge node, optionally RViz, Nav2, ros2_control and the text protocol.

ros2 launch usarsim arena.launch.py world:=yellow robot:=P2AT name:=robot1 start:=Start1 rviz:=true nav:=true
"""
from pathlib import Path

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction

from usarsim.ros.launch_actions import rate_arguments, robot_stack, true

ARGS = {
    "world": ("yellow", "world name (usarsim worlds) or world YAML path"),
    "robot": ("P2AT", "robot class from the catalogue (usarsim robots)"),
    "name": ("", "robot name = topic namespace (default: <robot>_1)"),
    "start": ("", "start-pose name of the world or x,y[,z[,yaw]] (default: the world's first)"),
    "rviz": ("true", "start RViz with config/usarsim.rviz"),
    "protocol": ("false", "also serve the USARSim text protocol (TCP 3000, images 5003)"),
    "pacing": ("realtime", "realtime, fast or lockstep"),
    "map_tf": ("false", "publish map -> odom from ground truth (no SLAM/AMCL needed; on with nav:=true)"),
    "nav": ("false", "start Nav2 (map server, planner, controller, behaviors, BT navigator) for the robot"),
    "localization": ("ground_truth", "with nav:=true: ground_truth (map -> odom from the simulator) or amcl"),
    "ros2_control": ("false", "start the controller manager and the robot's joint-group controllers"),
    "qos": ("reliable", "sensor topics: reliable or best_effort"),
    "noise": ("true", "sensor noise (false: every sensor reads the true value)"),
    "imu_orientation": ("world", "IMU orientation: world (yaw 0 = north) or enu (yaw 0 = east)"),
}


def _launch(context, share: Path):
    value = dict(context.launch_configurations)
    name = value["name"] or f"{value['robot']}_1"
    entry = f"{name}:{value['robot']}" + (f":{value['start']}" if value["start"] else "")
    nav = true(value["nav"])
    amcl = value["localization"] == "amcl"
    params = {
        "world": value["world"],
        "robots": [entry],
        "pacing": value["pacing"],
        "protocol": true(value["protocol"]),
        "publish_map_to_odom": true(value["map_tf"]) or (nav and not amcl),
        "frame_prefix": "",
        "multi_robot": nav,  # Nav2 in the robot's namespace reads <robot>/tf
        "qos": value["qos"],
        "noise": true(value["noise"]),
        "imu_orientation": value["imu_orientation"],
    }
    if nav:
        params["cmd_vel_stamped"] = True  # the shipped nav2_params.yaml enables stamped cmd_vel
    return robot_stack(share, value, params, [(name, value["robot"])])


def generate_launch_description() -> LaunchDescription:
    share = Path(get_package_share_directory("usarsim"))
    return LaunchDescription([
        *rate_arguments(),  # <kind>_rate:=Hz of each sensor kind (imu_rate, odom_rate, scan_rate, ...)
        *(DeclareLaunchArgument(k, default_value=d, description=text) for k, (d, text) in ARGS.items()),
        OpaqueFunction(function=_launch, args=[share]),
    ])
