"""Typed sensor readings produced by the core (SI units, REP-103 frames).

Every front door (protocol, ROS, JSONL recorder) starts from these objects;
no sensor logic lives outside ``usarsim.sim``. Positions and orientations are
in the core world frame (x north, y west, z up) unless a field says
otherwise; body-relative values are FLU.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

Vec3 = tuple[float, float, float]
Quat = tuple[float, float, float, float]  # (x, y, z, w)


@dataclass(frozen=True)
class Reading:
    """Common header: sim time (s), robot name, sensor name and its frame link."""

    time: float
    robot: str
    sensor: str
    frame: str
    kind: ClassVar[str] = "Reading"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict: time, robot, sensor, type, then the values."""
        values = {name: _jsonable(getattr(self, name)) for name in _field_names(type(self)) or ()
                  if name not in ("time", "robot", "sensor")}
        return {"time": self.time, "robot": self.robot, "sensor": self.sensor, "type": self.kind, "values": values}


_FIELD_NAMES: dict[type, tuple[str, ...] | None] = {}


def _field_names(cls: type) -> tuple[str, ...] | None:
    """Field names of a dataclass type (None for other types); cached: readings convert at sensor rates."""
    try:
        return _FIELD_NAMES[cls]
    except KeyError:
        names = tuple(f.name for f in dataclasses.fields(cls)) if dataclasses.is_dataclass(cls) else None
        _FIELD_NAMES[cls] = names
        return names


