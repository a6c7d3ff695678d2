"""Readings -> ROS 2 messages (pure: no node, no simulator, no I/O).

``reading_to_messages(reading, names)`` returns ``(topic, message)`` pairs,
TF included where a reading implies a transform (odometry: odom -> base_link;
joint states: the movable links). The bridge node publishes them; the bag
recorder writes the same pairs, so a bag and a live run carry identical data.

Conventions (docs/ros.md):
- topics are ``/<robot>/...`` (``RobotNames.namespace``), or ``<robot>/...`` relative to the node's namespace
  (``RobotNames.relative``, what the bridge node uses); /clock is global, /tf and /tf_static too unless a
  robot has its own (``RobotNames.tf_topic``: multi-robot mode publishes ``<robot>/tf``);
- frames are the catalogue's link names with an optional prefix (``<robot>/`` with several robots);
  the world frame (``map``) is shared and never prefixed;
- "no return" of a range sensor (reading == range_max) becomes +inf (REP-117);
- stamps are sim time.
"""
from __future__ import annotations

import array
import io
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence

import numpy as np
from geometry_msgs.msg import Quaternion, TransformStamped, TwistStamped
from nav_msgs.msg import Odometry
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import (BatteryState, CameraInfo, CompressedImage, FluidPressure, Image, Imu, JointState, LaserScan,
                             MagneticField, NavSatFix, NavSatStatus, PointCloud2, PointField, Range)
from std_msgs.msg import Bool, Float32, Float32MultiArray, UInt8
from usarsim_interfaces.msg import RfidTag, RfidTagDetections, VictimDetections, VictimPart
from visualization_msgs.msg import Marker

from usarsim import rotations
from usarsim.ros.kinematics import OPTICAL_SUFFIX, JointFrame, robot_joints
from usarsim.ros import motion_sensors
from usarsim.ros.covariance import UNMEASURED, diag3, diagonal
from usarsim.ros.markers import rfid_marker, trace_marker, victim_marker
from usarsim.ros.stamps import set_header, stamp
from usarsim.sim import readings as rd
from usarsim.sim.sensors import registry

try:  # built into the environment by scripts/build_ros_interfaces.sh where ROS 2 is not installed
    from tf2_msgs.msg import TFMessage
except ImportError:  # pragma: no cover - depends on the installation
    TFMessage = None  # type: ignore[assignment,misc]

if TYPE_CHECKING:
    from usarsim.sim.catalogue import RobotSpec

HAVE_TF = TFMessage is not None
TF_TOPIC = "/tf"
TF_STATIC_TOPIC = "/tf_static"
CLOCK_TOPIC = "/clock"


@dataclass(frozen=True)
class RobotNames:
    """How one robot's readings are named in ROS: namespace, frame prefix, main sensors, joints."""

    robot: str
    frame_prefix: str = ""
    namespace: str | None = None  # default: the robot name
    world_frame: str = "map"
    odom_frame: str = "odom"
    base_frame: str = "base_link"
    footprint_frame: str = "base_footprint"  # REP-120: base_link projected on the ground
    relative: bool = False  # topics relative to the publishing node's namespace (no leading '/')
    tf_topic: str = TF_TOPIC
    tf_static_topic: str = TF_STATIC_TOPIC
    imu_yaw_offset: float = 0.0  # added to the IMU yaw: pi/2 reports it in ENU (0 = east) instead of the world frame
    base_height: float = 0.0  # base_link above the ground at rest: z of odom -> base_link
    # sensor name published on the plain topic ("scan", "camera", "points"); others get "<topic>/<name>"
    primary: Mapping[str, str] = field(default_factory=dict)
    joints: tuple[JointFrame, ...] = ()

    @classmethod
    def for_spec(cls, robot: str, spec: "RobotSpec", frame_prefix: str = "", **kwargs: Any) -> "RobotNames":
        """Names for a robot of catalogue class ``spec`` (first scanner/camera/3-D scanner are primary)."""
        primary: dict[str, str] = {}
        for sensor in spec.sensors:
            kind = sensor_form(sensor.type).primary
            if kind and kind not in primary:
                primary[kind] = sensor.name
        return cls(robot=robot, frame_prefix=frame_prefix, primary=primary, joints=robot_joints(spec),
                   base_height=-spec.body.lowest_point(), **kwargs)

    def topic(self, relative: str) -> str:
        """Topic of a per-robot stream (absolute, or relative to the node's namespace)."""
        ns = self.robot if self.namespace is None else self.namespace
        ns = ns.strip("/")
        name = f"{ns}/{relative}" if ns else relative
        return name if self.relative else f"/{name}"

    def frame(self, link: str) -> str:
        """TF frame of a robot link."""
        return self.frame_prefix + link

    def sensor_topic(self, kind: str, sensor: str, leaf: str = "") -> str:
        """``<kind>[/<sensor>][/<leaf>]``: the primary sensor of a kind drops its name."""
        parts = [kind] if self.primary.get(kind) == sensor else [kind, sensor]
        if leaf:
            parts.append(leaf)
        return self.topic("/".join(parts))


