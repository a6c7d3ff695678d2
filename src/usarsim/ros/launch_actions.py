"""launch_ros actions for the launch files: the bridge node and, per robot, RViz, Nav2 and ros2_control.

Used only by ``launch/*.launch.py`` (it imports launch and launch_ros); what to start is decided
by ``usarsim.launch_support``, which needs no ROS install.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from launch.actions import DeclareLaunchArgument, LogInfo, Shutdown
from launch_ros.actions import Node

from usarsim.launch_support import (NAV2, ROS2_CONTROL, RVIZ, Extra, NodeSpec, missing_packages, nav2_nodes, nav2_params,
                                    not_installed_message, ros2_control_nodes, rviz_node, start_pose, write_params)


def rate_arguments() -> list[DeclareLaunchArgument]:
    """``<kind>_rate`` launch arguments, one per sensor kind the bridge paces (``rates.<kind>``)."""
    from usarsim.ros.convert import rate_kinds
    from usarsim.ros.rates import DEFAULT_RATES

    return [DeclareLaunchArgument(f"{kind}_rate", default_value=str(DEFAULT_RATES.get(kind, 0.0)),
                                  description=f"Hz of sim time of {', '.join(types)} sensors (0: the catalogue's)")
            for kind, types in rate_kinds().items()]


def rate_params(value: dict[str, str]) -> dict[str, float]:
    """The bridge's ``rates.<kind>`` parameters from the launch arguments ``<kind>_rate``."""
    from usarsim.ros.convert import rate_kinds

    return {f"rates.{kind}": float(value[f"{kind}_rate"]) for kind in rate_kinds() if f"{kind}_rate" in value}


def true(text: str) -> bool:
    """A launch argument's truth value."""
    return str(text).strip().lower() in ("true", "1", "yes", "on")


def node(spec: NodeSpec, output: str = "screen") -> Node:
    """A launch_ros Node from a NodeSpec."""
    return Node(package=spec.package, executable=spec.executable, name=spec.name, namespace=spec.namespace or None,
                parameters=spec.parameters or None, remappings=spec.remappings or None,
                arguments=spec.arguments or None, output=output)


def _not_installed(extra: Extra) -> LogInfo | None:
    """The line saying ``extra`` is asked for but not installed; None when it is installed."""
    missing = missing_packages(extra.packages)
    if not missing:
        return None
    return LogInfo(msg=not_installed_message(extra.feature, missing, extra.argument, extra.install))


def _world_map(share: Path, world: str) -> Path:
    named = share / "worlds" / f"{world}_map.yaml"
    return named if named.is_file() else Path(world).with_name(Path(world).stem + "_map.yaml")


def robot_stack(share: Path, value: dict[str, str], bridge_params: dict[str, Any],
                robots: list[tuple[str, str]]) -> list[Any]:
    """The bridge node, then for each (name, class): Nav2 and ros2_control if asked; RViz for the first robot."""
    from usarsim.sim.urdf import generate_urdf
    from usarsim.sim.catalogue import load_robot
    from usarsim.sim.ros2_control import controller_name, group_joints

    # without the simulator nothing else has work to do: its exit (a bad world, say) ends the launch
    bridge_params = {**rate_params(value), **bridge_params}
    actions: list[Any] = [Node(package="usarsim", executable="usarsim_node", name="usarsim", output="screen",
                               parameters=[str(share / "config" / "usarsim_node.yaml"), bridge_params],
                               on_exit=[Shutdown(reason="the simulator (usarsim_node) stopped")])]
    namespaced_tf = bool(bridge_params.get("multi_robot"))
    if true(value.get("nav", "false")):
        if absent := _not_installed(NAV2):
            actions.append(absent)
        else:
            from usarsim.sim.world import load_world

            amcl = value.get("localization") == "amcl"
            world = load_world(bridge_params["world"])
            map_yaml = _world_map(share, bridge_params["world"])
            for (name, _), entry in zip(robots, bridge_params["robots"]):
                doc = nav2_params(name, share / "config" / "nav2_params.yaml", map_yaml, amcl, start_pose(world, entry))
                params = write_params(doc, name)
                actions += [node(spec) for spec in nav2_nodes(name, params, amcl)]
    if true(value.get("ros2_control", "false")):
        if absent := _not_installed(ROS2_CONTROL):
            actions.append(absent)
        else:
            for name, class_name in robots:
                spec = load_robot(class_name)
                names = [controller_name(g) for g in group_joints(spec)]
                controllers = share / "config" / "controllers" / f"{spec.class_name}.yaml"
                actions += [node(s) for s in ros2_control_nodes(name, generate_urdf(spec), controllers, names)]
    if true(value.get("rviz", "false")) and robots:
        fixed = "map" if bridge_params.get("publish_map_to_odom") else "odom"
        rviz = node(rviz_node(robots[0][0], share / "config" / "usarsim.rviz", fixed, namespaced_tf), "log")
        actions.append(_not_installed(RVIZ) or rviz)
    return actions
