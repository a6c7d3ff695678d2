"""The rest of the fleet through a running bridge: one ``usarsim_node`` process in the harbour with a
Submarine (in the basin), a Passarola, a Lisa, a Cooper, a QRIO and an OmniP2DX (on the quay), and a
second node here that drives them as a user's program would and reads what they publish.

Tolerances (sim time, measured on ground truth): the submarine advances more than 1.0 m on
cmd_vel linear.x 1 m/s (full ahead: 0.305 m/s) with linear.z 0.4 m/s (stern plane up; at that speed
the plane cannot lift the boat), then turns more than 0.2 rad left on angular.z 0.3; its depth topic reads the water
surface minus its height within 0.1 m. The blimp climbs more than 0.5 m on linear.z 0.5. Lisa
strafes more than 0.3 m left on linear.y 0.3 (measured once under way, after its first 5 cm) while
moving less than 0.1 m forward and turning less than 0.05 rad. The Cooper advances more than 1 m on
linear.x 2; its compass heading is the one its ground truth gives within 0.05 rad. A QRIO arm joint
reaches a joint_trajectory target within 0.05 rad.
"""
import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy")
pytest.importorskip("trajectory_msgs.msg")

from geometry_msgs.msg import Twist, TwistStamped  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from sensor_msgs.msg import CameraInfo, CompressedImage, FluidPressure, Image, Imu, JointState, MagneticField  # noqa: E402
from std_msgs.msg import Float32  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

from bridge_process import BridgeProcess, qos_for  # noqa: E402
from patience import PATIENCE  # noqa: E402
from usarsim import rotations  # noqa: E402
from usarsim.sim.catalogue import load_robot  # noqa: E402
from usarsim.sim.sensors.compass import magnetic_heading  # noqa: E402
from usarsim.sim.sensors.geomagnetism import magnetic_elements  # noqa: E402
from usarsim.sim.world import load_world  # noqa: E402

SURFACE = load_world("harbour").water[0].surface
SUB = load_robot("Submarine")
DECLINATION = magnetic_elements(load_world("harbour").gps_origin).declination  # the World Magnetic Model's
CAR_YAW = 0.4  # rad: turned off north, so that a compass reading the wrong way round shows
ROBOTS = {"sub": "Submarine:8,10,-1.5", "blimp": "Passarola:-10,10", "lisa": "Lisa:-10,-10",
          "car": f"Cooper:-14,-16,0,{CAR_YAW}", "qrio": "QRIO:-5,0", "omni": "OmniP2DX:-5,5"}


def _qos(msg_type):
    return qos_for(msg_type, depth=50)


@pytest.fixture(scope="module")
def bridge(tmp_path_factory):
    b = BridgeProcess(tmp_path_factory.mktemp("fleet") / "node.log",
                      ["world:=harbour", "robots:=[" + ", ".join(f"'{n}:{c}'" for n, c in ROBOTS.items()) + "]",
                       "seed:=4", "cmd_vel_stamped:=false", "cmd_vel_timeout:=0.5", "rates.camera:=2.0"])
    try:
        for name in ROBOTS:
            b.listen(Odometry, f"/{name}/ground_truth", _qos(Odometry))
        assert b.wait_for(lambda: all(b.messages(f"/{n}/ground_truth") for n in ROBOTS), PATIENCE), b.log_tail()
        yield b
    finally:
        b.close()


def _secs(stamp):
    return round(stamp.sec + stamp.nanosec * 1e-9, 3)


def _gauge_height(pose, offset):
    q = pose.orientation
    return pose.position.z + float((rotations.rotation_matrix((q.x, q.y, q.z, q.w)) @ np.array(offset))[2])


def truth(bridge, robot):
    """(x, y, z, yaw) of the newest ground truth."""
    pose = bridge.messages(f"/{robot}/ground_truth")[-1].pose.pose
    q = pose.orientation
    return (pose.position.x, pose.position.y, pose.position.z,
            rotations.euler_from_quaternion((q.x, q.y, q.z, q.w))[2])


def drive(bridge, robot, linear, angular, until, stop=True):
    """Publish cmd_vel (every 0.05 s, well within the 0.5 s timeout) until ``until(start, now)`` holds; then
    stop, unless ``stop`` is False (the next command continues the motion)."""
    pub = bridge.publisher(Twist, f"/{robot}/cmd_vel")
    twist = Twist()
    (twist.linear.x, twist.linear.y, twist.linear.z), (twist.angular.x, twist.angular.y, twist.angular.z) = linear, angular
    start = truth(bridge, robot)
    try:
        def step():
            pub.publish(twist)
            return until(start, truth(bridge, robot))

        reached = bridge.wait_for(step, PATIENCE)
        return reached, start, truth(bridge, robot)
    finally:
        if stop:
            pub.publish(Twist())


