"""The ROS 2 bridge node (``usarsim_node``): owns a simulator and bridges its robots.

Per robot, under ``/<robot>/``: sensor topics (see ``usarsim.ros.convert``),
``cmd_vel`` and one ``<group>/command`` per catalogue joint group, plus
``joint_trajectory`` where trajectory_msgs is installed. Globally: /clock
(sim time), /tf and /tf_static. The node publishes TF itself (odom ->
base_link from odometry, every link of the catalogue's URDF from joint
states, fixed mounts on /tf_static), so no robot_state_publisher is needed.

Readings are published from the simulator's stepping thread right after the
tick that produced them; subscriptions run in the executor and only queue
commands, so physics stays in one thread.
"""
from __future__ import annotations

import logging
import math
import sys
import threading
from dataclasses import dataclass, field
from typing import Any, Sequence

import rclpy
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.exceptions import ParameterException
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
from sensor_msgs.msg import BatteryState, JointState
from rosgraph_msgs.msg import Clock
from std_msgs.msg import Float64, Float64MultiArray, String, UInt32
from visualization_msgs.msg import Marker

from usarsim.config_loading import ConfigError
from usarsim.ros import convert
from usarsim.ros.commands import group_command, trajectory_command, twist_to_command
from usarsim.ros.kinematics import robot_description
from usarsim.sim.commands import Command, CommandError, SensorCommand
from usarsim.sim.readings import OdometryReading, Reading
from usarsim.sim.robot import Robot
from usarsim.sim.sensors import CommandResult
from usarsim.sim.simulator import PACINGS, Simulator
from usarsim.sim.world import DEFAULT_WORLD

try:
    from trajectory_msgs.msg import JointTrajectory
except ImportError:  # pragma: no cover - optional message package
    JointTrajectory = None  # type: ignore[assignment,misc]

try:  # a real ROS 2 install: use tf2_ros's broadcasters
    import tf2_ros
except ImportError:
    tf2_ros = None  # type: ignore[assignment]

# tf2_ros's QoS: /tf reliable depth 100; /tf_static reliable, transient local, depth 1 (one message holds all)
TF_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
TF_STATIC_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
LATCHED_QOS = TF_STATIC_QOS
# Odometry, joint states, battery, /clock and detection markers are reliable so Nav2,
# robot_state_publisher-style and RViz marker (reliable) subscribers connect; a reliable
# publisher also serves best-effort subscribers.
STATE_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
STATE_TYPES = (Odometry, JointState, BatteryState, Clock, Marker)
CAMERA_CHECK_PERIOD = 0.5  # s of sim time between checks for camera subscribers

# parameter: (default, description)
PARAMETERS: dict[str, tuple[Any, str]] = {
    "world": (DEFAULT_WORLD, "World to load: a name from `usarsim worlds` or a path to a world YAML file"),
    "robots": (["P2AT"], "Robots to spawn, one string each: 'Class', 'name:Class' or 'name:Class:start' where start "
                         "is a start-pose name of the world or 'x,y[,z[,yaw]]' in metres/radians"),
    "seed": (0, "Seed of every sensor's noise source (same seed + same commands = same readings)"),
    "pacing": ("realtime", "realtime (RTF 1), fast (as fast as possible) or lockstep (advance only on ~/step)"),
    "physics_rate": (200.0, "Physics steps per second of sim time"),
    "clock_rate": (50.0, "Rate of /clock in Hz of sim time (0: every physics step)"),
    "frame_prefix": ("auto", "Prefix of every robot frame: 'auto' = '<robot>/' when several robots, else none; "
                             "any other string is used as given, with '{robot}' replaced by the robot name"),
    "world_frame": ("map", "Frame of ground truth, the INS pose and map -> odom (shared by all robots)"),
    "publish_map_to_odom": (False, "Publish map -> odom from ground truth (for users without SLAM/AMCL)"),
    "cmd_vel_timeout": (0.5, "Stop a robot when no cmd_vel arrived for this many seconds of sim time (0: never)"),
    "cameras": ("auto", "Render cameras: auto (only while someone subscribes to the image), on, off"),
    "protocol": (False, "Also serve the USARSim text protocol from this process"),
    "protocol_host": ("127.0.0.1", "Address of the text-protocol server"),
    "protocol_port": (3000, "TCP port of the text protocol"),
    "image_port": (5003, "TCP port of the image server (0: none)"),
}
# rates.<kind>: Hz overriding the catalogue's sensor interval for every sensor of those types (0: catalogue)
RATE_TYPES: dict[str, tuple[str, ...]] = {
    "scan": ("RangeScanner", "IRScanner"),
    "camera": ("Camera",),
    "odom": ("Odometry",),
    "imu": ("INS",),
    "gps": ("GPS",),
    "range": ("Sonar", "IR"),
    "ground_truth": ("GroundTruth",),
    "points": ("RangeScanner3D", "RangeImager"),
}


