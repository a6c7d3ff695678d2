"""Bridge options as users meet them: reliable and best-effort subscribers, unstamped cmd_vel, camera_info
without an image subscriber, per-robot QoS and the multi-robot layout (per-namespace TF, plain frames)."""
import pytest

rclpy = pytest.importorskip("rclpy")
pytest.importorskip("tf2_msgs.msg")

from geometry_msgs.msg import Twist  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from sensor_msgs.msg import CameraInfo, LaserScan  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from bridge_process import BridgeProcess  # noqa: E402
from patience import PATIENCE  # noqa: E402

RELIABLE = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
BEST_EFFORT = QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT)
LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)


@pytest.fixture(scope="module")
def single(tmp_path_factory):
    b = BridgeProcess(tmp_path_factory.mktemp("single") / "node.log",
                      ["world:=yellow", "robots:=['bot:P2AT:Start1']", "cmd_vel_stamped:=false", "rates.camera:=4.0"])
    try:
        yield b
    finally:
        b.close()


def test_reliable_and_best_effort_subscribers_both_receive(single):
    reliable = single.listen(LaserScan, "/bot/scan", RELIABLE, key="reliable")
    lossy = single.listen(LaserScan, "/bot/scan", BEST_EFFORT, key="best_effort")
    # the first test of the module also waits out the bridge's start-up (the full-size arena)
    assert single.wait_for(lambda: len(single.messages(reliable)) >= 3 and len(single.messages(lossy)) >= 3,
                           timeout=PATIENCE), single.log_tail()
    info = single.node.get_publishers_info_by_topic("/bot/scan")
    assert [i.qos_profile.reliability for i in info] == [ReliabilityPolicy.RELIABLE]


def test_camera_info_without_an_image_subscriber(single):
    key = single.listen(CameraInfo, "/bot/camera/camera_info", RELIABLE)
    assert single.wait_for(lambda: len(single.messages(key)) >= 3), single.log_tail()
    info = single.messages(key)[-1]
    assert (info.width, info.height) == (320, 240) and info.header.frame_id.endswith("_optical")
    stamps = [m.header.stamp.sec + m.header.stamp.nanosec * 1e-9 for m in single.messages(key)[-3:]]
    assert stamps[2] - stamps[1] == pytest.approx(0.25, abs=0.01), "at the camera's rate (rates.camera 4 Hz)"
    assert single.node.get_subscriptions_info_by_topic("/bot/camera/image_raw") == []  # no one asked for pixels


def test_unstamped_twist_moves_the_robot(single):
    key = single.listen(Odometry, "/bot/odom", RELIABLE)
    assert single.wait_for(lambda: single.messages(key))
    x0 = single.messages(key)[-1].pose.pose.position.x
    cmd = single.node.create_publisher(Twist, "/bot/cmd_vel", 10)
    forward = Twist()
    forward.linear.x = 0.4
    moved = single.wait_for(lambda: cmd.publish(forward) or single.messages(key)[-1].pose.pose.position.x > x0 + 0.3)
    assert moved, single.log_tail()


def test_compressed_image_on_request(single):
    from sensor_msgs.msg import CompressedImage

    key = single.listen(CompressedImage, "/bot/camera/image_raw/compressed", RELIABLE)
    assert single.wait_for(lambda: single.messages(key)), single.log_tail()
    jpeg = bytes(single.messages(key)[-1].data)
    assert jpeg[:2] == b"\xff\xd8" and single.messages(key)[-1].format.endswith("jpeg compressed bgr8")


@pytest.fixture(scope="module")
def team(tmp_path_factory):
    b = BridgeProcess(tmp_path_factory.mktemp("team") / "node.log",
                      ["world:=yellow", "robots:=['alpha:P2AT:Start1','bravo:P2AT:Start2']", "multi_robot:=true",
                       "publish_map_to_odom:=true", "best_effort_robots:=['bravo']"])
    try:
        yield b
    finally:
        b.close()


def _frames(messages):
    return {(t.header.frame_id, t.child_frame_id) for m in messages for t in m.transforms}