# --- small builders ------------------------------------------------------------------------
def clock_message(t: float) -> Clock:
    """rosgraph_msgs/Clock for sim time ``t``."""
    return Clock(clock=stamp(t))


def _quat(q: Iterable[float]) -> Quaternion:
    x, y, z, w = q
    return Quaternion(x=float(x), y=float(y), z=float(z), w=float(w))


def transform(t: float, parent: str, child: str, xyz: Iterable[float], q: Iterable[float]) -> TransformStamped:
    """geometry_msgs/TransformStamped of ``child`` in ``parent``."""
    msg = TransformStamped()
    set_header(msg, t, parent)
    msg.child_frame_id = child
    x, y, z = xyz
    msg.transform.translation.x, msg.transform.translation.y, msg.transform.translation.z = float(x), float(y), float(z)
    rotation = msg.transform.rotation
    rotation.x, rotation.y, rotation.z, rotation.w = (float(c) for c in q)
    return msg


def tf_messages(transforms: list[TransformStamped], topic: str = TF_TOPIC) -> list[tuple[str, Any]]:
    """[(topic, tf2_msgs/TFMessage)], or nothing when tf2_msgs is not installed."""
    if not transforms or not HAVE_TF:
        return []
    return [(topic, TFMessage(transforms=transforms))]


def _ranges(values: Iterable[float], range_max: float) -> np.ndarray:
    r = np.asarray(values, dtype=np.float32)
    return np.where(r >= np.float32(range_max), np.float32(np.inf), r)


# --- one function per reading type ---------------------------------------------------------
def laser_scan(r: rd.RangeScan, names: RobotNames) -> LaserScan:
    """sensor_msgs/LaserScan: beam 0 at angle_min (rightmost), counter-clockwise."""
    msg = LaserScan()
    set_header(msg, r.time, names.frame(r.frame))
    msg.angle_min = float(r.angle_min)
    msg.angle_max = float(r.angle_min + r.angle_increment * max(len(r.ranges) - 1, 0))
    msg.angle_increment = float(r.angle_increment)
    msg.time_increment = 0.0  # every beam of a reading is cast at the same instant
    msg.scan_time = float(r.scan_time)
    msg.range_min = float(r.range_min)
    msg.range_max = float(r.range_max)
    msg.ranges = array.array("f", _ranges(r.ranges, r.range_max).tobytes())
    return msg


def _scan(r: rd.RangeScan, names: RobotNames) -> list[tuple[str, Any]]:
    return [(names.sensor_topic("scan", r.sensor), laser_scan(r, names))]


def range_message(r: rd.RangeReading, names: RobotNames) -> Range:
    """sensor_msgs/Range (ULTRASOUND for sonar, INFRARED for IR)."""
    msg = Range()
    set_header(msg, r.time, names.frame(r.frame))
    msg.radiation_type = Range.INFRARED if r.sensor_type.upper() == "IR" else Range.ULTRASOUND
    msg.field_of_view = float(r.field_of_view)
    msg.min_range = float(r.range_min)
    msg.max_range = float(r.range_max)
    msg.range = math.inf if r.range >= r.range_max else float(r.range)
    return msg


def _range_kind(sensor_type: str) -> str:
    return "ir" if sensor_type.upper() == "IR" else "sonar"


def _range(r: rd.RangeReading, names: RobotNames) -> list[tuple[str, Any]]:
    return [(names.topic(f"{_range_kind(r.sensor_type)}/{r.sensor}"), range_message(r, names))]


