"""ros2_control descriptions: every controllable joint is in the URDF's block and in a controller."""
import xml.etree.ElementTree as ET

import pytest
import yaml

from usarsim.cli import controllers_file
from usarsim.paths import share_dir
from usarsim.sim.catalogue import available_robots, load_robot
from usarsim.sim.ros2_control import COMMAND_TOPIC, HARDWARE_PLUGIN, controller_name, group_joints


@pytest.mark.parametrize("class_name", available_robots())
def test_urdf_block_and_controllers_cover_every_joint_group(class_name):
    spec = load_robot(class_name)
    groups = group_joints(spec)
    assert set(groups) >= {g.name for g in spec.joint_groups}
    root = ET.fromstring(spec.urdf_path.read_text(encoding="utf-8"))
    blocks = root.findall("ros2_control")
    if not groups:
        assert blocks == []
        return
    (block,) = blocks
    assert block.find("hardware/plugin").text == HARDWARE_PLUGIN
    params = {p.get("name"): p.text for p in block.findall("hardware/param")}
    assert params["joint_commands_topic"] == COMMAND_TOPIC
    interfaces = {j.get("name"): j.find("command_interface").get("name") for j in block.findall("joint")}
    urdf_joints = {j.get("name") for j in root.findall("joint")}
    for group, joints in groups.items():
        for joint in joints:
            assert joint in urdf_joints
            assert interfaces[joint] == ("velocity" if group == "wheels" else "position")
    shipped = share_dir() / "config" / "controllers" / f"{class_name}.yaml"
    assert shipped.read_text(encoding="utf-8") == controllers_file(spec), f"run `usarsim urdf {class_name}`"
    doc = yaml.safe_load(shipped.read_text(encoding="utf-8"))
    manager = doc["/**/controller_manager"]["ros__parameters"]
    for group, joints in groups.items():
        name = controller_name(group)
        assert "type" in manager[name]
        assert doc[f"/**/{name}"]["ros__parameters"]["joints"] == joints
