"""The robot catalogue: schema of ``config/robots/*.yaml`` and its loader.

One YAML file per robot class. Its ``body`` section generates the URDF in
``urdf/`` (see ``usarsim.sim.body``), so PyBullet and robot_state_publisher
share one model; the rest configures drive, joint groups, sensors and state.
"""
from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Literal

import yaml

from usarsim.config_loading import ConfigError, convert_node, load_yaml_node
from usarsim.paths import share_dir
from usarsim.sim.body import BodySpec
from usarsim.sim import effecters
from usarsim.sim.sensors import registry

Vec3 = tuple[float, float, float]


@dataclass
class Mount:
    """Pose of a device relative to a parent link (REP-103, metres/radians)."""

    parent: str = "base_link"
    xyz: Vec3 = (0.0, 0.0, 0.0)
    rpy: Vec3 = (0.0, 0.0, 0.0)


@dataclass
class SensorSpec:
    """One sensor instance. ``params`` are validated by the sensor family's Params class."""

    type: str
    name: str
    mount: Mount = field(default_factory=Mount)
    params: dict[str, Any] = field(default_factory=dict)
    frame: str = ""  # TF frame id; default "<name lower-case>_link"

    def __post_init__(self) -> None:
        # Parameters are checked here, so a catalogue entry fails when it loads, with its file:line.
        try:
            registry.params_for(self)
        except (KeyError, TypeError, ValueError) as exc:
            msg = exc.args[0] if exc.args else str(exc)
            raise ValueError(f"sensor '{self.name}' ({self.type}): {msg}") from None

    @property
    def frame_id(self) -> str:
        """The sensor's link/frame name in the URDF and in ROS headers."""
        return self.frame or f"{self.name.lower()}_link"


@dataclass
class DriveSpec:
    """Mobility model and its limits."""

    type: Literal["skid", "differential", "tracked", "ackermann", "aerial", "legged", "none", "nautic", "blimp",
                  "omni", "serpentine"]
    wheel_radius: float = 0.0
    wheel_separation: float = 0.0  # lateral distance between left and right wheel centres
    # Skid steering: the track width that turns wheel speeds into the body's yaw rate on a flat
    # floor (measured by bench/turning.py; wider than wheel_separation because the wheels scrub).
    # 0 = wheel_separation (an ideal differential drive).
    effective_track_width: float = 0.0
    wheelbase: float = 0.0  # longitudinal distance front to rear axle
    max_wheel_speed: float = 0.0  # rad/s
    max_torque: float = 60.0  # N*m per wheel motor
    left_wheels: list[str] = field(default_factory=list)
    right_wheels: list[str] = field(default_factory=list)
    front_steer_joints: list[str] = field(default_factory=list)
    rear_steer_joints: list[str] = field(default_factory=list)
    powered_wheels: list[str] = field(default_factory=list)
    max_front_steer: float = 0.0
    max_rear_steer: float = 0.0
    max_linear_speed: float = 0.0  # m/s (aerial)
    max_lateral_speed: float = 0.0
    max_altitude_speed: float = 0.0
    max_yaw_rate: float = 0.0  # rad/s
    response_time: float = 0.3  # s, first-order lag of aerial velocity control
    max_propeller: float = 0.0  # rad/s (nautic)
    propeller_pitch: float = 0.0  # m of advance per revolution of the propeller (nautic, advance_speed)
    max_rudder: float = 0.0  # rad (nautic)
    max_stern_plane: float = 0.0  # rad (nautic)
    rudder_area: float = 0.0  # m^2 (nautic)
    stern_plane_area: float = 0.0  # m^2 (nautic)
    fin_lever: float = 0.0  # m behind the centre where rudder and stern plane act (nautic)
    max_xz_angle: float = 0.0  # rad, thrust-vectoring limit (blimp)
    steered_wheels: list[str] = field(default_factory=list)  # omni: WheelNumber 0, 1, ... in this order
    steer_joints: list[str] = field(default_factory=list)  # omni: the knuckle of each steered wheel
    max_steer: float = 0.0  # rad (omni)

    @property
    def track_width(self) -> float:
        """Track width of the skid-steer model (effective if calibrated, else the wheel separation)."""
        return self.effective_track_width if self.effective_track_width > 0 else self.wheel_separation

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, float) and value < 0:
                raise ValueError(f"{f.name} must not be negative, got {value}")