def odometry(r: rd.OdometryReading, names: RobotNames) -> Odometry:
    """nav_msgs/Odometry in odom; twist in base_link; 2-D covariances, unmeasured axes large."""
    msg = Odometry()
    set_header(msg, r.time, names.frame(names.odom_frame))
    msg.child_frame_id = names.frame(names.base_frame)
    msg.pose.pose.position.x, msg.pose.pose.position.y = float(r.x), float(r.y)
    msg.pose.pose.position.z = float(names.base_height)
    msg.pose.pose.orientation = _quat(rotations.yaw_quaternion(r.theta))
    vx, vy, vth = r.pose_variance
    msg.pose.covariance = diagonal((vx, vy, UNMEASURED, UNMEASURED, UNMEASURED, vth))
    msg.twist.twist.linear.x = float(r.linear_velocity)
    msg.twist.twist.angular.z = float(r.angular_velocity)
    tv, tw = r.twist_variance
    msg.twist.covariance = diagonal((tv, UNMEASURED, UNMEASURED, UNMEASURED, UNMEASURED, tw))
    return msg


def odom_transform(r: rd.OdometryReading, names: RobotNames) -> TransformStamped:
    """odom -> base_link from the odometry estimate (REP-105)."""
    return transform(r.time, names.frame(names.odom_frame), names.frame(names.base_frame),
                     (r.x, r.y, names.base_height), (0.0, 0.0, math.sin(r.theta / 2.0), math.cos(r.theta / 2.0)))


def _odometry(r: rd.OdometryReading, names: RobotNames) -> list[tuple[str, Any]]:
    return [(names.topic("odom"), odometry(r, names)), *tf_messages([odom_transform(r, names)], names.tf_topic)]


def _world_odometry(time: float, names: RobotNames, position: Sequence[float],
                    orientation: Sequence[float]) -> Odometry:
    """Odometry header and pose of the chassis in the world frame."""
    msg = Odometry()
    set_header(msg, time, names.world_frame)
    msg.child_frame_id = names.frame(names.base_frame)
    p = msg.pose.pose.position
    p.x, p.y, p.z = (float(v) for v in position)
    msg.pose.pose.orientation = _quat(orientation)
    return msg


def ground_truth(r: rd.GroundTruthReading, names: RobotNames) -> Odometry:
    """nav_msgs/Odometry of the exact chassis pose in the world frame; twist in base_link."""
    msg = _world_odometry(r.time, names, r.position, r.orientation)
    lin = rotations.rotate_inverse(r.orientation, r.linear_velocity)
    ang = rotations.rotate_inverse(r.orientation, r.angular_velocity)
    t = msg.twist.twist
    t.linear.x, t.linear.y, t.linear.z = (float(v) for v in lin)
    t.angular.x, t.angular.y, t.angular.z = (float(v) for v in ang)
    return msg


def _ground_truth(r: rd.GroundTruthReading, names: RobotNames) -> list[tuple[str, Any]]:
    return [(names.topic("ground_truth"), ground_truth(r, names))]


def map_to_odom(truth: rd.GroundTruthReading, odom: rd.OdometryReading, names: RobotNames) -> TransformStamped:
    """world -> odom such that world -> odom -> base_link equals the ground-truth pose (no SLAM needed)."""
    t_base = rotations.pose_matrix(truth.position, truth.orientation)
    t_odom_base = rotations.pose_matrix((odom.x, odom.y, names.base_height), rotations.yaw_quaternion(odom.theta))
    t = t_base @ np.linalg.inv(t_odom_base)
    q = rotations.quaternion_from_matrix(t[:3, :3])
    return transform(truth.time, names.world_frame, names.frame(names.odom_frame), t[:3, 3], q)


def imu(r: rd.InsReading, names: RobotNames) -> Imu:
    """sensor_msgs/Imu: INS attitude (relative to the world frame, or ENU), body rates, specific force."""
    msg = Imu()
    set_header(msg, r.time, names.frame(r.frame))
    roll, pitch, yaw = r.rpy
    msg.orientation = _quat(rotations.quaternion_from_euler((roll, pitch, yaw + names.imu_yaw_offset)))
    msg.orientation_covariance = diag3(float(r.orientation_variance))
    av = msg.angular_velocity
    av.x, av.y, av.z = (float(v) for v in r.angular_velocity)
    msg.angular_velocity_covariance = diag3(float(r.angular_velocity_variance))
    la = msg.linear_acceleration
    la.x, la.y, la.z = (float(v) for v in r.linear_acceleration)
    msg.linear_acceleration_covariance = diag3(float(r.linear_acceleration_variance))
    return msg