def test_submarine_propeller_stern_plane_rudder_and_depth(bridge):
    depth_key = bridge.listen_once(Float32, "/sub/depth/Depth", _qos(Float32))
    pressure_key = bridge.listen_once(FluidPressure, "/sub/depth/Depth/pressure", _qos(FluidPressure))
    ok, start, end = drive(bridge, "sub", (1.0, 0.0, 0.4), (0.0, 0.0, 0.0),
                           lambda s, n: n[0] - s[0] > 1.0)
    assert ok, f"submarine from {start} to {end}\n{bridge.log_tail()}"
    ok, start, end = drive(bridge, "sub", (1.0, 0.0, 0.0), (0.0, 0.0, 0.3),
                           lambda s, n: rotations.wrap_pi(n[3] - s[3]) > 0.2)
    assert ok, f"submarine did not turn left: {start} -> {end}"
    assert bridge.wait_for(lambda: bridge.messages(depth_key) and bridge.messages(pressure_key), PATIENCE)
    # the pressure and the ground truth at one sim time: the depth below the surface in sea water
    hull = next(link for link in SUB.body.links if link.name == "hull")  # the gauge sits on the hull's centre
    truths = {_secs(m.header.stamp): _gauge_height(m.pose.pose, hull.xyz) for m in bridge.messages("/sub/ground_truth")}
    pressures = [m for m in bridge.messages(pressure_key) if _secs(m.header.stamp) in truths]
    assert pressures, "no depth reading at a ground-truth time"
    for msg in pressures:
        assert msg.header.frame_id.startswith("sub/")
        depth = (msg.fluid_pressure - 101325.0) / (1025.0 * 9.81)
        assert depth == pytest.approx(SURFACE - truths[_secs(msg.header.stamp)], abs=0.1)
    from_pressure = [(m.fluid_pressure - 101325.0) / (1025.0 * 9.81) for m in bridge.messages(pressure_key)]
    assert any(abs(d.data - p) < 0.01 for d in bridge.messages(depth_key) for p in from_pressure)
    assert min(from_pressure) > 2.0  # on the sea bed and rising: more than 2 m down


def test_blimp_climbs(bridge):
    ok, start, end = drive(bridge, "blimp", (0.0, 0.0, 0.5), (0.0, 0.0, 0.0), lambda s, n: n[2] - s[2] > 0.5)
    assert ok, f"blimp from {start} to {end}"


def test_lisa_strafes_without_turning(bridge):
    # the first few centimetres swing the knuckles and the casters round, which pushes the robot forward and
    # can twist it, depending on when the commands land; the strafe is measured once under way
    ok, _, _ = drive(bridge, "lisa", (0.0, 0.3, 0.0), (0.0, 0.0, 0.0), lambda s, n: n[1] - s[1] > 0.05, stop=False)
    assert ok, "Lisa did not start to strafe"
    ok, start, end = drive(bridge, "lisa", (0.0, 0.3, 0.0), (0.0, 0.0, 0.0), lambda s, n: n[1] - s[1] > 0.3)
    assert ok, f"Lisa from {start} to {end}"
    assert abs(end[0] - start[0]) < 0.1 and abs(rotations.wrap_pi(end[3] - start[3])) < 0.05, (start, end)


def test_cooper_drives(bridge):
    velocity = bridge.listen_once(TwistStamped, "/car/velocimeter/Velocimeter", _qos(TwistStamped))
    ok, start, end = drive(bridge, "car", (2.0, 0.0, 0.0), (0.0, 0.0, 0.0), lambda s, n: n[0] - s[0] > 1.0)
    assert ok, f"Cooper from {start} to {end}"
    assert max(m.twist.linear.x for m in bridge.messages(velocity)) > 0.5  # the velocimeter saw it go


def test_qrio_arm_follows_joint_trajectory(bridge):
    states = bridge.listen_once(JointState, "/qrio/joint_states", _qos(JointState))
    pub = bridge.publisher(JointTrajectory, "/qrio/joint_trajectory")
    msg = JointTrajectory(joint_names=["LeftShoulderPitch"],
                          points=[JointTrajectoryPoint(positions=[0.6])])

    def at_target():
        pub.publish(msg)
        latest = bridge.messages(states)
        if not latest:
            return False
        position = dict(zip(latest[-1].name, latest[-1].position)).get("LeftShoulderPitch")
        return position is not None and abs(position - 0.6) < 0.05

    assert bridge.wait_for(at_target, PATIENCE), bridge.log_tail()