@dataclass
class RobotEntry:
    """One element of the ``robots`` parameter."""

    name: str | None
    class_name: str
    start: str | None = None
    position: tuple[float, float, float] | None = None
    yaw: float | None = None


def parse_robot_entry(text: str) -> RobotEntry:
    """Parse 'Class', 'name:Class' or 'name:Class:start' (start: pose name or 'x,y[,z[,yaw]]')."""
    parts = [p.strip() for p in text.split(":")]
    if not parts[0] or len(parts) > 3:
        raise ConfigError(f"bad robots entry {text!r}: expected 'Class', 'name:Class' or 'name:Class:start'")
    if len(parts) == 1:
        return RobotEntry(None, parts[0])
    name, class_name = parts[0], parts[1]
    if not class_name:
        raise ConfigError(f"bad robots entry {text!r}: no robot class")
    start = parts[2] if len(parts) == 3 and parts[2] else None
    if start is None:
        return RobotEntry(name, class_name)
    try:
        numbers = [float(v) for v in start.split(",")]
    except ValueError:
        return RobotEntry(name, class_name, start=start)
    if not 2 <= len(numbers) <= 4 or not all(math.isfinite(v) for v in numbers):
        raise ConfigError(f"bad start {start!r}: expected a pose name or 'x,y[,z[,yaw]]'")
    xyz = (numbers[0], numbers[1], numbers[2] if len(numbers) > 2 else 0.0)
    return RobotEntry(name, class_name, position=xyz, yaw=numbers[3] if len(numbers) > 3 else None)


@dataclass
class _Bridge:
    """Per-robot state of the node."""

    robot: Robot
    names: convert.RobotNames
    accepts: tuple[type[Command], ...]
    last_cmd: float = 0.0
    driving: bool = False
    subscriptions: list[Any] = field(default_factory=list)
    last_odom: OdometryReading | None = None