def ins_odometry(r: rd.InsReading, names: RobotNames) -> Odometry:
    """The INS pose estimate as nav_msgs/Odometry in the world frame (twist: body rates only)."""
    msg = _world_odometry(r.time, names, r.position, rotations.quaternion_from_euler(r.rpy))
    pv, ov = float(r.position_variance), float(r.orientation_variance)
    msg.pose.covariance = diagonal((pv, pv, pv, ov, ov, ov))
    a = msg.twist.twist.angular
    a.x, a.y, a.z = (float(v) for v in r.angular_velocity)
    wv = float(r.angular_velocity_variance)
    msg.twist.covariance = diagonal((UNMEASURED, UNMEASURED, UNMEASURED, wv, wv, wv))
    return msg


def _ins(r: rd.InsReading, names: RobotNames) -> list[tuple[str, Any]]:
    return [(names.topic("imu/data"), imu(r, names)), (names.topic("ins/odom"), ins_odometry(r, names))]


def nav_sat_fix(r: rd.GpsReading, names: RobotNames) -> NavSatFix:
    """sensor_msgs/NavSatFix: status from the fix, diagonal covariance from the noise model's sigma."""
    msg = NavSatFix()
    set_header(msg, r.time, names.frame(r.frame))
    msg.status.status = NavSatStatus.STATUS_FIX if r.fix else NavSatStatus.STATUS_NO_FIX
    msg.status.service = NavSatStatus.SERVICE_GPS
    msg.latitude, msg.longitude, msg.altitude = float(r.latitude), float(r.longitude), float(r.altitude)
    var = float(r.horizontal_sigma) ** 2
    # the model does not noise altitude; report the horizontal variance there too rather than a false zero
    msg.position_covariance = diag3(var)
    msg.position_covariance_type = NavSatFix.COVARIANCE_TYPE_DIAGONAL_KNOWN
    return msg


def _gps(r: rd.GpsReading, names: RobotNames) -> list[tuple[str, Any]]:
    return [(names.topic("gps/fix"), nav_sat_fix(r, names)),
            (names.topic("gps/satellites"), UInt8(data=max(0, min(255, int(r.satellites)))))]


def image(r: rd.CameraImage, names: RobotNames) -> Image:
    """sensor_msgs/Image (rgb8) in the camera's optical frame."""
    msg = Image()
    set_header(msg, r.time, names.frame(r.frame + OPTICAL_SUFFIX))
    msg.height, msg.width = int(r.height), int(r.width)
    msg.encoding = "rgb8"
    msg.is_bigendian = 0
    msg.step = 3 * int(r.width)
    msg.data = r.rgb
    return msg


def camera_info(r: rd.CameraImage, names: RobotNames) -> CameraInfo:
    """sensor_msgs/CameraInfo of the image's lens (an ideal pinhole unless the camera says otherwise)."""
    return lens_info(r.time, names.frame(r.frame + OPTICAL_SUFFIX), r.width, r.height, r.intrinsics())


def lens_info(t: float, optical_frame: str, width: int, height: int, lens: rd.Lens) -> CameraInfo:
    """sensor_msgs/CameraInfo of ``lens``: K and P from its focal lengths and centre, D its distortion
    (pinhole: plumb_bob, zeros; omnidirectional: ``unified`` with D = [xi]); no rectification."""
    msg = CameraInfo()
    set_header(msg, t, optical_frame)
    msg.height, msg.width = int(height), int(width)
    msg.distortion_model = lens.model
    msg.d = [float(v) for v in lens.d]
    msg.k = [lens.fx, 0.0, lens.cx, 0.0, lens.fy, lens.cy, 0.0, 0.0, 1.0]
    msg.r = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]
    msg.p = [lens.fx, 0.0, lens.cx, 0.0, 0.0, lens.fy, lens.cy, 0.0, 0.0, 0.0, 1.0, 0.0]
    return msg