@dataclass
class JointLinkSpec:
    """One link of a joint group (numbered from 1 in group order)."""

    joint: str
    type: Literal["revolute", "prismatic", "continuous"] = "revolute"
    min: float = 0.0
    max: float = 0.0  # min > max means unconstrained (as in the manual)
    max_speed: float = 0.17
    max_torque: float = 20.0
    initial: float = 0.0

    def clamp(self, value: float) -> float:
        """``value`` within the link's range (as given when unconstrained: continuous, or min > max)."""
        if self.type == "continuous" or self.min > self.max:
            return value
        return max(self.min, min(self.max, value))


@dataclass
class JointGroupSpec:
    """A named group of joints: flippers, a mission package (arm, pan-tilt), a gripper."""

    name: str
    kind: Literal["flippers", "mission_package", "gripper", "camera_mount", "legs"]
    links: list[JointLinkSpec]


@dataclass
class EffecterSpec:
    """An effecter answering SET opcodes (gripper, RFID releaser, roller table)."""

    type: str
    name: str
    params: dict[str, Any] = field(default_factory=dict)
    mount: Mount = field(default_factory=Mount)  # where it acts (GEO {Type Effecter} reports it)

    def __post_init__(self) -> None:
        # checked here, like a sensor's, so a bad entry fails when the catalogue loads (file:line)
        effecters.family(self).checked_params(self)


@dataclass
class RobotSpec:
    """A robot class of the catalogue."""

    class_name: str
    vehicle_type: Literal["GroundVehicle", "AerialVehicle", "LeggedRobot", "NauticVehicle"]
    description: str
    dimensions: Vec3
    mass: float
    drive: DriveSpec
    body: BodySpec
    payload: float = 0.0
    battery_life: float = 3600.0
    msg_period: float = 0.2
    light_intensity: int = 100
    joint_groups: list[JointGroupSpec] = field(default_factory=list)
    sensors: list[SensorSpec] = field(default_factory=list)
    effecters: list[EffecterSpec] = field(default_factory=list)
    ground_truth: bool = True
    # Names of the manual's USARBot.ini (and of the UDK class this one stands for) -> the model's
    # joint, or this robot's sensor or effecter: DRIVE {Name LeftFWheel} works as in the manual's §9.4.
    joint_names: dict[str, str] = field(default_factory=dict)
    device_names: dict[str, str] = field(default_factory=dict)
    notes: str = ""
    source: str = ""

    def model_joint(self, name: str) -> str:
        """The model's joint for a protocol joint name (a manual name, any case), else ``name`` itself."""
        return _known_as(self.joint_names, name)

    def model_device(self, name: str) -> str:
        """This robot's sensor or effecter for a protocol device name (a manual name, any case), else ``name``."""
        return _known_as(self.device_names, name)

    def knuckle(self, wheel_joint: str) -> str | None:
        """The joint that steers a wheel: its parent link's, revolute about the vertical (a flipper that
        carries wheels turns about y and steers nothing); None for a wheel that cannot steer."""
        wheel = next((w for w in self.body.wheels if w.joint == wheel_joint), None)
        parent = next((link for link in self.body.links if wheel is not None and link.name == wheel.parent), None)
        if parent is None or parent.joint_type != "revolute" or abs(parent.axis[2]) < 0.99:
            return None
        return parent.joint_name

    @property
    def urdf_path(self) -> Path:
        """The generated URDF shipped with the package."""
        return share_dir() / "urdf" / f"{self.class_name}.urdf"

    def __post_init__(self) -> None:
        names = [s.name for s in self.sensors]
        dupes = {n for n in names if names.count(n) > 1}
        if dupes:
            raise ValueError(f"duplicate sensor names: {', '.join(sorted(dupes))}")
        model_joints = {link.joint_name for link in self.body.links} | {w.joint for w in self.body.wheels}
        unknown = sorted(j for j in self.joint_names.values() if j not in model_joints)
        if unknown:
            raise ValueError(f"joint_names map to joints the model lacks: {', '.join(unknown)}")
        devices = set(names) | {e.name for e in self.effecters}
        unknown = sorted(d for d in self.device_names.values() if d not in devices)
        if unknown:
            raise ValueError(f"device_names map to devices the robot lacks: {', '.join(unknown)}")
        for value, what in ((self.mass, "mass"), (self.battery_life, "battery_life"), (self.msg_period, "msg_period"),
                            (min(self.dimensions), "each of dimensions")):
            if value <= 0:
                raise ValueError(f"{what} must be positive, got {value}")


