"""The bridge node as users start it (``usarsim_node`` in its own process) against a real DDS graph on loopback.

Checks every topic's type and frame, stamps from /clock, rates (sim time and wall time), LaserScan and
CameraInfo against the sensor config, cmd_vel moving odometry and ground truth the right way with the
timeout stop, and malformed commands (NaN twist, unknown joint, wrong joint count) logged and ignored.
"""
import math
import os
import subprocess
import sys
import threading
import time
from collections import defaultdict

import pytest

rclpy = pytest.importorskip("rclpy")
pytest.importorskip("tf2_msgs.msg")

from geometry_msgs.msg import Twist, TwistStamped  # noqa: E402
from rcl_interfaces.msg import Log  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from rosgraph_msgs.msg import Clock  # noqa: E402
from std_msgs.msg import Float64, Float64MultiArray  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

from bridge_process import qos_for, shut_down  # noqa: E402
from ros_domains import fresh_domain_id  # noqa: E402
from usarsim.ros.cmd_vel import offered_type  # noqa: E402
from usarsim.ros.rates import DEFAULT_RATES  # noqa: E402
from usarsim.ros import convert  # noqa: E402
from usarsim.ros.node import PARAMETERS  # noqa: E402
from usarsim.sim.catalogue import load_robot  # noqa: E402
from patience import PATIENCE  # noqa: E402

DOMAIN_ID = fresh_domain_id()  # the module's graph
ROBOT = "p2at"
SPEC = load_robot("P2AT")
NAMES = convert.RobotNames.for_spec(ROBOT, SPEC)
COLLECT_S = 4.0
CLOCK_HZ = PARAMETERS["clock_rate"][0]


def _secs(t):
    return t.sec + t.nanosec * 1e-9


class StampedCmdVel:
    """Publishes a Twist as the TwistStamped Nav2 sends from Kilted on."""

    def __init__(self, publisher):
        self.publisher = publisher

    def publish(self, twist):
        msg = TwistStamped()
        msg.header.frame_id = "base_link"
        msg.twist = twist
        self.publisher.publish(msg)