def compressed_image(r: rd.CameraImage, names: RobotNames, quality: int = 85) -> CompressedImage:
    """sensor_msgs/CompressedImage (JPEG), as image_transport's compressed plugin publishes it."""
    from PIL import Image as PilImage

    msg = CompressedImage()
    set_header(msg, r.time, names.frame(r.frame + OPTICAL_SUFFIX))
    msg.format = "rgb8; jpeg compressed bgr8"
    buffer = io.BytesIO()
    PilImage.frombuffer("RGB", (int(r.width), int(r.height)), bytes(r.rgb), "raw", "RGB", 0, 1).save(
        buffer, format="JPEG", quality=quality)
    msg.data = buffer.getvalue()
    return msg


def _camera(r: rd.CameraImage, names: RobotNames) -> list[tuple[str, Any]]:
    return [(names.sensor_topic("camera", r.sensor, "image_raw"), image(r, names)),
            (names.sensor_topic("camera", r.sensor, "camera_info"), camera_info(r, names))]


def joint_state(r: rd.JointStateReading) -> JointState:
    """sensor_msgs/JointState (joint names are URDF names, never prefixed)."""
    msg = JointState()
    set_header(msg, r.time)
    msg.name = list(r.names)
    msg.position = array.array("d", r.positions)
    msg.velocity = array.array("d", r.velocities)
    msg.effort = array.array("d", r.efforts)
    return msg


def joint_transforms(r: rd.JointStateReading, names: RobotNames) -> list[TransformStamped]:
    """/tf of every movable joint in ``names.joints`` at the reading's positions."""
    positions = dict(zip(r.names, r.positions))
    out = []
    for joint in names.joints:
        if joint.movable and joint.name in positions:
            xyz, q = joint.transform(positions[joint.name])
            out.append(transform(r.time, names.frame(joint.parent), names.frame(joint.child), xyz, q))
    return out


def _joint_state(r: rd.JointStateReading, names: RobotNames) -> list[tuple[str, Any]]:
    return [(names.topic("joint_states"), joint_state(r)), *tf_messages(joint_transforms(r, names), names.tf_topic)]


def battery_state(r: rd.RobotState, names: RobotNames) -> BatteryState:
    """sensor_msgs/BatteryState: percentage = time left / battery life; electrical values unknown (NaN)."""
    msg = BatteryState()
    set_header(msg, r.time, names.frame(r.frame))
    nan = math.nan
    msg.voltage = msg.temperature = msg.current = msg.charge = msg.capacity = msg.design_capacity = nan
    msg.percentage = float(r.battery / r.battery_life) if r.battery_life > 0 else nan
    msg.power_supply_status = (BatteryState.POWER_SUPPLY_STATUS_DISCHARGING if r.battery > 0
                               else BatteryState.POWER_SUPPLY_STATUS_NOT_CHARGING)
    msg.power_supply_health = BatteryState.POWER_SUPPLY_HEALTH_GOOD if r.battery > 0 else BatteryState.POWER_SUPPLY_HEALTH_DEAD
    msg.power_supply_technology = BatteryState.POWER_SUPPLY_TECHNOLOGY_UNKNOWN
    msg.present = True
    return msg


def _robot_state(r: rd.RobotState, names: RobotNames) -> list[tuple[str, Any]]:
    return [(names.topic("battery/state"), battery_state(r, names))]


def point_cloud(r: rd.PointCloudReading, names: RobotNames) -> PointCloud2:
    """sensor_msgs/PointCloud2 (x, y, z float32), organised rows x columns; no return -> NaN point."""
    pts = np.asarray(r.points, dtype=np.float32).reshape(-1, 3)
    ranges = np.asarray(r.ranges, dtype=np.float32)
    if len(ranges) == len(pts):
        pts = pts.copy()
        pts[ranges >= np.float32(r.range_max)] = np.nan
    msg = PointCloud2()
    set_header(msg, r.time, names.frame(r.frame))
    organised = r.rows > 0 and r.columns > 0 and r.rows * r.columns == len(pts)
    msg.height, msg.width = (r.rows, r.columns) if organised else (1, len(pts))
    msg.fields = [PointField(name=n, offset=4 * i, datatype=PointField.FLOAT32, count=1)
                  for i, n in enumerate("xyz")]
    msg.is_bigendian = False
    msg.point_step = 12
    msg.row_step = 12 * msg.width
    msg.is_dense = not bool(np.isnan(pts).any())
    msg.data = pts.astype("<f4").tobytes()
    return msg


