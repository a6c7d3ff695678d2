"""The launch files load under launch_ros and produce a correctly parameterised bridge node."""
import os
from pathlib import Path

import pytest
import yaml

if os.environ.get("ROS_DISTRO"):  # every ROS 2 install ships launch_ros: without it the install is broken
    import launch_ros  # noqa: F401
else:  # the ros-* wheels have no launch_ros (it is not on the package index)
    pytest.importorskip("launch_ros", reason="launch_ros comes only with a ROS 2 install")

from launch import LaunchContext  # noqa: E402
from launch.actions import DeclareLaunchArgument, LogInfo, OpaqueFunction, Shutdown  # noqa: E402
from launch.launch_description_sources import get_launch_description_from_python_launch_file  # noqa: E402
from launch_ros.actions import Node  # noqa: E402

from usarsim.launch_support import NAV2, RVIZ, missing_packages  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def ament_index(tmp_path, monkeypatch):
    """Make this checkout the share directory of package 'usarsim' (as colcon install would)."""
    index = tmp_path / "share" / "ament_index" / "resource_index" / "packages"
    index.mkdir(parents=True)
    (index / "usarsim").write_text("")
    (tmp_path / "share" / "usarsim").symlink_to(ROOT)
    monkeypatch.setenv("AMENT_PREFIX_PATH", f"{tmp_path}{os.pathsep}{os.environ.get('AMENT_PREFIX_PATH', '')}")


def _expand(launch_file: str, **args: str) -> tuple[list[DeclareLaunchArgument], list[Node], list[str]]:
    """The declared arguments, the nodes and the log lines of a launch file run with ``args``."""
    ld = get_launch_description_from_python_launch_file(str(ROOT / "launch" / launch_file))
    context = LaunchContext()
    declared = [e for e in ld.entities if isinstance(e, DeclareLaunchArgument)]
    for arg in declared:
        arg.visit(context)
    context.launch_configurations.update(args)
    actions = [a for e in ld.entities if isinstance(e, OpaqueFunction) for a in e.execute(context)]
    nodes = [a for a in actions if isinstance(a, Node)]
    for node in nodes:
        node._perform_substitutions(context)  # evaluates parameters (types, files) as `ros2 launch` would
    logs = ["".join(m.perform(context) for m in a.msg) for a in actions if isinstance(a, LogInfo)]
    return declared, nodes, logs


class _Loader(yaml.SafeLoader):
    """launch_ros dumps list parameters as !!python/tuple (rcl's parser ignores the tag)."""


_Loader.add_constructor("tag:yaml.org,2002:python/tuple", lambda loader, node: loader.construct_sequence(node))


def _params(node: Node) -> dict:
    """The node's parameters as `ros2 launch` passes them: params files, later ones overriding."""
    out: dict = {}
    for path, is_file in node._Node__expanded_parameter_arguments:
        assert is_file and Path(path).is_file(), path
        for section in (yaml.load(Path(path).read_text(), Loader=_Loader) or {}).values():
            out.update(section.get("ros__parameters", {}))
    return out


def test_arena_launch_arguments_and_node():
    declared, nodes, logs = _expand("arena.launch.py", world="red", robot="P2AT", name="scout", start="Start2",
                              protocol="true", pacing="fast")
    assert {a.name for a in declared} >= {"world", "robot", "name", "start", "rviz", "protocol", "pacing"}
    bridge = next(n for n in nodes if n.node_executable == "usarsim_node")
    assert bridge.node_package == "usarsim"
    params = _params(bridge)
    assert params["world"] == "red" and params["robots"] == ["scout:P2AT:Start2"]
    assert params["pacing"] == "fast" and params["protocol"] is True
    assert any(isinstance(a, Shutdown) for a in bridge.get_sub_entities()), "the launch ends when the simulator stops"
    if missing_packages(RVIZ.packages):  # rviz:=true is the default: without RViz the launch says so and goes on
        assert not any(n.node_executable == "rviz2" for n in nodes)
        assert len(logs) == 1 and logs[0].startswith("rviz:=true needs RViz") and "rviz:=false" in logs[0]
    else:
        assert any(n.node_executable == "rviz2" for n in nodes) and not logs


def test_multi_robot_launch_reads_the_yaml(tmp_path):
    team = tmp_path / "team.yaml"
    team.write_text("world: yellow\nrobots:\n  - {name: a, class: P2AT, start: Start1}\n"
                    "  - {name: b, class: P2AT, start: [1.0, 2.0]}\n")
    _, nodes, _ = _expand("multi_robot.launch.py", robots_file=str(team))
    params = _params(next(n for n in nodes if n.node_executable == "usarsim_node"))
    assert params["robots"] == ["a:P2AT:Start1", "b:P2AT:1.0,2.0"] and params["multi_robot"] is True


def test_nav_without_nav2_says_so_in_one_line():
    _, nodes, logs = _expand("arena.launch.py", nav="true", rviz="false")
    params = _params(next(n for n in nodes if n.node_executable == "usarsim_node"))
    assert params["multi_robot"] is True and params["cmd_vel_stamped"] is True and params["publish_map_to_odom"]
    if missing_packages(NAV2.packages):
        assert len(logs) == 1 and logs[0].startswith("nav:=true needs Nav2")