class UsarsimNode(Node):
    """Bridge node: simulator readings -> topics and TF; cmd_vel and joint commands -> simulator."""

    def __init__(self, *, sim: Simulator | None = None, node_name: str = "usarsim", **kwargs: Any) -> None:
        """Own a new simulator built from the parameters, or attach to ``sim`` (then bridge its robots
        and spawn only those the ``robots`` parameter names explicitly through ``parameter_overrides``)."""
        super().__init__(node_name, **kwargs)
        for name, (default, text) in PARAMETERS.items():
            self.declare_parameter(name, default, ParameterDescriptor(description=text))
        for kind, types in RATE_TYPES.items():
            self.declare_parameter(f"rates.{kind}", 0.0, ParameterDescriptor(
                description=f"Hz of sim time for {', '.join(types)} sensors (0: the catalogue's interval)"))
        self._log = self.get_logger()
        pacing = self._param("pacing")
        if pacing not in PACINGS:
            raise ConfigError(f"pacing must be one of {', '.join(PACINGS)}, got {pacing!r}")
        explicit = any(p.name == "robots" for p in kwargs.get("parameter_overrides") or [])
        robots = self._param("robots") if sim is None or explicit else []
        entries = [parse_robot_entry(text) for text in robots]
        self._prefix_rule = self._param("frame_prefix")
        self._several = len(entries) > 1
        self._clock_period = 1.0 / self._param("clock_rate") if self._param("clock_rate") > 0 else 0.0
        self._timeout = float(self._param("cmd_vel_timeout"))
        self._map_to_odom = bool(self._param("publish_map_to_odom"))
        self._cameras = self._param("cameras")
        if self._cameras not in ("auto", "on", "off"):
            raise ConfigError(f"cameras must be auto, on or off, got {self._cameras!r}")
        self._owns_sim = sim is None
        self.sim = sim or Simulator(self._param("world"), physics_rate=float(self._param("physics_rate")),
                                    seed=int(self._param("seed")), pacing=pacing)
        self._lock = threading.RLock()
        self._closed = False
        self._pubs: dict[str, Any] = {}
        self._bridges: dict[str, _Bridge] = {}
        self._static: list[Any] = []
        self._last_clock = -math.inf
        self._next_camera_check = 0.0
        self._next_quiet_check = 0.0
        self._sensor_topics: dict[tuple[str, str], list[str]] = {}  # (robot, sensor) -> topics it fills
        self._quiet: set[tuple[str, str]] = set()
        self._protocol: Any = None
        self._tf = self._static_tf = None
        if tf2_ros is not None:
            self._tf = tf2_ros.TransformBroadcaster(self)
            self._static_tf = tf2_ros.StaticTransformBroadcaster(self)
        elif not convert.HAVE_TF:
            self._log.warning("tf2_msgs is not installed: /tf and /tf_static are not published "
                              "(run scripts/build_ros_interfaces.sh to build it into this environment)")
        self._publisher(convert.CLOCK_TOPIC, Clock)
        try:
            with self.sim._lock:  # spawn and bridge before the first tick publishes anything
                for entry in entries:
                    rpy = (0.0, 0.0, entry.yaw) if entry.yaw is not None else None
                    robot = self.sim.spawn(entry.class_name, entry.name, start=entry.start,
                                           position=entry.position, rpy=rpy)
                    self._bridge(robot.name)
                for name in list(self.sim.robots):
                    self._bridge(name)
        except Exception:
            if self._owns_sim:
                self.sim.close()
            raise
        if pacing == "lockstep":
            self.create_subscription(UInt32, "~/step", self._on_step, 10)
        self.sim.add_listener(self._on_tick)
        self._wireless = self._start_wireless()
        self._log.info(f"world '{self.sim.spec.name}', robots: {', '.join(self._bridges) or 'none'}, "
                       f"pacing {pacing}, {1.0 / self.sim.dt:g} Hz physics")

    def _param(self, name: str) -> Any:
        return self.get_parameter(name).value

    # --- lifecycle -------------------------------------------------------------------------
    def start(self) -> None:
        """Start the paced simulation (unless lockstep) and the protocol server if enabled."""
        if self._param("protocol"):
            self._start_protocol()
        if self.sim.pacing != "lockstep":
            self.sim.start()

    def step(self, n: int = 1) -> None:
        """Advance ``n`` ticks (lockstep pacing), publishing as they happen."""
        self.sim.step(n)

    def close(self) -> None:
        """Stop the simulation and the protocol server; the node can then be destroyed."""
        with self._lock:
            self._closed = True
        self.sim.remove_listener(self._on_tick)
        if self._wireless is not None:
            self._wireless.close()
        self.sim.stop()
        if self._protocol is not None:
            self._protocol.stop()
            self._protocol = None
        if self._owns_sim:
            self.sim.close()

    def _start_wireless(self) -> Any:
        from usarsim.ros import wireless  # links, relay and markers: docs/wireless.md

        if not wireless.HAVE_INTERFACES:
            self._log.warning("usarsim_interfaces is not built: no wireless topics (scripts/build_ros_interfaces.sh)")
            return None
        return wireless.WirelessBridge(self, self.sim, self._param("world_frame"))

    def _start_protocol(self) -> None:
        try:
            from usarsim.protocol.server import ProtocolServer
        except ImportError as exc:
            raise RuntimeError(f"protocol:=true needs usarsim.protocol.server, which cannot be imported: {exc}") from exc
        image_port = int(self._param("image_port"))
        # the node owns stepping (paced loop, or ~/step in lockstep); the server only serves
        self._protocol = ProtocolServer(self.sim, self._param("protocol_host"), int(self._param("protocol_port")),
                                        image_port if image_port > 0 else None, run_simulator=False)
        self._protocol.start()
        self._log.info(f"text protocol on {self._param('protocol_host')}:{self._protocol.port}")

    # --- robots ----------------------------------------------------------------------------
    def _frame_prefix(self, name: str) -> str:
        rule = self._prefix_rule
        if rule == "auto":
            return f"{name}/" if self._several or self._bridges else ""
        return rule.replace("{robot}", name)

    def _bridge(self, name: str) -> _Bridge:
        """Publishers' bookkeeping, TF, subscriptions and rates for a robot (once)."""
        with self._lock:
            if name in self._bridges:
                return self._bridges[name]
            robot = self.sim.robot(name)
            spec = robot.spec
            names = convert.RobotNames.for_spec(name, spec, self._frame_prefix(name),
                                                world_frame=self._param("world_frame"))
            bridge = _Bridge(robot, names, tuple(robot.drive.accepts))
            self._bridges[name] = bridge
            self._apply_rates(robot)
            if self._cameras == "on":
                self._set_cameras(robot, True)
            now = self.sim.time
            self._static.extend(convert.static_transforms(names, now))
            self._send_static()
            self._send_tf(convert.initial_joint_transforms(names, now))
            description = self.create_publisher(String, names.topic("robot_description"), LATCHED_QOS)
            description.publish(String(data=robot_description(spec)))
            self._pubs[names.topic("robot_description")] = description
            # publishers up front: discovery starts before the first reading, and "auto" cameras see subscribers
            for topic, msg_type in convert.expected_topics(spec, names):
                self._publisher(topic, msg_type)
            if bridge.accepts and spec.drive.type not in ("none", "legged"):
                bridge.subscriptions.append(self.create_subscription(
                    Twist, names.topic("cmd_vel"), lambda msg, b=bridge: self._on_cmd_vel(b, msg), 10))
            for group in spec.joint_groups:
                bridge.subscriptions.append(self.create_subscription(
                    Float64MultiArray, names.topic(f"{group.name}/command"),
                    lambda msg, b=bridge, g=group: self._on_group_command(b, g, msg), 10))
            for sensor in robot.sensors:
                if sensor.type_name == "Camera":  # zoom: horizontal FOV in radians (0 = the default)
                    bridge.subscriptions.append(self.create_subscription(
                        Float64, names.sensor_topic("camera", sensor.name, "fov"),
                        lambda msg, b=bridge, c=sensor.name: self._on_camera_fov(b, c, msg), 10))
            if JointTrajectory is not None and spec.joint_groups:
                bridge.subscriptions.append(self.create_subscription(
                    JointTrajectory, names.topic("joint_trajectory"), lambda msg, b=bridge: self._on_trajectory(b, msg),
                    10))
            self._log.info(f"bridging {name} ({spec.class_name}) under {names.topic('')} "
                           f"with frame prefix '{names.frame_prefix}'")
            return bridge

    def _apply_rates(self, robot: Robot) -> None:
        for kind, types in RATE_TYPES.items():
            rate = float(self._param(f"rates.{kind}"))
            if rate > 0:
                for sensor in robot.sensors:
                    if sensor.type_name in types:
                        sensor.interval = 1.0 / rate  # the sensor's own cadence attribute

    @staticmethod
    def _set_cameras(robot: Robot, on: bool) -> None:
        for sensor in robot.sensors:
            if sensor.type_name == "Camera":
                sensor.active = on or sensor.params.always_on  # type: ignore[attr-defined]

    # --- publishing ------------------------------------------------------------------------
    def _publisher(self, topic: str, msg_type: type) -> Any:
        pub = self._pubs.get(topic)
        if pub is None:
            qos = STATE_QOS if msg_type in STATE_TYPES else qos_profile_sensor_data
            pub = self._pubs[topic] = self.create_publisher(msg_type, topic, qos)
        return pub

    def _publish(self, topic: str, msg: Any) -> None:
        if topic == convert.TF_TOPIC:
            self._send_tf(msg.transforms)
        else:
            self._publisher(topic, type(msg)).publish(msg)

    def _send_tf(self, transforms: list[Any]) -> None:
        if not transforms:
            return
        if self._tf is not None:
            self._tf.sendTransform(transforms)
        elif convert.HAVE_TF:
            self._publisher_tf(convert.TF_TOPIC, TF_QOS).publish(convert.TFMessage(transforms=transforms))

    def _send_static(self) -> None:
        if self._static_tf is not None:
            self._static_tf.sendTransform(list(self._static))
        elif convert.HAVE_TF:
            self._publisher_tf(convert.TF_STATIC_TOPIC, TF_STATIC_QOS).publish(
                convert.TFMessage(transforms=list(self._static)))

    def _publisher_tf(self, topic: str, qos: QoSProfile) -> Any:
        pub = self._pubs.get(topic)
        if pub is None:
            pub = self._pubs[topic] = self.create_publisher(convert.TFMessage, topic, qos)
        return pub

    def _on_tick(self, now: float, readings: Sequence[Reading]) -> None:
        """Simulator listener (stepping thread): publish this tick's readings."""
        with self._lock:
            if self._closed:
                return
            try:
                self._publish_tick(now, readings)
            except Exception:  # noqa: BLE001 - shutting down under us (Ctrl-C) is not an error
                if rclpy.ok(context=self.context):
                    raise

    def _publish_tick(self, now: float, readings: Sequence[Reading]) -> None:
        if now - self._last_clock >= self._clock_period - 1e-9:
            self._last_clock = now
            self._publisher(convert.CLOCK_TOPIC, Clock).publish(convert.clock_message(now))
        if now >= self._next_quiet_check:
            self._next_quiet_check = now + CAMERA_CHECK_PERIOD
            self._refresh_quiet()
        for reading in readings:
            key = (reading.robot, reading.sensor)
            if key in self._quiet:
                continue  # nobody listens: skip building the messages
            bridge = self._bridges.get(reading.robot) or self._bridge(reading.robot)
            pairs = convert.reading_to_messages(reading, bridge.names)
            if key not in self._sensor_topics:
                self._sensor_topics[key] = [topic for topic, _ in pairs]
            for topic, msg in pairs:
                self._publish(topic, msg)
            if self._map_to_odom and isinstance(reading, OdometryReading):
                truth = self.sim.ground_truth(reading.robot)  # same tick: exact
                self._send_tf([convert.map_to_odom(truth, reading, bridge.names)])
        for bridge in self._bridges.values() if self._timeout > 0 else ():
            if bridge.driving and now - bridge.last_cmd > self._timeout:
                bridge.driving = False
                self._submit(bridge, twist_to_command(bridge.robot.name, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0),
                                                      bridge.robot.spec.drive, bridge.accepts), "cmd_vel timeout stop")
        if self._cameras == "auto" and now >= self._next_camera_check:
            self._next_camera_check = now + CAMERA_CHECK_PERIOD
            for bridge in self._bridges.values():
                for sensor in bridge.robot.sensors:
                    if sensor.type_name == "Camera":
                        pub = self._pubs.get(bridge.names.sensor_topic("camera", sensor.name, "image_raw"))
                        wanted = pub is not None and pub.get_subscription_count() > 0
                        sensor.active = wanted or sensor.params.always_on  # type: ignore[attr-defined]
        if len(self.sim.robots) != len(self._bridges):  # spawned by another front door (protocol INIT)
            for name in self.sim.robots.keys() - self._bridges.keys():
                self._bridge(name)
            for name in self._bridges.keys() - self.sim.robots.keys():  # removed: stop listening for it
                for sub in self._bridges.pop(name).subscriptions:
                    self.destroy_subscription(sub)

    def _refresh_quiet(self) -> None:
        """Readings whose every topic has no subscriber (TF and /clock always count as wanted)."""
        quiet = set()
        for key, topics in self._sensor_topics.items():
            if topics and all(t in self._pubs and not t.startswith("/tf") and
                              self._pubs[t].get_subscription_count() == 0 for t in topics):
                quiet.add(key)
        self._quiet = quiet

    # --- commands --------------------------------------------------------------------------
    def _submit(self, bridge: _Bridge, cmd: Command, what: str) -> None:
        future = self.sim.submit(cmd)

        def done(f: Any) -> None:
            exc = f.exception()
            if exc is not None:
                self._log.warning(f"{bridge.robot.name}: {what} refused: {exc}")
            elif isinstance(f.result(), CommandResult) and not f.result().ok:  # a device opcode the core declined
                self._log.warning(f"{bridge.robot.name}: {what} refused: {f.result().message}")

        future.add_done_callback(done)

    def _on_cmd_vel(self, bridge: _Bridge, msg: Twist) -> None:
        lin, ang = msg.linear, msg.angular
        try:
            cmd = twist_to_command(bridge.robot.name, (lin.x, lin.y, lin.z), (ang.x, ang.y, ang.z),
                                   bridge.robot.spec.drive, bridge.accepts)
        except (ValueError, CommandError) as exc:
            self._log.warning(f"{bridge.robot.name}: ignoring cmd_vel: {exc}")
            return
        bridge.last_cmd = self.sim.time
        bridge.driving = True
        self._submit(bridge, cmd, "cmd_vel")

    def _on_group_command(self, bridge: _Bridge, group: Any, msg: Float64MultiArray) -> None:
        try:
            cmd = group_command(bridge.robot.name, group, list(msg.data))
        except (ValueError, CommandError) as exc:
            self._log.warning(f"{bridge.robot.name}: ignoring {group.name}/command: {exc}")
            return
        self._submit(bridge, cmd, f"{group.name}/command")

    def _on_camera_fov(self, bridge: _Bridge, camera: str, msg: Float64) -> None:
        try:
            cmd = SensorCommand(bridge.robot.name, device=camera, opcode="FOV", params=(msg.data,))
        except CommandError as exc:  # NaN/inf; the camera itself judges the angle
            self._log.warning(f"{bridge.robot.name}: ignoring {camera} fov: {exc}")
            return
        self._submit(bridge, cmd, f"{camera} fov")

    def _on_trajectory(self, bridge: _Bridge, msg: Any) -> None:
        if not msg.points:
            self._log.warning(f"{bridge.robot.name}: ignoring joint_trajectory without points")
            return
        point = msg.points[-1]
        try:
            cmd = trajectory_command(bridge.robot.name, bridge.robot.spec.joint_groups, list(msg.joint_names),
                                     list(point.positions), list(point.velocities))
        except (ValueError, CommandError) as exc:
            self._log.warning(f"{bridge.robot.name}: ignoring joint_trajectory: {exc}")
            return
        self._submit(bridge, cmd, "joint_trajectory")

    def _on_step(self, msg: UInt32) -> None:
        self.sim.step(max(1, int(msg.data)))


def main(args: Sequence[str] | None = None) -> int:
    """Entry point of ``usarsim_node`` (ros2 run usarsim usarsim_node --ros-args -p world:=yellow ...)."""
    logging.basicConfig(level=logging.WARNING, format="[%(levelname)s] [%(name)s]: %(message)s")
    rclpy.init(args=list(args) if args is not None else sys.argv)
    node: UsarsimNode | None = None
    executor = SingleThreadedExecutor()
    status = 0
    try:
        node = UsarsimNode()
        executor.add_node(node)
        node.start()
        executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except (ConfigError, CommandError, RuntimeError, ParameterException) as exc:
        # a bad world/robot file or a parameter of the wrong type (-p physics_rate:=100 is an
        # integer; the parameter wants 100.0): one line, no traceback
        print(f"usarsim_node: {exc}", file=sys.stderr)
        status = 2
    finally:
        if node is not None:
            node.close()
        executor.shutdown()
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return status


if __name__ == "__main__":
    sys.exit(main())
