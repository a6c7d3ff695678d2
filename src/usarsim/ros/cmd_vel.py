"""cmd_vel in either geometry_msgs type: the subscription follows what the graph's publishers offer.

Nav2 publishes TwistStamped from Kilted on, while teleop_twist_keyboard, teleop_twist_joy and most
older tools publish Twist. A DDS topic carries one type, so a subscription of the other type never
matches and the robot silently stands still. The bridge therefore starts with the configured type
(``cmd_vel_stamped``) and, whenever the graph shows publishers of only the other type on the topic,
re-subscribes with that type. Publishers of both types at once cannot both be heard: the first
time that happens it warns and keeps the type it has.

rclpy destroys an entity the executor is waiting on only once that wait ends, and until then the
participant refuses a subscription of another type on the same topic; the new subscription is then
made at the next check.
"""
from __future__ import annotations

from typing import Any, Callable

from geometry_msgs.msg import Twist, TwistStamped
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy

TYPE_NAMES = {"geometry_msgs/msg/TwistStamped": True, "geometry_msgs/msg/Twist": False}  # name -> stamped


def type_name(stamped: bool) -> str:
    """The ROS type name of the cmd_vel message, stamped or not."""
    return next(name for name, is_stamped in TYPE_NAMES.items() if is_stamped == stamped)


def offered_type(publisher_types: set[str]) -> bool | None:
    """The one cmd_vel type (True: stamped) the publishers offer; None for none or both."""
    offered = {TYPE_NAMES[t] for t in publisher_types if t in TYPE_NAMES}
    return next(iter(offered)) if len(offered) == 1 else None


class CmdVelSubscription:
    """One robot's cmd_vel subscription, of the type its publishers use."""

    def __init__(self, node: Any, topic: str, stamped: bool, on_twist: Callable[[Twist], None]) -> None:
        self._node = node
        self.topic = topic
        self._on_twist = on_twist
        self._subscription: Any = None
        self._warned_mixed = False
        self.stamped = stamped
        self._subscribe()

    def _subscribe(self) -> None:
        try:
            if self.stamped:
                self._subscription = self._node.create_subscription(
                    TwistStamped, self.topic, lambda msg: self._on_twist(msg.twist), 10)
            else:
                self._subscription = self._node.create_subscription(Twist, self.topic, self._on_twist, 10)
        except _rclpy.RCLError:  # the other type's subscription is not destroyed yet: next check
            self._subscription = None

    def follow_graph(self) -> None:
        """Re-subscribe when the topic's publishers all use the other type; warn once when they mix."""
        if self._subscription is None:
            self._subscribe()
            return
        types = {info.topic_type for info in self._node.get_publishers_info_by_topic(self.topic)}
        wanted = offered_type(types)
        if wanted is not None and wanted != self.stamped:
            self._node.get_logger().info(
                f"{self.topic}: its publishers send {type_name(wanted)}; subscribing with that type")
            self.destroy()
            self.stamped = wanted
            self._subscribe()
        elif wanted is None and len(types & TYPE_NAMES.keys()) == 2 and not self._warned_mixed:
            self._warned_mixed = True
            self._node.get_logger().warning(
                f"{self.topic}: publishers of both Twist and TwistStamped; only {type_name(self.stamped)} "
                "is heard (a topic carries one type)")

    def destroy(self) -> None:
        if self._subscription is not None:
            self._node.destroy_subscription(self._subscription)
            self._subscription = None