def test_motion_sensor_topics_publish_their_types(bridge):
    topics = {"/car/compass/Compass/field": MagneticField, "/car/compass/Compass/heading": Float32,
              "/car/accelerometer/Accel": Imu, "/car/gyroscope/Gyro": Imu, "/car/velocimeter/Velocimeter": TwistStamped,
              "/car/inclinometer/Inclinometer": Imu, "/qrio/accelerometer/Accel": Imu, "/lisa/gyroscope/Gyro": Imu}
    keys = {topic: bridge.listen_once(t, topic, _qos(t), key=f"types{topic}") for topic, t in topics.items()}
    assert bridge.wait_for(lambda: all(bridge.messages(k) for k in keys.values()), PATIENCE), \
        [t for t, k in keys.items() if not bridge.messages(k)]
    names = dict(bridge.node.get_topic_names_and_types())
    for topic, msg_type in topics.items():
        assert names[topic] == [f"{msg_type.__module__.split('.')[0]}/msg/{msg_type.__name__}"]

    # An earlier test may have left the car braking, which a gravity-referenced inclinometer and an
    # accelerometer read as tilt: take readings made once ground truth says the car is at rest.
    def at_rest():
        twist = bridge.messages("/car/ground_truth")[-1].twist.twist
        return max(abs(twist.linear.x), abs(twist.linear.y), abs(twist.linear.z), abs(twist.angular.z)) < 0.01

    assert bridge.wait_for(at_rest, PATIENCE), bridge.log_tail()
    rest = _secs(bridge.messages("/car/ground_truth")[-1].header.stamp)
    assert bridge.wait_for(lambda: all(_secs(bridge.messages(keys[t])[-1].header.stamp) > rest for t in (
        "/car/accelerometer/Accel", "/car/inclinometer/Inclinometer")), PATIENCE), bridge.log_tail()
    accel = bridge.messages(keys["/car/accelerometer/Accel"])[-1]
    assert accel.linear_acceleration.z == pytest.approx(9.81, abs=1.0)  # specific force at rest: up
    assert accel.orientation_covariance[0] == -1.0  # REP-145: no orientation in an accelerometer
    incline = bridge.messages(keys["/car/inclinometer/Inclinometer"])[-1].orientation
    assert abs(incline.x) < 0.05 and abs(incline.y) < 0.05  # the car stands level on the quay
    # the heading from the car's ground truth (its compass is mounted square on base_link): clockwise from
    # magnetic north, so about 2 pi - CAR_YAW; the car stands still, so the newest of each belong together
    heading = bridge.messages(keys["/car/compass/Compass/heading"])[-1].data
    q = bridge.messages("/car/ground_truth")[-1].pose.pose.orientation
    expected = magnetic_heading(rotations.rotation_matrix((q.x, q.y, q.z, q.w)), DECLINATION)
    assert abs(rotations.wrap_pi(heading - expected)) < 0.05, (heading, expected)


def test_omnidirectional_camera_publishes_images_and_its_lens(bridge):
    base = "/omni/camera/OmniCam"
    raw = bridge.listen_once(Image, f"{base}/image_raw", _qos(Image))
    jpeg = bridge.listen_once(CompressedImage, f"{base}/image_raw/compressed", _qos(CompressedImage))
    info = bridge.listen_once(CameraInfo, f"{base}/camera_info", _qos(CameraInfo))
    assert bridge.wait_for(lambda: bridge.messages(raw) and bridge.messages(jpeg) and bridge.messages(info), PATIENCE), \
        bridge.log_tail()
    image, lens = bridge.messages(raw)[-1], bridge.messages(info)[-1]
    assert (image.width, image.height, image.encoding) == (320, 320, "rgb8")
    assert image.header.frame_id == lens.header.frame_id == "omni/omnicam_link_optical"
    assert lens.distortion_model == "unified" and list(lens.d) == [1.0]
    assert lens.k[0] == pytest.approx(-lens.k[4]) and lens.k[4] > 0  # a reflection: fx = -fy
    corner = image.data[:3]  # outside the mirror: black
    assert bytes(corner) == b"\0\0\0"
    assert bytes(bridge.messages(jpeg)[-1].data[:2]) == b"\xff\xd8"