def _points(r: rd.PointCloudReading, names: RobotNames) -> list[tuple[str, Any]]:
    return [(names.sensor_topic("points", r.sensor), point_cloud(r, names))]


def _point(xyz: Sequence[float], point: Any) -> None:
    point.x, point.y, point.z = (float(v) for v in xyz)


def rfid_detections(r: rd.RfidReading, names: RobotNames) -> RfidTagDetections:
    """usarsim_interfaces/RfidTagDetections: every tag read, positions in the reader's frame."""
    msg = RfidTagDetections()
    set_header(msg, r.time, names.frame(r.frame))
    msg.memory_read = bool(r.memory_read)
    for seen in r.tags:
        tag = RfidTag(id=int(seen.tag_id), memory=str(seen.memory), signal_dbm=float(seen.signal_dbm),
                      single_shot=bool(seen.single_shot))
        _point(seen.position, tag.position)
        msg.tags.append(tag)
    return msg


def victim_detections(r: rd.VictimReading, names: RobotNames) -> VictimDetections:
    """usarsim_interfaces/VictimDetections: every body part seen, positions in the sensor's frame."""
    msg = VictimDetections()
    set_header(msg, r.time, names.frame(r.frame))
    for seen in r.parts:
        part = VictimPart(part=str(seen.part), victim_id=str(seen.victim_id))
        _point(seen.position, part.position)
        msg.parts.append(part)
    return msg


def _rfid(r: rd.RfidReading, names: RobotNames) -> list[tuple[str, Any]]:
    topic = names.topic(f"rfid/{r.sensor}")
    return [(topic, rfid_detections(r, names)), (f"{topic}/markers", rfid_marker(r, names.frame(r.frame)))]


def _victim(r: rd.VictimReading, names: RobotNames) -> list[tuple[str, Any]]:
    topic = names.topic(f"victim/{r.sensor}")
    return [(topic, victim_detections(r, names)), (f"{topic}/markers", victim_marker(r, names.frame(r.frame)))]


def _touch(r: rd.TouchReading, names: RobotNames) -> list[tuple[str, Any]]:
    return [(names.topic(f"touch/{r.sensor}"), Bool(data=bool(r.touched)))]


def _human_motion(r: rd.HumanMotionReading, names: RobotNames) -> list[tuple[str, Any]]:
    return [(names.topic(f"human_motion/{r.sensor}"), Float32(data=float(r.probability)))]


def _sound(r: rd.SoundReading, names: RobotNames) -> list[tuple[str, Any]]:
    return [(names.topic(f"sound/{r.sensor}"), Float32MultiArray(data=[float(r.loudness), float(r.duration)]))]


def _trace(r: rd.TracePoint, names: RobotNames) -> list[tuple[str, Any]]:
    return [(names.topic("trace"), trace_marker(r, names.world_frame))]


def _nothing(r: rd.Reading, names: RobotNames) -> list[tuple[str, Any]]:
    return []


Converter = Callable[[Any, RobotNames], list[tuple[str, Any]]]
# (names, catalogue sensor type, sensor name) -> the (topic, message type) pairs one sensor publishes
Topics = Callable[[RobotNames, str, str], list[tuple[str, type]]]


def _no_topics(names: RobotNames, sensor_type: str, sensor: str) -> list[tuple[str, type]]:
    return []


@dataclass(frozen=True)
class RosForm:
    """How one reading type appears in ROS: the bridge's one record per reading type.

    ``topics`` are what one sensor producing this reading publishes (TF excluded); the
    bridge creates them at spawn, ``convert`` fills them (the node itself adds a camera's
    compressed image on demand) and the conformance test checks the two agree. Message
    types in ``reliable`` always go out with the reliable state QoS, others with the
    sensor QoS the node is configured for. ``rate`` names the node parameter
    ``rates.<rate>`` that overrides the sensor interval; ``primary`` the topic kind whose
    first sensor on a robot drops its name (``scan`` rather than ``scan/<name>``). A
    reading with no message of its own names in ``covered_by`` the per-robot topic that
    carries it.
    """

    convert: Converter
    topics: Topics = _no_topics
    reliable: tuple[type, ...] = ()
    rate: str = ""
    primary: str = ""
    covered_by: str = ""