def test_multi_robot_tf_is_per_namespace_with_plain_frames(team):
    for robot in ("alpha", "bravo"):
        team.listen(TFMessage, f"/{robot}/tf", QoSProfile(depth=100), key=f"{robot}/tf")
        team.listen(TFMessage, f"/{robot}/tf_static", LATCHED, key=f"{robot}/tf_static")
    team.listen(TFMessage, "/tf", QoSProfile(depth=100), key="/tf")

    def complete(robot):
        dynamic = _frames(team.messages(f"{robot}/tf"))
        static = _frames(team.messages(f"{robot}/tf_static"))
        return {("map", "odom"), ("odom", "base_link")} <= dynamic and ("base_link", "base_footprint") in static

    assert team.wait_for(lambda: complete("alpha") and complete("bravo")), team.log_tail()
    assert all("/" not in f for pair in _frames(team.messages("alpha/tf")) for f in pair), "frames are not prefixed"
    assert team.messages("/tf") == [], "robots' TF stays in their namespaces"


def test_best_effort_is_chosen_per_robot(team):
    def reliability(topic):
        return [i.qos_profile.reliability for i in team.node.get_publishers_info_by_topic(topic)]

    assert team.wait_for(lambda: reliability("/bravo/scan") and reliability("/alpha/scan"))
    assert reliability("/alpha/scan") == [ReliabilityPolicy.RELIABLE]
    assert reliability("/bravo/scan") == [ReliabilityPolicy.BEST_EFFORT]
    assert reliability("/bravo/odom") == [ReliabilityPolicy.RELIABLE], "state streams stay reliable (Nav2)"
    lossy = team.listen(LaserScan, "/bravo/scan", BEST_EFFORT, key="bravo_scan")
    assert team.wait_for(lambda: len(team.messages(lossy)) >= 2)


def test_joint_commands_drive_groups_and_wheels_as_ros2_control_would(single):
    """topic_based_ros2_control's TopicBasedSystem: JointState commands in, joint_states out."""
    from sensor_msgs.msg import JointState

    from usarsim.sim.catalogue import load_robot

    drive = load_robot("P2AT").drive
    states = single.listen(JointState, "/bot/joint_states", RELIABLE)
    commands = single.node.create_publisher(JointState, "/bot/joint_commands", 10)
    cmd = JointState()
    cmd.name = ["camera_tilt_joint"]
    cmd.position = [0.3]

    def tilt():
        latest = single.messages(states)[-1] if single.messages(states) else None
        return dict(zip(latest.name, latest.position)).get("camera_tilt_joint", 0.0) if latest else 0.0

    assert single.wait_for(lambda: commands.publish(cmd) or tilt() > 0.28), single.log_tail()
    wheels = JointState()
    wheels.name = drive.left_wheels + drive.right_wheels
    wheels.velocity = [2.0] * len(drive.left_wheels) + [2.0] * len(drive.right_wheels)

    def spinning():
        latest = single.messages(states)[-1]
        speeds = dict(zip(latest.name, latest.velocity))
        return all(speeds.get(w, 0.0) > 1.5 for w in wheels.name)

    assert single.wait_for(lambda: commands.publish(wheels) or spinning()), single.log_tail()
    commands.publish(JointState(name=wheels.name, velocity=[0.0] * len(wheels.name)))


def test_parameters_are_marked_read_only(single):
    from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
    from rcl_interfaces.srv import DescribeParameters, SetParameters

    from usarsim.ros.node import PARAMETERS

    names = [*PARAMETERS, "best_effort_robots", "rates.scan"]
    described = single.call(DescribeParameters, "/usarsim/describe_parameters", DescribeParameters.Request(names=names))
    assert [d.name for d in described.descriptors] == names
    assert all(d.read_only and d.description for d in described.descriptors)
    change = Parameter(name="qos", value=ParameterValue(type=ParameterType.PARAMETER_STRING, string_value="best_effort"))
    result = single.call(SetParameters, "/usarsim/set_parameters", SetParameters.Request(parameters=[change])).results[0]
    assert not result.successful and "read-only" in result.reason
