"""`usarsim record` writes an MCAP rosbag2 that an independent reader (rosbags) reads back."""
from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("rclpy.serialization", reason="ROS 2 message packages not installed")
rosbag2 = pytest.importorskip("rosbags.rosbag2")
typesys = pytest.importorskip("rosbags.typesys")

from usarsim.cli import main  # noqa: E402

ROBOT = "bot"
DURATION = 2.0
TYPESTORE = typesys.get_typestore(typesys.Stores.ROS2_KILTED)


def read_bag(path: Path) -> tuple[dict[str, str], dict[str, list[tuple[int, Any]]]]:
    """({topic: type}, {topic: [(log time ns, message)]}) decoded with rosbags' own CDR reader."""
    types: dict[str, str] = {}
    messages: dict[str, list[tuple[int, Any]]] = defaultdict(list)
    with rosbag2.Reader(path) as reader:
        for conn in reader.connections:
            types[conn.topic] = conn.msgtype
            if conn.msgtype not in TYPESTORE.types:  # the bridge's own messages: their definition is in the bag
                TYPESTORE.register(typesys.get_types_from_msg(conn.msgdef.data, conn.msgtype))
        for conn, t, raw in reader.messages():
            messages[conn.topic].append((t, TYPESTORE.deserialize_cdr(raw, conn.msgtype)))
    return types, messages


def secs(stamp: Any) -> float:
    return stamp.sec + stamp.nanosec * 1e-9


@pytest.fixture(scope="module")
def bag(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, str], dict[str, list[tuple[int, Any]]]]:
    out = tmp_path_factory.mktemp("bags") / "run.mcap"
    rc = main(["record", "--world", "yellow", "--robot", "P2AT", "--name", ROBOT, "--seed", "3",
               "--duration", str(DURATION), "--drive", "3,3", "--output", str(out)])
    assert rc == 0
    assert out.is_file(), "a .mcap output is one self-contained file"
    assert not [p for p in out.parent.iterdir() if p != out], "no staging directory is left behind"
    return read_bag(out)


def test_bag_has_the_bridge_topics_and_types(bag):
    types, messages = bag
    expected = {
        "/clock": "rosgraph_msgs/msg/Clock",
        "/tf": "tf2_msgs/msg/TFMessage",
        "/tf_static": "tf2_msgs/msg/TFMessage",
        f"/{ROBOT}/scan": "sensor_msgs/msg/LaserScan",
        f"/{ROBOT}/odom": "nav_msgs/msg/Odometry",
        f"/{ROBOT}/imu/data": "sensor_msgs/msg/Imu",
        f"/{ROBOT}/gps/fix": "sensor_msgs/msg/NavSatFix",
        f"/{ROBOT}/ground_truth": "nav_msgs/msg/Odometry",
        f"/{ROBOT}/joint_states": "sensor_msgs/msg/JointState",
    }
    for topic, msgtype in expected.items():
        assert types.get(topic) == msgtype, topic
        assert messages[topic], f"no messages on {topic}"


def test_clock_runs_over_the_whole_run(bag):
    _, messages = bag
    clock = [(t, secs(m.clock)) for t, m in messages["/clock"]]
    times = [c for _, c in clock]
    assert times == sorted(times) and len(set(times)) == len(times)
    assert times[0] == 0.0 and times[-1] == pytest.approx(DURATION, abs=1e-6)
    assert all(t == round(c * 1e9) for t, c in clock), "bag time is sim time"


def test_streams_come_at_the_live_node_rates(bag):
    """A bag holds what a live node publishes: /clock, the IMU and odometry at its default rates."""
    from usarsim.ros.rates import DEFAULT_CLOCK_RATE, DEFAULT_RATES

    _, messages = bag
    expected = {"/clock": DEFAULT_CLOCK_RATE, f"/{ROBOT}/imu/data": DEFAULT_RATES["imu"],
                f"/{ROBOT}/odom": DEFAULT_RATES["odom"]}
    for topic, rate in expected.items():
        stamps = [t * 1e-9 for t, _ in messages[topic]]
        assert (len(stamps) - 1) / (stamps[-1] - stamps[0]) == pytest.approx(rate, rel=0.1), topic


def test_scan_is_consistent_and_sees_the_arena(bag):
    _, messages = bag
    scans = messages[f"/{ROBOT}/scan"]
    assert len(scans) >= 5
    static_children = {tf.child_frame_id for _, msg in messages["/tf_static"] for tf in msg.transforms}
    for t, scan in scans:
        assert t == round(secs(scan.header.stamp) * 1e9)
        assert 0 < secs(scan.header.stamp) <= DURATION + 1e-9
        assert scan.header.frame_id in static_children, "the scan frame hangs off the robot in /tf_static"
        n = len(scan.ranges)
        assert n > 10
        assert scan.angle_max == pytest.approx(scan.angle_min + (n - 1) * scan.angle_increment, rel=1e-5)
        hits = [r for r in scan.ranges if math.isfinite(r)]
        assert hits, "walls of the yellow arena are in range"
        assert all(scan.range_min <= r <= scan.range_max for r in hits)


