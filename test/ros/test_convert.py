"""Readings -> ROS messages, and ROS commands -> core commands (pure: no node, no DDS)."""
import math

import numpy as np
import pytest

pytest.importorskip("sensor_msgs.msg")

from nav_msgs.msg import Odometry  # noqa: E402
from usarsim_interfaces.msg import RfidTagDetections, VictimDetections  # noqa: E402
from visualization_msgs.msg import Marker  # noqa: E402
from sensor_msgs.msg import (BatteryState, CameraInfo, Image, Imu, JointState, LaserScan, NavSatFix,  # noqa: E402
                             NavSatStatus, PointCloud2, Range)

from usarsim import rotations  # noqa: E402
from usarsim.ros import convert  # noqa: E402
from usarsim.ros.commands import group_command, trajectory_command, twist_to_command  # noqa: E402
from usarsim.ros.kinematics import JointFrame, joints_from_urdf  # noqa: E402
from usarsim.sim import readings as rd  # noqa: E402
from usarsim.sim.catalogue import load_robot  # noqa: E402
from usarsim.sim.commands import AckermannDrive, AerialDrive, WheelDrive  # noqa: E402

SPEC = load_robot("P2AT")
NAMES = convert.RobotNames.for_spec("bot", SPEC)
PREFIXED = convert.RobotNames.for_spec("bot", SPEC, frame_prefix="bot/")
H = {"time": 12.345, "robot": "bot"}


def _one(reading, names=NAMES, kind=None):
    pairs = convert.reading_to_messages(reading, names)
    if kind is not None:
        pairs = [(t, m) for t, m in pairs if isinstance(m, kind)]
    assert len(pairs) == 1, pairs
    return pairs[0]


def test_stamp_is_exact_nanoseconds():
    s = convert.stamp(12.345)
    assert (s.sec, s.nanosec) == (12, 345_000_000)
    assert convert.stamp(0.9999999999).sec == 1
    assert convert.clock_message(3.5).clock.nanosec == 500_000_000


def test_laser_scan_fields_and_no_return_is_inf():
    r = rd.RangeScan(**H, sensor="Scanner", frame="laser", ranges=(1.0, 20.0, 2.5), angle_min=-0.1,
                     angle_increment=0.1, range_min=0.0, range_max=20.0, scan_time=0.2)
    topic, msg = _one(r)
    assert topic == "/bot/scan" and isinstance(msg, LaserScan)
    assert msg.header.frame_id == "laser" and msg.header.stamp.sec == 12
    assert msg.angle_max == pytest.approx(0.1) and msg.angle_increment == pytest.approx(0.1)
    assert msg.ranges[0] == 1.0 and math.isinf(msg.ranges[1]) and msg.ranges[2] == 2.5
    assert (msg.range_min, msg.range_max, msg.scan_time) == (0.0, 20.0, pytest.approx(0.2))
    # a second scanner gets its own topic; prefixes apply to frames, not topics
    topic, msg = _one(rd.RangeScan(**{**H, "sensor": "Rear"}, frame="rear_laser", ranges=(1.0,), angle_min=0.0,
                                   angle_increment=0.1, range_min=0.0, range_max=5.0, scan_time=0.2), PREFIXED)
    assert topic == "/bot/scan/Rear" and msg.header.frame_id == "bot/rear_laser"


def test_sonar_and_ir_ranges():
    sonar = rd.RangeReading(**H, sensor="F1", frame="f1_link", range=5.0, range_min=0.0, range_max=5.0,
                            field_of_view=0.35)
    topic, msg = _one(sonar)
    assert topic == "/bot/sonar/F1" and isinstance(msg, Range)
    assert msg.radiation_type == Range.ULTRASOUND and math.isinf(msg.range) and msg.max_range == 5.0
    ir = rd.RangeReading(**H, sensor="IR1", frame="ir1_link", range=0.4, range_min=0.1, range_max=1.5,
                         field_of_view=0.01, sensor_type="IR")
    topic, msg = _one(ir)
    assert topic == "/bot/ir/IR1" and msg.radiation_type == Range.INFRARED and msg.range == pytest.approx(0.4)


