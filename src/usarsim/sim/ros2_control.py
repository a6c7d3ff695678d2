"""ros2_control descriptions of a catalogue robot: the URDF's ``<ros2_control>`` block and its controllers.

The hardware is topic_based_ros2_control's ``TopicBasedSystem``: the controller manager sends
``sensor_msgs/JointState`` commands on the robot's ``joint_commands`` topic and reads its
``joint_states``, both served by the bridge. Every joint group (flippers, arms, pan-tilt, grippers)
gets position command interfaces and a JointTrajectoryController (what MoveIt drives); driven
wheels get velocity command interfaces and a JointGroupVelocityController. Pure text: no ROS import.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any
from xml.sax.saxutils import quoteattr

if TYPE_CHECKING:
    from usarsim.sim.catalogue import RobotSpec

HARDWARE_PLUGIN = "topic_based_ros2_control/TopicBasedSystem"
COMMAND_TOPIC = "joint_commands"
STATE_TOPIC = "joint_states"
WHEELS = "wheels"
UPDATE_RATE = 50  # Hz, the bridge's default joint-state rate is the robot's message period


def group_joints(spec: "RobotSpec") -> dict[str, list[str]]:
    """Controller name stem -> joints: one entry per joint group, plus the driven wheels."""
    groups = {g.name: [link.joint for link in g.links] for g in spec.joint_groups}
    wheels = list(dict.fromkeys(spec.drive.left_wheels + spec.drive.right_wheels + spec.drive.powered_wheels))
    if wheels:
        groups[WHEELS] = wheels
    return groups


def _joint_xml(joint: str, command: str) -> list[str]:
    return [f"    <joint name={quoteattr(joint)}>",
            f'      <command_interface name="{command}"/>',
            '      <state_interface name="position"/>',
            '      <state_interface name="velocity"/>',
            "    </joint>"]


def ros2_control_xml(spec: "RobotSpec") -> list[str]:
    """URDF lines of the ``<ros2_control>`` block ([] for a robot with no controllable joint)."""
    groups = group_joints(spec)
    if not groups:
        return []
    out = [f"  <ros2_control name={quoteattr(spec.class_name)} type=\"system\">",
           "    <hardware>",
           f"      <plugin>{HARDWARE_PLUGIN}</plugin>",
           f'      <param name="joint_commands_topic">{COMMAND_TOPIC}</param>',
           f'      <param name="joint_states_topic">{STATE_TOPIC}</param>',
           "    </hardware>"]
    for name, joints in groups.items():
        for joint in joints:
            out += _joint_xml(joint, "velocity" if name == WHEELS else "position")
    out.append("  </ros2_control>")
    return out


def controller_name(group: str) -> str:
    """The controller of a joint group (``Flippers`` -> ``flippers_controller``)."""
    return f"{group.lower()}_controller"


def controllers(spec: "RobotSpec") -> dict[str, Any]:
    """controller_manager parameters (the controllers.yaml document) for the robot's groups."""
    manager: dict[str, Any] = {"update_rate": UPDATE_RATE}
    doc: dict[str, Any] = {"controller_manager": {"ros__parameters": manager}}
    for group, joints in group_joints(spec).items():
        name = controller_name(group)
        if group == WHEELS:
            manager[name] = {"type": "velocity_controllers/JointGroupVelocityController"}
            doc[name] = {"ros__parameters": {"joints": joints}}
        else:
            manager[name] = {"type": "joint_trajectory_controller/JointTrajectoryController"}
            doc[name] = {"ros__parameters": {"joints": joints, "command_interfaces": ["position"],
                                             "state_interfaces": ["position", "velocity"]}}
    # namespaced robots: the same file serves /<robot>/controller_manager
    return {f"/**/{key}": value for key, value in doc.items()}
