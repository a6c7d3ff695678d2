"""tf2_msgs (a ROS 2 install's, or the one scripts/build_ros_interfaces.sh builds) serializes and travels over DDS."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
from ros_domains import fresh_domain_id
from patience import PATIENCE

pytest.importorskip("rclpy", reason="ROS 2 (rclpy) not installed")

PUBLISH_AND_RECEIVE = textwrap.dedent("""
    import time
    import rclpy
    from geometry_msgs.msg import TransformStamped
    from rclpy.qos import DurabilityPolicy, QoSProfile
    from tf2_msgs.msg import TFMessage

    rclpy.init()
    node = rclpy.create_node("tf2_msgs_check")
    got = []
    qos = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)  # as /tf_static
    node.create_subscription(TFMessage, "/tf_static", got.append, qos)
    pub = node.create_publisher(TFMessage, "/tf_static", qos)
    tf = TransformStamped()
    tf.header.frame_id, tf.child_frame_id = "base_link", "laser"
    tf.transform.translation.x, tf.transform.rotation.w = 0.2, 1.0
    pub.publish(TFMessage(transforms=[tf]))
    deadline = time.monotonic() + PATIENCE
    while not got and time.monotonic() < deadline:
        rclpy.spin_once(node, timeout_sec=0.1)
    node.destroy_node()
    rclpy.shutdown()
    assert got, "no TFMessage received"
    received = got[0].transforms[0]
    print(received.child_frame_id, received.transform.translation.x)
""").replace("PATIENCE", repr(PATIENCE))  # the test's bound, in the child


def test_tfmessage_round_trips_through_cdr():
    from geometry_msgs.msg import TransformStamped
    from rclpy.serialization import deserialize_message, serialize_message
    from tf2_msgs.msg import TFMessage

    tf = TransformStamped(child_frame_id="laser")
    tf.header.frame_id = "base_link"
    tf.transform.rotation.w = 1.0
    back = deserialize_message(serialize_message(TFMessage(transforms=[tf, tf])), TFMessage)
    assert [t.child_frame_id for t in back.transforms] == ["laser", "laser"]


def test_tfmessage_is_published_and_received():
    # A child process keeps DDS out of the test process and its settings local to this test.
    env = dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST", ROS_DOMAIN_ID=str(fresh_domain_id()))
    result = subprocess.run([sys.executable, "-c", PUBLISH_AND_RECEIVE], env=env, capture_output=True, text=True,
                            timeout=PATIENCE)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == ["laser", "0.2"]