def test_odometry_message_and_tf():
    r = rd.OdometryReading(**H, sensor="Odometry", frame="base_link", x=1.0, y=2.0, theta=math.pi / 2,
                           linear_velocity=0.3, angular_velocity=-0.1, pose_variance=(0.01, 0.02, 0.03),
                           twist_variance=(0.04, 0.05))
    pairs = dict(convert.reading_to_messages(r, PREFIXED))
    odom = pairs["/bot/odom"]
    assert isinstance(odom, Odometry)
    assert (odom.header.frame_id, odom.child_frame_id) == ("bot/odom", "bot/base_link")
    assert odom.pose.pose.orientation.z == pytest.approx(math.sqrt(0.5))
    assert odom.pose.pose.position.z == pytest.approx(NAMES.base_height)
    assert (odom.pose.covariance[0], odom.pose.covariance[7], odom.pose.covariance[35]) == (0.01, 0.02, 0.03)
    assert (odom.twist.covariance[0], odom.twist.covariance[35]) == (0.04, 0.05)
    assert odom.twist.twist.linear.x == pytest.approx(0.3) and odom.twist.twist.angular.z == pytest.approx(-0.1)
    if convert.HAVE_TF:
        (tf,) = pairs["/tf"].transforms
        assert (tf.header.frame_id, tf.child_frame_id) == ("bot/odom", "bot/base_link")
        assert tf.transform.translation.x == 1.0 and tf.transform.translation.y == 2.0


def test_ground_truth_twist_is_in_the_body_frame():
    yaw = math.pi / 2
    q = rotations.quaternion_from_euler((0.0, 0.0, yaw))
    r = rd.GroundTruthReading(**H, sensor="GroundTruth", frame="base_link", position=(1.0, 2.0, 0.15),
                              orientation=q, linear_velocity=(0.0, 0.5, 0.0), angular_velocity=(0.0, 0.0, 0.2))
    topic, msg = _one(r)
    assert topic == "/bot/ground_truth" and msg.header.frame_id == "map" and msg.child_frame_id == "base_link"
    assert msg.twist.twist.linear.x == pytest.approx(0.5) and msg.twist.twist.linear.y == pytest.approx(0.0, abs=1e-9)
    assert msg.twist.twist.angular.z == pytest.approx(0.2)


def test_ground_truth_body_twist_for_any_attitude():
    rng = np.random.default_rng(1)
    for _ in range(20):
        q = rng.normal(size=4)
        q = tuple(q / np.linalg.norm(q))
        v = tuple(rng.normal(size=3))
        r = rd.GroundTruthReading(**H, sensor="GroundTruth", frame="base_link", position=(0, 0, 0), orientation=q,
                                  linear_velocity=v, angular_velocity=v)
        lin = _one(r)[1].twist.twist.linear
        expect = rotations.rotation_matrix(q).T @ np.array(v)
        assert (lin.x, lin.y, lin.z) == pytest.approx(tuple(expect), abs=1e-9)


def test_map_to_odom_composes_to_ground_truth():
    truth = rd.GroundTruthReading(**H, sensor="GroundTruth", frame="base_link", position=(3.0, -1.0, 0.15),
                                  orientation=rotations.quaternion_from_euler((0.0, 0.0, 1.0)),
                                  linear_velocity=(0, 0, 0), angular_velocity=(0, 0, 0))
    odom = rd.OdometryReading(**H, sensor="Odometry", frame="base_link", x=0.5, y=0.2, theta=0.3,
                              linear_velocity=0, angular_velocity=0, pose_variance=(0, 0, 0), twist_variance=(0, 0))
    tf = convert.map_to_odom(truth, odom, NAMES)
    assert (tf.header.frame_id, tf.child_frame_id) == ("map", "odom")
    t = tf.transform
    m = np.eye(4)
    m[:3, :3] = rotations.rotation_matrix((t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w))
    m[:3, 3] = (t.translation.x, t.translation.y, t.translation.z)
    base = m @ np.array([0.5, 0.2, NAMES.base_height, 1.0])
    assert base[:3] == pytest.approx([3.0, -1.0, 0.15])
    assert math.atan2(m[1, 0], m[0, 0]) + 0.3 == pytest.approx(1.0)


def test_ins_gives_imu_and_pose():
    r = rd.InsReading(**H, sensor="INS", frame="imu_link", position=(1.0, 2.0, 0.1), rpy=(0.0, 0.0, 0.5),
                      angular_velocity=(0.0, 0.0, 0.1), linear_acceleration=(0.0, 0.0, 9.81), position_variance=0.01,
                      orientation_variance=0.001, angular_velocity_variance=0.0001, linear_acceleration_variance=0.02)
    pairs = dict(convert.reading_to_messages(r, NAMES))
    msg = pairs["/bot/imu/data"]
    assert isinstance(msg, Imu) and msg.header.frame_id == "imu_link"
    assert msg.orientation.z == pytest.approx(math.sin(0.25))
    assert msg.orientation_covariance[0] == 0.001 and msg.linear_acceleration.z == pytest.approx(9.81)
    pose = pairs["/bot/ins/odom"]
    assert pose.header.frame_id == "map" and pose.pose.pose.position.x == 1.0 and pose.pose.covariance[0] == 0.01


