"""The wireless relay and link topics of the bridge node, checked by a second rclpy node on loopback."""
import os
import threading
import time

import pytest

rclpy = pytest.importorskip("rclpy")
pytest.importorskip("usarsim_interfaces.msg")

import pybullet as p  # noqa: E402
from rclpy.executors import MultiThreadedExecutor  # noqa: E402
from rclpy.qos import QoSProfile, ReliabilityPolicy  # noqa: E402
from ros_domains import fresh_domain_id  # noqa: E402
from usarsim_interfaces.msg import WirelessLinks, WirelessMessage  # noqa: E402
from visualization_msgs.msg import Marker, MarkerArray  # noqa: E402

from usarsim.ros.node import UsarsimNode  # noqa: E402
from usarsim.ros.wireless import DOWN_COLOR, signal_color  # noqa: E402
from usarsim.sim.simulator import Simulator  # noqa: E402
from usarsim.sim.world import CommSpec, GpsOrigin, StartPose, StaticItem, WorldSpec  # noqa: E402
from patience import PATIENCE  # noqa: E402

QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
# A wall across x = 3 from y = 2 to y = 10; one wall and a few metres break this cut-off.
WORLD = WorldSpec(name="walls", description="wireless relay test", gps_origin=GpsOrigin(0.0, 0.0),
                  start_poses=[StartPose("Start1", (0.0, 0.0, 0.0))],
                  static=[StaticItem(kind="box", xyz=(3.05, 6.0, 1.0), size=(0.1, 8.0, 2.0))],
                  comm=CommSpec(cutoff=-58.0, update_rate=10.0))


def wait_for(condition, what):
    deadline = time.monotonic() + PATIENCE
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(what)
        time.sleep(0.01)


@pytest.fixture
def graph():
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    ctx = rclpy.Context()
    rclpy.init(context=ctx, domain_id=fresh_domain_id())
    sim = Simulator(WORLD, pacing="lockstep")
    for name, xy in (("A", (0.0, 0.0)), ("B", (4.0, 0.0))):
        sim.spawn("P2AT", name, position=(*xy, 0.0))
    bridge = UsarsimNode(sim=sim, context=ctx)
    user = rclpy.create_node("wireless_user", context=ctx)
    executor = MultiThreadedExecutor(context=ctx)
    executor.add_node(bridge)
    executor.add_node(user)
    thread = threading.Thread(target=executor.spin, daemon=True)
    thread.start()
    yield sim, bridge, user
    executor.shutdown()
    bridge.close()
    bridge.destroy_node()
    user.destroy_node()
    rclpy.shutdown(context=ctx)
    sim.close()


def test_relay_drops_and_restores_delivery(graph):
    sim, bridge, user = graph
    received, links, markers = [], [], []
    user.create_subscription(WirelessMessage, "/B/wireless/receive", received.append, QOS)
    user.create_subscription(WirelessLinks, "/A/wireless/links", links.append, QOS)
    user.create_subscription(MarkerArray, "/wireless/markers", markers.append, QOS)
    send = user.create_publisher(WirelessMessage, "/A/wireless/send", QOS)
    relay = bridge._wireless

    sim.step(1)  # the first link update
    wait_for(lambda: send.get_subscription_count() > 0 and links and markers, "links, markers and the relay")
    link = links[-1].links[0]
    assert (links[-1].robot, link.peer, link.connected, link.direct, list(link.route)) == ("A", "B", True, True,
                                                                                          ["A", "B"])
    assert link.signal_dbm == pytest.approx(sim.wireless.table.signal_between("A", "B"))
    assert links[-1].header.frame_id == "map" and links[-1].cutoff_dbm == -58.0
    lines = [m for m in markers[-1].markers if m.type == Marker.LINE_LIST][0]
    assert len(lines.points) == 2 and lines.colors[0].g > 0.5  # strong: green

    def deliver(text: bytes, expect: bool) -> None:
        before = (relay.delivered, relay.dropped)
        send.publish(WirelessMessage(destination="B", data=text))
        wait_for(lambda: (relay.delivered, relay.dropped) != before, "the relay to decide")
        if expect:
            wait_for(lambda: received and bytes(received[-1].data) == text, "delivery")
            assert received[-1].source == "A"
        else:
            assert relay.dropped == before[1] + 1

    deliver(b"hello B", True)
    robot_b = sim.robot("B")
    home, orientation = p.getBasePositionAndOrientation(robot_b.body_id, physicsClientId=sim.client)
    p.resetBasePositionAndOrientation(robot_b.body_id, (4.0, 5.0, home[2]), orientation, physicsClientId=sim.client)
    sim.step(20)  # the next link update sees B behind the wall
    assert not sim.wireless.table.reachable("A", "B")
    deliver(b"lost", False)
    p.resetBasePositionAndOrientation(robot_b.body_id, home, orientation, physicsClientId=sim.client)
    sim.step(20)
    deliver(b"back again", True)
    wait_for(lambda: any(not m.links[0].connected for m in links), "links reporting B cut off")
    assert [bytes(m.data) for m in received] == [b"hello B", b"back again"]
    assert signal_color(-100.0, -58.0, -49.67) == DOWN_COLOR


def test_record_writes_links_and_their_markers(tmp_path):
    from rosbags.highlevel import AnyReader
    from rosbags.typesys import Stores, get_typestore

    from usarsim.record import RecordOptions, _register_project_types, record

    out = tmp_path / "links.mcap"
    counts = record(RecordOptions(world="empty", name="R1", duration=2.0, drive=(3.0, 3.0),
                                  stations=("Near:-2,0", "Far:40,0")), out)
    assert counts["/R1/wireless/links"] == 3 and counts["/wireless/markers"] == 3  # t = 0.005, 1, 2
    typestore = get_typestore(Stores.ROS2_KILTED)
    _register_project_types(typestore)
    with AnyReader([out], default_typestore=typestore) as reader:
        wanted = [c for c in reader.connections if c.topic in ("/R1/wireless/links", "/wireless/markers")]
        messages = [(c.topic, reader.deserialize(raw, c.msgtype)) for c, _, raw in reader.messages(connections=wanted)]
    links = [m for topic, m in messages if topic == "/R1/wireless/links"]
    near = [next(l for l in m.links if l.peer == "Near") for m in links]
    assert near[0].connected and near[0].peer_is_station and near[-1].distance > near[0].distance  # driving away
    lines = [m.markers[0] for topic, m in messages if topic == "/wireless/markers"][-1]
    assert lines.type == Marker.LINE_LIST and len(lines.points) == 6 and len(lines.colors) == 6