class Graph:
    """usarsim_node in a subprocess; a listener node spinning here."""

    def __init__(self, log_path):
        env = dict(os.environ, ROS_DOMAIN_ID=str(DOMAIN_ID), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST",
                   PYTHONUNBUFFERED="1")
        os.environ.update(ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
        self.log_file = open(log_path, "w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "usarsim.ros.node", "--ros-args", "-p", "world:=yellow",
             "-p", f"robots:=['{ROBOT}:P2AT:Start1']", "-p", "seed:=3", "-p", "cmd_vel_timeout:=0.5",
             "-p", "cmd_vel_stamped:=true",
             "-p", "rates.camera:=2.0"],  # TinyRenderer frames are the dearest thing on a 2-core runner
            env=env, stdout=self.log_file, stderr=subprocess.STDOUT)
        self.ctx = rclpy.Context()
        rclpy.init(context=self.ctx, domain_id=DOMAIN_ID)
        self.node = rclpy.create_node("usarsim_test_listener", context=self.ctx)
        self.lock = threading.Lock()
        self.messages = defaultdict(list)  # topic -> [(wall time, msg)]
        self.topics = dict(convert.expected_topics(SPEC, NAMES))
        self.topics["/clock"] = Clock
        for topic, msg_type in self.topics.items():
            self.node.create_subscription(msg_type, topic, self._keep(topic),
                                          qos_for(msg_type, depth=200))  # deep queues: count what was sent
        self.node.create_subscription(TFMessage, "/tf", self._keep("/tf"), QoSProfile(depth=500))
        self.node.create_subscription(TFMessage, "/tf_static", self._keep("/tf_static"), QoSProfile(
            depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE))
        self.node.create_subscription(Log, "/rosout", self._keep("/rosout"), QoSProfile(
            depth=100, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE))
        self.cmd_vel = StampedCmdVel(self.node.create_publisher(TwistStamped, f"/{ROBOT}/cmd_vel", 10))
        self.group_cmd = self.node.create_publisher(Float64MultiArray, f"/{ROBOT}/CameraPanTilt/command", 10)
        self.trajectory = self.node.create_publisher(JointTrajectory, f"/{ROBOT}/joint_trajectory", 10)
        self.camera_fov = self.node.create_publisher(Float64, f"/{ROBOT}/camera/fov", 10)
        self.executor = SingleThreadedExecutor(context=self.ctx)
        self.executor.add_node(self.node)
        self.thread = threading.Thread(target=self.executor.spin, daemon=True)
        self.thread.start()

    def _keep(self, topic):
        def callback(msg):
            with self.lock:
                self.messages[topic].append((time.monotonic(), msg))
        return callback

    def snapshot(self, topic):
        with self.lock:
            return [m for _, m in self.messages[topic]]

    def latest(self, topic):
        msgs = self.snapshot(topic)
        return msgs[-1] if msgs else None

    def wait_for(self, predicate, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return True
            if self.proc.poll() is not None:
                return False
            time.sleep(0.05)
        return False

    def log(self):
        return open(self.log_file.name).read()

    def warnings(self):
        return [m.msg for m in self.snapshot("/rosout") if m.name == "usarsim" and m.level >= Log.WARN]

    def close(self):
        shut_down(self)
        self.log_file.close()


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    g = Graph(tmp_path_factory.mktemp("node") / "usarsim_node.log")
    try:
        # the camera renders once our subscriber is seen; GPS (1 Hz) is the slowest stream
        ok = g.wait_for(lambda: len(g.snapshot(NAMES.topic("camera/image_raw"))) >= 2
                        and len(g.snapshot(NAMES.topic("gps/fix"))) >= 2, timeout=PATIENCE)
        assert ok, open(g.log_file.name).read()[-3000:]
        with g.lock:  # measure rates on a steady stream, not on discovery (/tf_static came once: keep it)
            for topic in list(g.messages):
                if topic not in ("/tf_static", "/rosout"):
                    g.messages[topic].clear()
        time.sleep(COLLECT_S)
        yield g
    finally:
        g.close()
    assert g.proc.returncode == 0, open(g.log_file.name).read()[-3000:]


def test_every_topic_arrives_with_its_type(graph):
    for topic, msg_type in graph.topics.items():
        msgs = graph.snapshot(topic)
        assert msgs, f"nothing on {topic}"
        assert all(isinstance(m, msg_type) for m in msgs), topic
    assert len(graph.topics) >= 28  # 16 sonars, scan, camera x2, odom, imu, ins, gps x2, ground truth, clock ...


def test_frame_ids_follow_rep_105(graph):
    expect = {"scan": "laser", "odom": "odom", "ground_truth": "map", "imu/data": "imu_link", "ins/odom": "map",
              "gps/fix": "gps_link", "camera/image_raw": "camera_link_optical",
              "camera/camera_info": "camera_link_optical", "sonar/F1": "f1_link", "sonar/R8": "r8_link",
              "battery/state": "base_link"}
    for leaf, frame in expect.items():
        assert graph.latest(NAMES.topic(leaf)).header.frame_id == frame, leaf
    for leaf in ("odom", "ground_truth", "ins/odom"):
        assert graph.latest(NAMES.topic(leaf)).child_frame_id == "base_link", leaf
    static = {(t.header.frame_id, t.child_frame_id) for m in graph.snapshot("/tf_static") for t in m.transforms}
    assert {("base_link", "laser"), ("base_link", "imu_link"), ("base_link", "gps_link"), ("base_link", "f1_link"),
            ("camera_tilt", "camera_link"), ("camera_link", "camera_link_optical")} <= static
    dynamic = {(t.header.frame_id, t.child_frame_id) for m in graph.snapshot("/tf") for t in m.transforms}
    assert {("odom", "base_link"), ("base_link", "left_front_wheel"), ("base_link", "camera_pan"),
            ("camera_pan", "camera_tilt")} <= dynamic
    assert "map" not in {p for p, _ in dynamic}  # publish_map_to_odom is off by default


def test_stamps_come_from_the_sim_clock(graph):
    clocks = [_secs(m.clock) for m in graph.snapshot("/clock")]
    assert clocks == sorted(clocks) and len(clocks) > 2 * CLOCK_HZ
    steps = [b - a for a, b in zip(clocks, clocks[1:])]
    assert min(steps) == pytest.approx(1.0 / CLOCK_HZ, abs=1e-6)  # clock_rate, Hz of sim time
    for topic in graph.topics:
        if topic == "/clock":
            continue
        for msg in graph.snapshot(topic):
            if hasattr(msg, "header"):
                t = _secs(msg.header.stamp)
                assert abs(t * 200 - round(t * 200)) < 1e-6, (topic, t)  # a physics tick (200 Hz)
                assert clocks[0] - 1.0 <= t <= clocks[-1] + 0.5, (topic, t)


def _rate(stamps):
    return (len(stamps) - 1) / (stamps[-1] - stamps[0])


def test_rates_match_the_catalogue(graph):
    interval = {s.name: s.params.get("scan_interval") for s in SPEC.sensors}
    # the catalogue's rates, but odometry and the IMU at what ROS users expect (usarsim.ros.rates:
    # robot_localization wants an IMU at 50-100 Hz, Nav2 odom at 20; USARSim paces both at 5)
    expect = {"scan": interval["Scanner"], "odom": 1.0 / DEFAULT_RATES["odom"], "imu/data": 1.0 / DEFAULT_RATES["imu"],
              "camera/image_raw": 0.5, "ground_truth": 0.1, "sonar/F4": SPEC.msg_period,
              "joint_states": SPEC.msg_period, "battery/state": SPEC.msg_period}
    for leaf, period in expect.items():
        stamps = [_secs(m.header.stamp) for m in graph.snapshot(NAMES.topic(leaf))]
        assert len(stamps) >= 3, leaf
        assert _rate(stamps) == pytest.approx(1.0 / period, rel=0.2), leaf
    clocks = [_secs(m.clock) for m in graph.snapshot("/clock")]
    assert _rate(clocks) == pytest.approx(CLOCK_HZ, rel=0.2)
    # realtime pacing: wall-clock arrivals never run ahead of real time (a busy machine slows sim
    # time down and the pacer never bursts to catch up, so no lower bound holds everywhere)
    for topic, hz in ((NAMES.topic("scan"), 5.0), ("/clock", CLOCK_HZ)):
        arrivals = [t for t, _ in graph.messages[topic]]
        assert _rate(arrivals) <= 1.2 * hz, topic


def test_laser_scan_matches_the_sensor_config(graph):
    prm = next(s for s in SPEC.sensors if s.name == "Scanner").params
    scan = graph.latest(NAMES.topic("scan"))
    n = int(math.floor(prm["fov"] / prm["resolution"] + 1e-6)) + 1
    assert len(scan.ranges) == n
    assert scan.angle_min == pytest.approx(-prm["fov"] / 2, abs=1e-5)
    assert scan.angle_increment == pytest.approx(prm["resolution"], rel=1e-5)
    assert scan.angle_max == pytest.approx(scan.angle_min + (n - 1) * scan.angle_increment, abs=1e-5)
    assert scan.range_max == pytest.approx(prm["max_range"]) and scan.scan_time == pytest.approx(prm["scan_interval"])
    assert all(scan.range_min <= r <= scan.range_max or math.isinf(r) for r in scan.ranges)
    # yellow Start1 looks north at wall W1, 3 m ahead of the robot (laser 0.2 m ahead of base_link)
    ahead = scan.ranges[n // 2]
    assert ahead == pytest.approx(3.0 - 0.2 - 0.05, abs=0.15)


def test_camera_info_matches_the_image_and_fov(graph):
    info = graph.latest(NAMES.topic("camera/camera_info"))
    img = graph.latest(NAMES.topic("camera/image_raw"))
    assert (img.width, img.height, img.encoding, img.step) == (info.width, info.height, "rgb8", info.width * 3)
    assert len(img.data) == img.height * img.step
    assert 2 * math.atan(info.width / 2 / info.k[0]) == pytest.approx(0.7854, rel=1e-3)


def _poses(graph):
    odom = graph.latest(NAMES.topic("odom")).pose.pose.position
    truth = graph.latest(NAMES.topic("ground_truth")).pose.pose.position
    return (odom.x, odom.y), (truth.x, truth.y)


def _still(graph):
    """True once ground truth says the robot stands still (no wall-clock guess of how far the sim got)."""
    twist = graph.latest(NAMES.topic("ground_truth")).twist.twist
    return abs(twist.linear.x) < 0.05 and abs(twist.angular.z) < 0.05


def test_cmd_vel_moves_odom_and_ground_truth_forward_then_times_out(graph):
    (ox0, oy0), (gx0, gy0) = _poses(graph)
    forward = Twist()
    forward.linear.x = 0.4

    def drove_half_a_metre():
        graph.cmd_vel.publish(forward)
        (ox, _), (gx, _) = _poses(graph)
        return ox - ox0 > 0.4 and gx - gx0 > 0.4

    assert graph.wait_for(drove_half_a_metre, timeout=PATIENCE), open(graph.log_file.name).read()[-3000:]
    last_command = _secs(graph.latest("/clock").clock)  # the node got the last command at this sim time or later
    (_, oy1), (_, gy1) = _poses(graph)
    assert abs(oy1 - oy0) < 0.1 and abs(gy1 - gy0) < 0.1  # Start1 faces world +x (north)
    assert graph.wait_for(lambda: _still(graph), timeout=PATIENCE)
    stopped = next(_secs(m.header.stamp) for m in graph.snapshot(NAMES.topic("ground_truth"))
                   if _secs(m.header.stamp) > last_command and abs(m.twist.twist.linear.x) < 0.05)
    assert stopped - last_command < 1.0  # cmd_vel_timeout 0.5 s of sim time, then the brakes
    yaw0 = graph.latest(NAMES.topic("odom")).pose.pose.orientation.z
    turn = Twist()
    turn.angular.z = 1.0

    def turned_left():  # +z turns left (CCW)
        graph.cmd_vel.publish(turn)
        return graph.latest(NAMES.topic("odom")).pose.pose.orientation.z > yaw0 + 0.05

    assert graph.wait_for(turned_left, timeout=PATIENCE)


def test_malformed_commands_are_logged_and_ignored(graph):
    assert graph.wait_for(lambda: _still(graph), timeout=PATIENCE)  # any earlier motion has timed out
    (_, _), (gx0, gy0) = _poses(graph)
    bad = Twist()
    bad.linear.x = float("nan")
    for _ in range(3):
        graph.cmd_vel.publish(bad)
        time.sleep(0.05)
    graph.trajectory.publish(JointTrajectory(joint_names=["no_such_joint"],
                                             points=[JointTrajectoryPoint(positions=[0.3])]))
    graph.group_cmd.publish(Float64MultiArray(data=[0.1]))  # CameraPanTilt has two joints
    def logged():
        text = "\n".join(graph.warnings())
        return "NaN" in text and "no_such_joint" in text and "CameraPanTilt" in text

    assert graph.wait_for(logged, timeout=PATIENCE), graph.warnings()
    text = "\n".join(graph.warnings())
    assert "cmd_vel" in text and "NaN" in text
    assert "no_such_joint" in text and "CameraPanTilt" in text
    time.sleep(0.5)
    (_, _), (gx1, gy1) = _poses(graph)
    assert math.hypot(gx1 - gx0, gy1 - gy0) < 0.03
    assert graph.proc.poll() is None  # still running
    n = len(graph.snapshot(NAMES.topic("scan")))
    assert graph.wait_for(lambda: len(graph.snapshot(NAMES.topic("scan"))) > n + 1, timeout=PATIENCE)


def test_joint_group_command_moves_the_camera_tilt(graph):
    graph.group_cmd.publish(Float64MultiArray(data=[0.0, 0.3]))

    def tilt():
        js = graph.latest(NAMES.topic("joint_states"))
        return dict(zip(js.name, js.position)).get("camera_tilt_joint", 0.0)

    assert graph.wait_for(lambda: tilt() > 0.25, timeout=PATIENCE), tilt()


def test_camera_fov_topic_zooms_and_camera_info_follows(graph):
    def fov():
        info = graph.latest(NAMES.topic("camera/camera_info"))
        return 2 * math.atan(info.width / 2 / info.k[0])

    graph.camera_fov.publish(Float64(data=0.5))
    assert graph.wait_for(lambda: abs(fov() - 0.5) < 1e-3, timeout=PATIENCE), fov()
    graph.camera_fov.publish(Float64(data=float("nan")))
    graph.camera_fov.publish(Float64(data=-1.0))  # refused by the camera itself
    assert graph.wait_for(lambda: sum("fov" in w for w in graph.warnings()) >= 2, timeout=PATIENCE), graph.warnings()
    assert abs(fov() - 0.5) < 1e-3
    graph.camera_fov.publish(Float64(data=0.0))  # back to the catalogue's FOV
    assert graph.wait_for(lambda: abs(fov() - 0.7854) < 1e-3, timeout=PATIENCE), fov()


# --- in-process, lockstep: several robots, prefixes, map -> odom, protocol guard --------------------------------
def _spin_until(executor, predicate, timeout=PATIENCE):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not predicate():
        executor.spin_once(timeout_sec=0.05)
    return predicate()


def test_lockstep_multi_robot_prefixes_and_map_to_odom():
    from rclpy.parameter import Parameter

    from usarsim.ros.node import UsarsimNode

    ctx = rclpy.Context()
    rclpy.init(context=ctx, domain_id=fresh_domain_id())
    node = UsarsimNode(context=ctx, parameter_overrides=[
        Parameter("world", value="yellow"), Parameter("pacing", value="lockstep"),
        Parameter("robots", value=["a:P2AT:Start1", "b:P2AT:2.0,1.0,0.0,1.5708"]),
        Parameter("publish_map_to_odom", value=True), Parameter("cameras", value="off")])
    listener = rclpy.create_node("lockstep_listener", context=ctx)
    executor = SingleThreadedExecutor(context=ctx)
    executor.add_node(listener)
    tf, truth = {}, {}
    listener.create_subscription(TFMessage, "/tf", lambda m: tf.update(
        {(t.header.frame_id, t.child_frame_id): t for t in m.transforms}), QoSProfile(depth=500))
    for name in ("a", "b"):
        listener.create_subscription(convert.Odometry, f"/{name}/ground_truth",
                                     lambda m, n=name: truth.__setitem__(n, m), QoSProfile(depth=50))
    try:
        time.sleep(0.5)  # discovery
        assert node.sim.time == 0.0  # lockstep: nothing moves until asked
        node.step(100)
        assert node.sim.time == pytest.approx(0.5)
        assert _spin_until(executor, lambda: ("map", "b/odom") in tf and "b" in truth and ("b/odom", "b/base_link") in tf)
        assert ("a/base_link", "a/camera_pan") in tf and ("map", "a/odom") in tf
        assert truth["b"].header.frame_id == "map" and truth["b"].child_frame_id == "b/base_link"
        # map -> b/odom -> b/base_link lands on b's ground truth (2, 1) facing +y
        m2o, o2b = tf[("map", "b/odom")].transform, tf[("b/odom", "b/base_link")].transform
        assert o2b.translation.x == pytest.approx(0.0, abs=0.02)
        assert m2o.translation.x == pytest.approx(truth["b"].pose.pose.position.x, abs=0.02)
        assert m2o.translation.y == pytest.approx(truth["b"].pose.pose.position.y, abs=0.02)
        assert truth["b"].pose.pose.position.x == pytest.approx(2.0, abs=0.05)
    finally:
        node.close()
        executor.shutdown()
        listener.destroy_node()
        node.destroy_node()
        rclpy.shutdown(context=ctx)


def test_protocol_without_its_server_is_a_clear_error(monkeypatch):
    from rclpy.parameter import Parameter

    from usarsim.ros.node import UsarsimNode
    from usarsim.sim.simulator import Simulator

    monkeypatch.setitem(sys.modules, "usarsim.protocol.server", None)  # import fails
    ctx = rclpy.Context()
    rclpy.init(context=ctx, domain_id=fresh_domain_id())
    sim = Simulator("empty")
    node = UsarsimNode(sim=sim, context=ctx, parameter_overrides=[Parameter("protocol", value=True)])
    try:
        assert not node.sim.robots  # attached to a simulator: spawns nothing unasked
        with pytest.raises(RuntimeError, match="protocol"):
            node.start()
    finally:
        node.close()
        node.destroy_node()
        sim.close()
        rclpy.shutdown(context=ctx)


def test_robot_entries_parse():
    from usarsim.config_loading import ConfigError
    from usarsim.ros.node import parse_robot_entry

    assert parse_robot_entry("P2AT").class_name == "P2AT" and parse_robot_entry("P2AT").name is None
    e = parse_robot_entry("scout:P2AT:Start2")
    assert (e.name, e.class_name, e.start, e.position) == ("scout", "P2AT", "Start2", None)
    e = parse_robot_entry("b:P2AT:2,1,0,1.57")
    assert e.position == (2.0, 1.0, 0.0) and e.yaw == pytest.approx(1.57) and e.start is None
    for bad in ("", "a:b:c:d", "a::x", "a:P2AT:1,nan"):
        with pytest.raises(ConfigError):
            parse_robot_entry(bad)


def test_cmd_vel_follows_a_plain_twist_publisher_and_back(graph):
    """teleop_twist_keyboard publishes plain Twist: the node, set up for TwistStamped, re-subscribes
    with the publishers' type, and follows a stamped publisher again once the plain one is gone."""
    def yaw_rate():
        return graph.latest(NAMES.topic("ground_truth")).twist.twist.angular.z

    assert graph.wait_for(lambda: _still(graph), timeout=PATIENCE)
    graph.node.destroy_publisher(graph.cmd_vel.publisher)  # only the teleop-style publisher is left
    teleop_ctx = rclpy.Context()  # a process of its own, as teleop_twist_keyboard is
    rclpy.init(context=teleop_ctx, domain_id=DOMAIN_ID)
    try:
        teleop = rclpy.create_node("teleop_twist_keyboard", context=teleop_ctx)
        plain = teleop.create_publisher(Twist, f"/{ROBOT}/cmd_vel", 10)
        left = Twist()
        left.angular.z = 0.8
        assert graph.wait_for(lambda: plain.publish(left) or yaw_rate() > 0.3, timeout=PATIENCE), graph.log()
        assert "publishers send geometry_msgs/msg/Twist; subscribing with that type" in graph.log()
    finally:
        rclpy.shutdown(context=teleop_ctx)
    assert graph.wait_for(lambda: _still(graph), timeout=PATIENCE)
    graph.cmd_vel = StampedCmdVel(graph.node.create_publisher(TwistStamped, f"/{ROBOT}/cmd_vel", 10))
    right = Twist()
    right.angular.z = -0.8
    assert graph.wait_for(lambda: graph.cmd_vel.publish(right) or yaw_rate() < -0.3, timeout=PATIENCE), graph.log()


def test_cmd_vel_type_offered_by_publishers():
    assert offered_type({"geometry_msgs/msg/Twist"}) is False
    assert offered_type({"geometry_msgs/msg/TwistStamped"}) is True
    assert offered_type({"geometry_msgs/msg/Twist", "geometry_msgs/msg/TwistStamped"}) is None  # both: keep
    assert offered_type(set()) is None and offered_type({"std_msgs/msg/String"}) is None