def test_gps_fix_status_and_covariance():
    r = rd.GpsReading(**H, sensor="GPS", frame="gps_link", latitude=48.1, longitude=11.5, altitude=500.0,
                      fix=False, satellites=2, horizontal_sigma=3.0)
    msg = _one(r, kind=NavSatFix)[1]
    assert msg.status.status == NavSatStatus.STATUS_NO_FIX and msg.position_covariance[0] == pytest.approx(9.0)
    assert msg.position_covariance_type == NavSatFix.COVARIANCE_TYPE_DIAGONAL_KNOWN
    msg = _one(rd.GpsReading(**{**H}, sensor="GPS", frame="gps_link", latitude=48.1, longitude=11.5, altitude=0.0,
                             fix=True, satellites=8, horizontal_sigma=1.0), kind=NavSatFix)[1]
    assert msg.status.status == NavSatStatus.STATUS_FIX and msg.latitude == 48.1


def test_camera_image_and_info_agree_with_the_fov():
    w, h, fov = 64, 48, 1.0
    r = rd.CameraImage(**H, sensor="Camera", frame="camera_link", width=w, height=h, rgb=bytes(w * h * 3),
                       horizontal_fov=fov)
    pairs = dict(convert.reading_to_messages(r, NAMES))
    img, info = pairs["/bot/camera/image_raw"], pairs["/bot/camera/camera_info"]
    assert isinstance(img, Image) and isinstance(info, CameraInfo)
    assert img.header.frame_id == info.header.frame_id == "camera_link_optical"
    assert (img.encoding, img.step, len(img.data)) == ("rgb8", 3 * w, w * h * 3)
    assert 2 * math.atan(w / 2 / info.k[0]) == pytest.approx(fov)
    assert info.k[4] == info.k[0] and info.p[0] == info.k[0]


def test_joint_states_and_their_tf():
    r = rd.JointStateReading(**H, sensor="JointState", frame="base_link",
                             names=("left_front_wheel_joint", "camera_pan_joint"), positions=(1.0, math.pi / 2),
                             velocities=(0.0, 0.0), efforts=(0.0, 0.0))
    pairs = convert.reading_to_messages(r, NAMES)
    js = dict(pairs)["/bot/joint_states"]
    assert isinstance(js, JointState) and list(js.name) == ["left_front_wheel_joint", "camera_pan_joint"]
    if convert.HAVE_TF:
        tfs = {t.child_frame_id: t for t in dict(pairs)["/tf"].transforms}
        pan = tfs["camera_pan"].transform.rotation
        assert pan.z == pytest.approx(math.sin(math.pi / 4)) and tfs["camera_pan"].header.frame_id == "base_link"
        assert "left_front_wheel" in tfs


def test_static_tree_covers_every_sensor_frame():
    children = {t.child_frame_id for t in convert.static_transforms(PREFIXED)}
    for sensor in SPEC.sensors:
        if sensor.frame_id != "base_link":
            assert "bot/" + sensor.frame_id in children, sensor.name
    assert "bot/camera_link_optical" in children
    movable = {t.child_frame_id for t in convert.initial_joint_transforms(PREFIXED)}
    assert {"bot/camera_pan", "bot/camera_tilt", "bot/left_front_wheel"} <= movable


def test_joint_frame_motion():
    rev = JointFrame("j", "revolute", "a", "b", (1.0, 0.0, 0.0), (0.0, 0.0, 0.0), (0.0, 0.0, 1.0))
    _, q = rev.transform(math.pi)
    assert abs(q[2]) == pytest.approx(1.0)
    pri = JointFrame("p", "prismatic", "a", "b", (0.0, 0.0, 0.0), (0.0, 0.0, math.pi / 2), (1.0, 0.0, 0.0))
    xyz, _ = pri.transform(0.5)
    assert xyz == pytest.approx((0.0, 0.5, 0.0), abs=1e-9)
    (j,) = joints_from_urdf('<robot name="r"><joint name="x" type="fixed"><parent link="a"/><child link="b"/>'
                            '<origin xyz="1 2 3" rpy="0 0 0"/></joint></robot>')
    assert (j.parent, j.child, j.xyz, j.movable) == ("a", "b", (1.0, 2.0, 3.0), False)