def test_odometry_and_tf_follow_the_robot_forward(bag):
    _, messages = bag
    odom = messages[f"/{ROBOT}/odom"]
    first, last = odom[0][1], odom[-1][1]
    assert last.header.frame_id.endswith("odom") and last.child_frame_id.endswith("base_link")
    assert last.pose.pose.position.x - first.pose.pose.position.x > 0.3, "DRIVE 3,3 moves the robot forward"
    assert abs(last.pose.pose.position.y) < 0.2
    odom_tf = [tf for _, msg in messages["/tf"] for tf in msg.transforms
               if tf.header.frame_id == last.header.frame_id and tf.child_frame_id == last.child_frame_id]
    assert odom_tf, "odom -> base_link is on /tf"
    assert odom_tf[-1].transform.translation.x == pytest.approx(last.pose.pose.position.x, abs=1e-6)
    truth = messages[f"/{ROBOT}/ground_truth"]
    moved = [a - b for a, b in zip(_xy(truth[-1][1]), _xy(truth[0][1]))]
    assert math.hypot(*moved) == pytest.approx(last.pose.pose.position.x - first.pose.pose.position.x, rel=0.3)


def _xy(msg: Any) -> tuple[float, float]:
    return msg.pose.pose.position.x, msg.pose.pose.position.y


def test_directory_output_and_no_silent_overwrite(tmp_path, capsys):
    out = tmp_path / "bagdir"
    args = ["record", "--robot", "P2AT", "--duration", "0.3", "--output", str(out)]
    assert main(args) == 0
    assert (out / "metadata.yaml").is_file() and (out / "bagdir.mcap").is_file()
    types, messages = read_bag(out)
    assert "/clock" in types and messages["/tf_static"]
    assert main(args) == 2, "an existing bag is not replaced without --overwrite"
    assert "exists" in capsys.readouterr().err
    assert main([*args, "--overwrite"]) == 0


def test_refusals_leave_nothing_behind(tmp_path, capsys):
    not_a_bag = tmp_path / "notes"
    not_a_bag.mkdir()
    (not_a_bag / "keep.txt").write_text("mine")
    assert main(["record", "--duration", "0.1", "--overwrite", "--output", str(not_a_bag)]) == 2
    assert (not_a_bag / "keep.txt").read_text() == "mine", "--overwrite only replaces bags"
    out = tmp_path / "car"
    assert main(["record", "--robot", "Hummer", "--drive", "1,1", "--duration", "0.1", "--output", str(out)]) == 2
    assert "wheel" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes"], "no half-written bag is left"


def _yaw(q: Any) -> float:
    return math.atan2(2.0 * (q.w * q.z + q.x * q.y), 1.0 - 2.0 * (q.y * q.y + q.z * q.z))


def test_map_tf_puts_the_odometry_frame_where_ground_truth_says(tmp_path):
    out = tmp_path / "map.mcap"
    assert main(["record", "--world", "yellow", "--duration", "1.5", "--drive", "2,3", "--map-tf", "--name", ROBOT,
                 "--output", str(out)]) == 0
    _, messages = read_bag(out)
    transforms = [tf for _, msg in messages["/tf"] for tf in msg.transforms]
    map_odom = {secs(tf.header.stamp): tf for tf in transforms if tf.header.frame_id == "map"}
    odom_base = {secs(tf.header.stamp): tf for tf in transforms
                 if tf.header.frame_id == "odom" and tf.child_frame_id == "base_link"}
    truth = {secs(m.header.stamp): m for _, m in messages[f"/{ROBOT}/ground_truth"]}
    common = sorted(set(map_odom) & set(odom_base) & set(truth))
    assert len(common) >= 3
    for t in common:
        a, b = map_odom[t].transform, odom_base[t].transform
        yaw_a = _yaw(a.rotation)
        x = a.translation.x + math.cos(yaw_a) * b.translation.x - math.sin(yaw_a) * b.translation.y
        y = a.translation.y + math.sin(yaw_a) * b.translation.x + math.cos(yaw_a) * b.translation.y
        pose = truth[t].pose.pose
        assert (x, y) == pytest.approx((pose.position.x, pose.position.y), abs=1e-3)
        dyaw = (yaw_a + _yaw(b.rotation) - _yaw(pose.orientation) + math.pi) % (2 * math.pi) - math.pi
        assert abs(dyaw) < 1e-2  # the robot may pitch/roll slightly; yaw composes in the plane