ROS_FORMS: dict[type, RosForm] = {
    rd.RangeScan: RosForm(_scan, lambda n, t, s: [(n.sensor_topic("scan", s), LaserScan)],
                          rate="scan", primary="scan"),
    rd.RangeReading: RosForm(_range, lambda n, t, s: [(n.topic(f"{_range_kind(t)}/{s}"), Range)], rate="range"),
    rd.OdometryReading: RosForm(_odometry, lambda n, t, s: [(n.topic("odom"), Odometry)],
                                reliable=(Odometry,), rate="odom"),
    rd.GroundTruthReading: RosForm(_ground_truth, lambda n, t, s: [(n.topic("ground_truth"), Odometry)],
                                   reliable=(Odometry,), rate="ground_truth"),
    rd.InsReading: RosForm(_ins, lambda n, t, s: [(n.topic("imu/data"), Imu), (n.topic("ins/odom"), Odometry)],
                           reliable=(Odometry,), rate="imu"),
    rd.GpsReading: RosForm(_gps, lambda n, t, s: [(n.topic("gps/fix"), NavSatFix),
                                                  (n.topic("gps/satellites"), UInt8)], rate="gps"),
    rd.CameraImage: RosForm(_camera, lambda n, t, s: [
        (n.sensor_topic("camera", s, "image_raw"), Image),
        (n.sensor_topic("camera", s, "image_raw/compressed"), CompressedImage),
        (n.sensor_topic("camera", s, "camera_info"), CameraInfo)], rate="camera", primary="camera"),
    rd.PointCloudReading: RosForm(_points, lambda n, t, s: [(n.sensor_topic("points", s), PointCloud2)],
                                  rate="points", primary="points"),
    rd.TouchReading: RosForm(_touch, lambda n, t, s: [(n.topic(f"touch/{s}"), Bool)]),
    rd.HumanMotionReading: RosForm(_human_motion, lambda n, t, s: [(n.topic(f"human_motion/{s}"), Float32)]),
    rd.SoundReading: RosForm(_sound, lambda n, t, s: [(n.topic(f"sound/{s}"), Float32MultiArray)]),
    rd.RfidReading: RosForm(_rfid, lambda n, t, s: [(n.topic(f"rfid/{s}"), RfidTagDetections),
                                                    (n.topic(f"rfid/{s}/markers"), Marker)], reliable=(Marker,)),
    rd.VictimReading: RosForm(_victim, lambda n, t, s: [(n.topic(f"victim/{s}"), VictimDetections),
                                                        (n.topic(f"victim/{s}/markers"), Marker)],
                              reliable=(Marker,)),
    # motion sensors and the depth gauge (usarsim.ros.motion_sensors)
    rd.AccelerometerReading: RosForm(motion_sensors.accelerometer,
                                     lambda n, t, s: [(n.topic(f"accelerometer/{s}"), Imu)]),
    rd.GyroscopeReading: RosForm(motion_sensors.gyroscope, lambda n, t, s: [(n.topic(f"gyroscope/{s}"), Imu)]),
    rd.InclinometerReading: RosForm(motion_sensors.inclinometer, lambda n, t, s: [(n.topic(f"inclinometer/{s}"), Imu)]),
    rd.VelocimeterReading: RosForm(motion_sensors.velocimeter,
                                   lambda n, t, s: [(n.topic(f"velocimeter/{s}"), TwistStamped)]),
    rd.CompassReading: RosForm(motion_sensors.compass, lambda n, t, s: [(n.topic(f"compass/{s}/field"), MagneticField),
                                                                        (n.topic(f"compass/{s}/heading"), Float32)]),
    rd.DepthReading: RosForm(motion_sensors.depth, lambda n, t, s: [(n.topic(f"depth/{s}/pressure"), FluidPressure),
                                                                    (n.topic(f"depth/{s}"), Float32)]),
    # robot-level streams (no catalogue sensor): declared by expected_topics
    rd.JointStateReading: RosForm(_joint_state, reliable=(JointState,)),
    rd.RobotState: RosForm(_robot_state, reliable=(BatteryState,)),
    rd.TracePoint: RosForm(_trace, reliable=(Marker,)),
    # encoders read the same joints as joint_states; mission packages are joint groups
    rd.EncoderReading: RosForm(_nothing, covered_by="joint_states"),
    rd.MissionPackageState: RosForm(_nothing, covered_by="joint_states"),
}