def _jsonable(value: Any) -> Any:
    if isinstance(value, (int, float, str, bool)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return f"<{len(value)} bytes>"
    names = _field_names(type(value))
    if names is not None:
        return {name: _jsonable(getattr(value, name)) for name in names}
    if hasattr(value, "tolist"):
        return value.tolist()
    return value


@dataclass(frozen=True)
class RangeScan(Reading):
    """Planar laser scan. ranges[i] is at angle_min + i*angle_increment (FLU, CCW)."""

    ranges: tuple[float, ...]
    angle_min: float
    angle_increment: float
    range_min: float
    range_max: float
    scan_time: float
    sensor_type: str = "RangeScanner"  # or IRScanner
    kind: ClassVar[str] = "RangeScan"


@dataclass(frozen=True)
class RangeReading(Reading):
    """Single range (sonar or IR). ``range == range_max`` means nothing detected."""

    range: float
    range_min: float
    range_max: float
    field_of_view: float
    sensor_type: str = "Sonar"  # or IR
    kind: ClassVar[str] = "Range"


@dataclass(frozen=True)
class OdometryReading(Reading):
    """Dead-reckoned planar pose relative to the start (or last reset), REP-103."""

    x: float
    y: float
    theta: float
    linear_velocity: float
    angular_velocity: float
    pose_variance: tuple[float, float, float]  # x, y, theta
    twist_variance: tuple[float, float]  # v, omega
    kind: ClassVar[str] = "Odometry"


@dataclass(frozen=True)
class GroundTruthReading(Reading):
    """Exact pose and twist of the chassis in the world frame."""

    position: Vec3
    orientation: Quat
    linear_velocity: Vec3  # world frame
    angular_velocity: Vec3  # world frame
    kind: ClassVar[str] = "GroundTruth"


@dataclass(frozen=True)
class InsReading(Reading):
    """INS estimate: position (world), attitude (roll, pitch, yaw), body rates and acceleration."""

    position: Vec3
    rpy: Vec3
    angular_velocity: Vec3  # body frame, rad/s
    linear_acceleration: Vec3  # body frame, m/s^2, includes gravity reaction
    position_variance: float
    orientation_variance: float
    angular_velocity_variance: float
    linear_acceleration_variance: float
    kind: ClassVar[str] = "INS"


@dataclass(frozen=True)
class GpsReading(Reading):
    """Geodetic fix. latitude/longitude in signed decimal degrees, altitude in m."""

    latitude: float
    longitude: float
    altitude: float
    fix: bool
    satellites: int
    horizontal_sigma: float
    kind: ClassVar[str] = "GPS"


@dataclass(frozen=True)
class EncoderReading(Reading):
    """Tick count of one joint: ticks = angle / resolution."""

    joint: str
    ticks: int
    resolution: float
    kind: ClassVar[str] = "Encoder"


@dataclass(frozen=True)
class TouchReading(Reading):
    """True when something is within the touch distance of the sensor face."""

    touched: bool
    kind: ClassVar[str] = "Touch"


@dataclass(frozen=True)
class Lens:
    """Intrinsics of an image in its optical frame (z forward, x right, y down), as
    sensor_msgs/CameraInfo carries them: ``model`` is ``plumb_bob`` (pinhole, ``d`` all zero)
    or ``unified`` (catadioptric unified model: a direction is projected from ``(0, 0, -xi)``
    onto the plane, ``d = (xi,)``; xi = 1 is a parabolic mirror)."""

    model: str
    fx: float
    fy: float
    cx: float
    cy: float
    d: tuple[float, ...]


def pinhole_lens(width: int, height: int, horizontal_fov: float) -> Lens:
    """An ideal pinhole (square pixels, no distortion) with this horizontal FOV."""
    f = (width / 2.0) / math.tan(horizontal_fov / 2.0)
    return Lens("plumb_bob", f, f, width / 2.0, height / 2.0, (0.0,) * 5)


@dataclass(frozen=True)
class CameraImage(Reading):
    """Packed RGB8 image, rows top to bottom. Optical frame: z forward, x right, y down.
    ``lens`` None means the ideal pinhole of ``horizontal_fov``."""

    width: int
    height: int
    rgb: bytes = field(repr=False)
    horizontal_fov: float
    lens: Lens | None = None
    kind: ClassVar[str] = "Camera"

    def intrinsics(self) -> Lens:
        """The image's lens (the pinhole of ``horizontal_fov`` when none was given)."""
        return self.lens or pinhole_lens(self.width, self.height, self.horizontal_fov)


@dataclass(frozen=True)
class RobotState(Reading):
    """STA-like robot state (no noise)."""

    vehicle_type: str
    battery: float  # seconds left
    battery_life: float
    light_on: bool
    light_intensity: int
    front_steer: float
    rear_steer: float
    rudder: float = 0.0  # rad, +left (nautic vehicles)
    stern_plane: float = 0.0  # rad, +rise (nautic vehicles)
    kind: ClassVar[str] = "State"


@dataclass(frozen=True)
class RobotLost(Reading):
    """The robot fell out of the world (below the lowest floor by FALL_LIMIT) and was removed."""

    position: Vec3  # where it was last (core world frame)
    kind: ClassVar[str] = "RobotLost"


@dataclass(frozen=True)
class TracePoint(Reading):
    """A point of the robot's path trace (TRACE): its position when the trace dropped it."""

    position: Vec3  # core world frame
    color: str  # one of the protocol's TRACE colours (Red, Yellow, Green, Cyan, White, Blue, Purple)
    index: int  # the point's number in the trail, from 0
    kind: ClassVar[str] = "Trace"


@dataclass(frozen=True)
class JointStateReading(Reading):
    """Positions (rad or m), velocities and efforts of the robot's movable joints."""

    names: tuple[str, ...]
    positions: tuple[float, ...]
    velocities: tuple[float, ...]
    efforts: tuple[float, ...]
    kind: ClassVar[str] = "JointState"


@dataclass(frozen=True)
class MissionPackageState(Reading):
    """MISSTA-like state of one joint group: per-link value and torque."""

    package: str
    links: tuple[int, ...]
    values: tuple[float, ...]
    torques: tuple[float, ...]
    kind: ClassVar[str] = "MissionPackage"


@dataclass(frozen=True)
class RfidTagSeen:
    """One detected tag: id, memory and its position in the sensor frame (FLU)."""

    tag_id: int
    memory: str
    position: Vec3
    signal_dbm: float
    single_shot: bool = False


@dataclass(frozen=True)
class RfidReading(Reading):
    """Tags currently readable by the reader.

    ``memory_read``: the reader reads memory on every detection (bAlwaysReadRFIDmem),
    so the SEN line carries ``Mem``; ``report_location``: add the older ``Location``.
    """

    tags: tuple[RfidTagSeen, ...]
    memory_read: bool = False
    report_location: bool = False
    kind: ClassVar[str] = "RFID"


@dataclass(frozen=True)
class VictimPartSeen:
    """A body part (or false-alarm part) hit by the victim sensor, sensor frame (FLU)."""

    part: str
    position: Vec3
    victim_id: str


@dataclass(frozen=True)
class VictimReading(Reading):
    """Victim sensor hits."""

    parts: tuple[VictimPartSeen, ...]
    kind: ClassVar[str] = "VictSensor"


@dataclass(frozen=True)
class HumanMotionReading(Reading):
    """Probability of human motion in the sensor's view."""

    probability: float
    kind: ClassVar[str] = "HumanMotion"


@dataclass(frozen=True)
class SoundReading(Reading):
    """Loudest victim sound at the robot."""

    loudness: float
    duration: float
    kind: ClassVar[str] = "Sound"


@dataclass(frozen=True)
class PointCloudReading(Reading):
    """3-D range image as points in the sensor frame (FLU), row-major by vertical step."""

    points: tuple[Vec3, ...]
    ranges: tuple[float, ...]
    horizontal_fov: float
    vertical_fov: float
    horizontal_resolution: float
    vertical_resolution: float
    range_max: float
    rows: int = 0  # vertical steps; points[r * columns + c]
    columns: int = 0  # horizontal steps
    kind: ClassVar[str] = "RangeScanner3D"


# Pa, standard air pressure at sea level: what lies on every water surface
ATMOSPHERE = 101325.0


@dataclass(frozen=True)
class DepthReading(Reading):
    """Depth below the water surface (m, positive down, ``variance`` m^2) and the gauge pressure there
    (Pa): ``pressure_per_metre`` (rho g of the water, 0 out of it) times the depth."""

    depth: float
    variance: float
    pressure_per_metre: float
    kind: ClassVar[str] = "Depth"

    @property
    def pressure(self) -> float:
        """The gauge pressure at the measured depth (Pa)."""
        return self.pressure_per_metre * self.depth

    @property
    def absolute_pressure(self) -> float:
        """The gauge pressure plus the atmosphere over the water (Pa)."""
        return ATMOSPHERE + self.pressure

    @property
    def pressure_variance(self) -> float:
        """The pressure's variance (Pa^2): the depth's, scaled by (rho g)^2."""
        return self.variance * self.pressure_per_metre ** 2


@dataclass(frozen=True)
class CompassReading(Reading):
    """Heading to magnetic north (rad, clockwise, 0..2 pi) and the field in the sensor frame (tesla)."""

    heading: float
    magnetic_field: Vec3
    heading_variance: float
    field_variance: float
    kind: ClassVar[str] = "Compass"


@dataclass(frozen=True)
class AccelerometerReading(Reading):
    """Specific force along the sensor's axes (m/s^2; at rest +g on the up axis)."""

    linear_acceleration: Vec3
    variance: float
    kind: ClassVar[str] = "Accelerometer"


@dataclass(frozen=True)
class GyroscopeReading(Reading):
    """Angular rate about the sensor's axes (rad/s)."""

    angular_velocity: Vec3
    variance: float
    kind: ClassVar[str] = "Gyroscope"


@dataclass(frozen=True)
class VelocimeterReading(Reading):
    """Velocity over ground along the sensor's axes (m/s)."""

    linear_velocity: Vec3
    variance: float
    kind: ClassVar[str] = "Velocimeter"


@dataclass(frozen=True)
class InclinometerReading(Reading):
    """Roll and pitch of the sensor against gravity (rad, REP-103)."""

    roll: float
    pitch: float
    variance: float
    kind: ClassVar[str] = "Inclinometer"