def test_battery_point_cloud_and_sar_readings():
    state = rd.RobotState(**H, sensor="State", frame="base_link", vehicle_type="GroundVehicle", battery=900.0,
                          battery_life=3600.0, light_on=False, light_intensity=0, front_steer=0.0, rear_steer=0.0)
    topic, bat = _one(state)
    assert topic == "/bot/battery/state" and isinstance(bat, BatteryState) and bat.percentage == pytest.approx(0.25)
    cloud = rd.PointCloudReading(**H, sensor="Lidar3D", frame="lidar_link", points=((1, 0, 0), (0, 8, 0)),
                                 ranges=(1.0, 8.0), horizontal_fov=1.0, vertical_fov=0.5, horizontal_resolution=0.5,
                                 vertical_resolution=0.5, range_max=8.0, rows=1, columns=2)
    topic, pc = _one(cloud)
    assert topic == "/bot/points/Lidar3D" and isinstance(pc, PointCloud2)
    xyz = np.frombuffer(bytes(pc.data), dtype="<f4").reshape(-1, 3)
    assert xyz[0].tolist() == [1.0, 0.0, 0.0] and np.isnan(xyz[1]).all() and not pc.is_dense
    assert (pc.height, pc.width, pc.point_step, pc.row_step) == (1, 2, 12, 24)
    rfid = rd.RfidReading(**H, sensor="RFID", frame="rfid_link", tags=(rd.RfidTagSeen(7, "hi", (1.0, 0, 0), -40.0),))
    topic, msg = _one(rfid, kind=RfidTagDetections)
    assert topic == "/bot/rfid/RFID" and msg.header.frame_id == "rfid_link"
    assert [(t.id, t.memory, t.position.x, t.signal_dbm) for t in msg.tags] == [(7, "hi", 1.0, -40.0)]
    assert _one(rd.TouchReading(**H, sensor="Bumper", frame="b", touched=True))[1].data is True
    assert _one(rd.HumanMotionReading(**H, sensor="HM", frame="h", probability=0.5))[1].data == 0.5
    assert list(_one(rd.SoundReading(**H, sensor="S", frame="s", loudness=1.0, duration=2.0))[1].data) == [1.0, 2.0]
    assert convert.reading_to_messages(rd.EncoderReading(**H, sensor="E", frame="e", joint="j", ticks=1,
                                                         resolution=0.01), NAMES) == []


def test_detections_become_rviz_markers_beside_their_messages():
    victims = rd.VictimReading(**H, sensor="VictSensor", frame="camera_link", parts=(
        rd.VictimPartSeen("Head", (2.0, 0.1, 0.3), "V1"), rd.VictimPartSeen("Arm", (2.1, -0.2, 0.1), "V1")))
    topic, marker = _one(victims, kind=Marker)
    assert topic == "/bot/victim/VictSensor/markers"
    assert (marker.type, marker.action, marker.header.frame_id, marker.header.stamp.sec) == (
        Marker.SPHERE_LIST, Marker.ADD, "camera_link", 12)
    assert [(p.x, p.y, p.z) for p in marker.points] == [(2.0, 0.1, 0.3), (2.1, -0.2, 0.1)]
    assert marker.scale.x > 0 and marker.color.a > 0 and marker.pose.orientation.w == 1.0
    rfid = rd.RfidReading(**H, sensor="RFID", frame="rfid_link", tags=(rd.RfidTagSeen(7, "hi", (1.0, 0, 0), -40.0),))
    topic, tags = _one(rfid, kind=Marker)
    assert topic == "/bot/rfid/RFID/markers" and [(p.x, p.y) for p in tags.points] == [(1.0, 0.0)]
    assert (tags.ns, tags.id) != (marker.ns, marker.id)
    topic, seen = _one(victims, kind=VictimDetections)
    assert topic == "/bot/victim/VictSensor" and seen.header.frame_id == "camera_link"
    assert [(p.part, p.victim_id, p.position.x) for p in seen.parts] == [("Head", "V1", 2.0), ("Arm", "V1", 2.1)]
    nothing = rd.VictimReading(**H, sensor="VictSensor", frame="camera_link", parts=())
    empty = _one(nothing, kind=Marker)[1]
    assert list(empty.points) == [] and (empty.ns, empty.id) == (marker.ns, marker.id)  # replaces the last list


def test_trace_points_build_up_a_trail_of_markers():
    first, second = (rd.TracePoint(time=12.5, robot="bot", sensor="Trace", frame="map", position=(1.0, 2.0, -1.9),
                                   color=color, index=i) for i, color in enumerate(("Green", "Blue")))
    topic, a = _one(first, kind=Marker)
    _, b = _one(second, kind=Marker)
    assert topic == "/bot/trace" and a.header.frame_id == "map"
    assert (a.type, a.ns, a.lifetime.sec) == (Marker.SPHERE, "trace", 0)  # kept until cleared
    assert (a.pose.position.x, a.pose.position.y, a.pose.position.z) == (1.0, 2.0, -1.9)
    assert (a.color.g, b.color.b) == (1.0, 1.0) and a.id != b.id  # each point stays: a trail