def sensor_form(sensor_type: str) -> RosForm:
    """The ROS record of a catalogue sensor type (through the reading type its family produces)."""
    return ROS_FORMS[registry.family(sensor_type).reading_type()]


def reliable_types() -> tuple[type, ...]:
    """Message types always published with the reliable state QoS (/clock included)."""
    out: list[type] = [Clock]
    for form in ROS_FORMS.values():
        out += [t for t in form.reliable if t not in out]
    return tuple(out)


def rate_kinds() -> dict[str, tuple[str, ...]]:
    """``rates.<kind>`` parameter -> the catalogue sensor types it paces."""
    out: dict[str, tuple[str, ...]] = {}
    for sensor_type in registry.known_types():
        kind = sensor_form(sensor_type).rate
        if kind:
            out[kind] = out.get(kind, ()) + (sensor_type,)
    return out


def supported(reading_type: type) -> bool:
    """True when ``reading_to_messages`` knows the reading type."""
    return any(issubclass(reading_type, t) for t in ROS_FORMS)


def reading_to_messages(reading: rd.Reading, names: RobotNames) -> list[tuple[str, Any]]:
    """(topic, message) pairs for one reading; [] for types with no ROS form."""
    form = ROS_FORMS.get(type(reading))
    if form is None:
        for cls, candidate in ROS_FORMS.items():
            if isinstance(reading, cls):
                form = candidate
                break
        else:
            return []
    return form.convert(reading, names)


def expected_topics(spec: "RobotSpec", names: RobotNames) -> list[tuple[str, type]]:
    """(topic, message type) of every per-robot stream a robot of class ``spec`` publishes (TF excluded)."""
    out: list[tuple[str, type]] = [(names.topic("battery/state"), BatteryState)]
    if any(j.movable for j in names.joints):
        out.append((names.topic("joint_states"), JointState))
    for sensor in spec.sensors:
        if sensor.type == "GroundTruth" and not spec.ground_truth:
            continue
        for pair in sensor_form(sensor.type).topics(names, sensor.type, sensor.name):
            if pair not in out:
                out.append(pair)
    return out


def static_transforms(names: RobotNames, t: float = 0.0) -> list[TransformStamped]:
    """Fixed joints of the robot (sensor mounts, optical frames) and base_footprint for /tf_static."""
    out = [transform(t, names.frame(names.base_frame), names.frame(names.footprint_frame),
                     (0.0, 0.0, -names.base_height), (0.0, 0.0, 0.0, 1.0))]
    for joint in names.joints:
        if not joint.movable:
            xyz, q = joint.transform()
            out.append(transform(t, names.frame(joint.parent), names.frame(joint.child), xyz, q))
    return out


def enu_alias(names: RobotNames, enu_frame: str, t: float = 0.0) -> TransformStamped:
    """world -> ENU alias (x east, y north, same origin): the world frame is x north, y west."""
    half = -math.pi / 4.0  # -90 degrees about z
    return transform(t, names.world_frame, enu_frame, (0.0, 0.0, 0.0), (0.0, 0.0, math.sin(half), math.cos(half)))


def initial_joint_transforms(names: RobotNames, t: float = 0.0) -> list[TransformStamped]:
    """Movable joints at position zero (so the tree is complete before the first joint state)."""
    out = []
    for joint in names.joints:
        if joint.movable:
            xyz, q = joint.transform(0.0)
            out.append(transform(t, names.frame(joint.parent), names.frame(joint.child), xyz, q))
    return out


__all__ = ["CLOCK_TOPIC", "HAVE_TF", "RobotNames", "TF_STATIC_TOPIC", "TF_TOPIC", "battery_state",
           "camera_info", "clock_message", "compressed_image", "enu_alias", "expected_topics", "ground_truth",
           "image", "imu", "ins_odometry", "joint_state", "joint_transforms", "laser_scan", "map_to_odom",
           "nav_sat_fix", "odom_transform", "odometry", "lens_info", "point_cloud", "range_message",
           "reading_to_messages", "rfid_detections", "stamp", "static_transforms", "supported", "tf_messages",
           "transform", "victim_detections"]
