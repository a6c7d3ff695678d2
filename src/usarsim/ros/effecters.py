"""How the ROS bridge drives each effecter type: one record per registered effecter type.

The text protocol drives effecters with SET opcodes; on ROS an effecter is either a
usarsim_interfaces service under the robot's namespace (the RFID releaser's ``release_tag``)
or the command topic of the joint group that holds its joints (a gripper's fingers).
Adding an effecter type means one entry here (test/ros/test_front_doors.py fails without it).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from usarsim.sim.catalogue import EffecterSpec, RobotSpec


@dataclass(frozen=True)
class EffecterInterface:
    """The ROS interface one effecter type is driven through."""

    kind: Literal["service", "group_command"]
    ros_type: str  # e.g. usarsim_interfaces/srv/ReleaseTag
    service: str = ""  # the service name under the robot's namespace (kind "service")


RELEASE_TAG = "release_tag"

EFFECTER_INTERFACES: dict[str, EffecterInterface] = {
    "RFIDReleaser": EffecterInterface("service", "usarsim_interfaces/srv/ReleaseTag", service=RELEASE_TAG),
    "Gripper": EffecterInterface("group_command", "std_msgs/msg/Float64MultiArray"),
}


def types_on_service(service: str) -> set[str]:
    """The effecter types driven through ``service``."""
    return {name for name, interface in EFFECTER_INTERFACES.items() if interface.service == service}


def group_command_topic(group: str) -> str:
    """A joint group's command topic (Float64MultiArray, one value per joint), under the robot's namespace."""
    return f"{group}/command"


def effecter_endpoint(spec: "RobotSpec", effecter: "EffecterSpec") -> str:
    """The service or topic name (under the robot's namespace) that drives ``effecter`` on ``spec``."""
    interface = EFFECTER_INTERFACES[effecter.type]
    if interface.kind == "service":
        return interface.service
    joints = {str(v) for v in effecter.params.values()}
    for group in spec.joint_groups:
        if joints & {link.joint for link in group.links}:
            return group_command_topic(group.name)
    raise ValueError(f"effecter '{effecter.name}' ({effecter.type}) drives no joint group of {spec.class_name}")