def test_cmd_vel_uses_the_robot_geometry_and_limits():
    drive = SPEC.drive
    cmd = twist_to_command("bot", (0.22, 0.0, 0.0), (0.0, 0.0, 0.0), drive, (WheelDrive,))
    assert cmd.left == pytest.approx(2.0) and cmd.right == pytest.approx(2.0)
    cmd = twist_to_command("bot", (0.0, 0.0, 0.0), (0.0, 0.0, 1.0), drive, (WheelDrive,))
    assert cmd.left == pytest.approx(-cmd.right) and cmd.right > 0
    cmd = twist_to_command("bot", (10.0, 0.0, 0.0), (0.0, 0.0, 1.0), drive, (WheelDrive,))
    assert max(abs(cmd.left), abs(cmd.right)) == pytest.approx(drive.max_wheel_speed) and cmd.right > cmd.left
    with pytest.raises(ValueError, match="NaN"):
        twist_to_command("bot", (math.nan, 0.0, 0.0), (0.0, 0.0, 0.0), drive, (WheelDrive,))
    car = type(drive)(type="ackermann", wheel_radius=0.3, wheelbase=2.0, max_wheel_speed=10.0, max_front_steer=0.5)
    cmd = twist_to_command("car", (1.5, 0.0, 0.0), (0.0, 0.0, 5.0), car, (AckermannDrive,))
    assert isinstance(cmd, AckermannDrive) and cmd.speed == pytest.approx(5.0) and cmd.front_steer == pytest.approx(0.5)
    air = type(drive)(type="aerial", max_linear_speed=2.0, max_lateral_speed=2.0, max_altitude_speed=1.0, max_yaw_rate=1.0)
    cmd = twist_to_command("uav", (5.0, -1.0, 3.0), (0.0, 0.0, 0.2), air, (AerialDrive,))
    assert (cmd.linear, cmd.lateral, cmd.altitude, cmd.yaw_rate) == (2.0, -1.0, 1.0, 0.2)


def test_joint_group_and_trajectory_commands():
    group = SPEC.joint_groups[0]
    cmd = group_command("bot", group, [0.5, -0.2])
    assert cmd.targets == {f"{group.name}:1": 0.5, f"{group.name}:2": -0.2}
    with pytest.raises(ValueError, match="2 joints"):
        group_command("bot", group, [0.5])
    with pytest.raises(ValueError, match="NaN"):
        group_command("bot", group, [0.5, math.nan])
    cmd = trajectory_command("bot", SPEC.joint_groups, ["camera_tilt_joint"], [0.3], [])
    assert cmd.targets == {"camera_tilt_joint": 0.3} and cmd.order == 0
    assert trajectory_command("bot", SPEC.joint_groups, ["camera_pan_joint"], [], [0.1]).order == 1
    with pytest.raises(ValueError, match="no_such_joint"):
        trajectory_command("bot", SPEC.joint_groups, ["no_such_joint"], [0.3], [])


def test_enu_imu_orientation_and_map_alias():
    """imu_orientation:=enu: yaw 0 = east; the enu frame's +y is the world's +x (north)."""
    ins = rd.InsReading(**H, sensor="INS", frame="imu_link", position=(0.0, 0.0, 0.0), rpy=(0.0, 0.0, 0.3),
                        angular_velocity=(0.0, 0.0, 0.0), linear_acceleration=(0.0, 0.0, 9.81), position_variance=0.0,
                        orientation_variance=0.0, angular_velocity_variance=0.0, linear_acceleration_variance=0.0)
    enu = convert.RobotNames.for_spec("bot", SPEC, imu_yaw_offset=math.pi / 2)
    q = convert.imu(ins, enu).orientation
    assert 2 * math.atan2(q.z, q.w) == pytest.approx(0.3 + math.pi / 2)
    alias = convert.enu_alias(NAMES, "enu")
    assert (alias.header.frame_id, alias.child_frame_id) == ("map", "enu")
    r = alias.transform.rotation
    yaw = 2 * math.atan2(r.z, r.w)  # enu axes in map: x_enu = (cos, sin) of yaw
    north_in_enu = (math.cos(-yaw), math.sin(-yaw))  # world +x expressed in the enu frame
    assert north_in_enu == pytest.approx((0.0, 1.0), abs=1e-9)