def _known_as(names: dict[str, str], name: str) -> str:
    # protocol names are case-insensitive, as USARSim's Item.IsName compares them
    return next((ours for known, ours in names.items() if known.lower() == name.lower()), name)


@dataclass
class RobotVariant:
    """A catalogue entry that is another class plus devices (``variant_of``), e.g. the
    rescue P2AT: the manual's P2AT with the RFID reader, victim sensor and tag dropper
    that RoboCup Rescue teams added."""

    variant_of: str
    class_name: str
    description: str
    add_sensors: list[SensorSpec] = field(default_factory=list)
    add_effecters: list[EffecterSpec] = field(default_factory=list)
    notes: str = ""
    source: str = ""


def robots_dir() -> Path:
    """Directory of the catalogue YAML files."""
    return share_dir() / "config" / "robots"


def available_robots() -> list[str]:
    """Class names of every robot that ships, sorted."""
    return sorted(p.stem for p in robots_dir().glob("*.yaml"))


@functools.lru_cache(maxsize=None)
def _load_cached(path: str) -> RobotSpec:
    node = load_yaml_node(Path(path))
    keys = {k.value for k, _ in node.value} if isinstance(node, yaml.MappingNode) else set()
    if "variant_of" in keys:
        spec = _variant(convert_node(RobotVariant, node, path, "RobotVariant"), path)
    else:
        spec = convert_node(RobotSpec, node, path, "RobotSpec")
    if Path(path).stem != spec.class_name:
        raise ConfigError(f"{path}: class_name '{spec.class_name}' does not match the file name")
    return spec


def _variant(variant: RobotVariant, path: str) -> RobotSpec:
    if variant.variant_of == variant.class_name:
        raise ConfigError(f"{path}: a class cannot be a variant of itself")
    base = load_robot(variant.variant_of)
    try:
        return dataclasses.replace(
            base, class_name=variant.class_name, description=variant.description,
            sensors=base.sensors + variant.add_sensors, effecters=base.effecters + variant.add_effecters,
            notes=variant.notes or base.notes, source=variant.source or base.source)
    except ValueError as exc:  # e.g. a sensor name the base class already uses
        raise ConfigError(f"{path}: {exc}") from None


def load_robot_file(path: Path) -> RobotSpec:
    """Load and validate one catalogue file."""
    return _load_cached(str(Path(path).resolve()))


# Classes of the UDK release that clients ask for (NIST's tools and league team code spawn
# USARBot.P3AT by default) -> the catalogue robot that fits them (docs/robots.md).
UDK_CLASSES = {"P3AT": "P2AT", "ATRV": "ATRVJr"}


def bare_class_name(name: str) -> str:
    """``name`` without the optional ``USARBot.`` package prefix."""
    return name.split(".", 1)[1] if name.lower().startswith("usarbot.") else name


def resolve_class_name(name: str) -> str:
    """Canonical class name for ``name`` (case-insensitive, optional ``USARBot.`` prefix, UDK classes)."""
    bare = bare_class_name(name)
    bare = next((fits for udk, fits in UDK_CLASSES.items() if udk.lower() == bare.lower()), bare)
    for known in available_robots():
        if known.lower() == bare.lower():
            return known
    raise ConfigError(f"unknown robot class '{name}' (known: {', '.join(available_robots())})")


def load_robot(name: str) -> RobotSpec:
    """Load a catalogue entry by (case-insensitive) class name."""
    return load_robot_file(robots_dir() / f"{resolve_class_name(name)}.yaml")
