"""The ROS 2 bridge node (``usarsim_node``): owns a simulator and bridges its robots.

Per robot, under ``<robot>/`` (relative to the node's namespace): sensor topics (see
``usarsim.ros.convert``), ``cmd_vel`` (Twist or TwistStamped), one ``<group>/command`` per
catalogue joint group, ``joint_commands`` (the topic-based ros2_control hardware interface),
``joint_trajectory`` and the usarsim_interfaces services (``usarsim.ros.robot_services``).
Globally: /clock (sim time), /tf and /tf_static (per robot ``<robot>/tf`` in multi-robot mode)
and the simulation_interfaces services (``usarsim.ros.simulation_control``). The node publishes
TF itself (odom -> base_link from odometry, every link of the catalogue's URDF from joint
states, fixed mounts on /tf_static), so no robot_state_publisher is needed.

Readings are handed from the simulator's stepping thread to a publishing thread
(``usarsim.ros.publisher``), so ROS serialisation does not lengthen the tick; subscriptions
and services run in the executor and only queue commands, so physics stays in one thread.
"""
from __future__ import annotations

import logging
import functools
import math
import os
import sys
import threading
from dataclasses import dataclass, field
from typing import Any, Sequence

import rclpy
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.exceptions import ParameterException
from rclpy.exceptions import InvalidHandle
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from geometry_msgs.msg import Twist
from sensor_msgs.msg import CameraInfo, JointState
from rosgraph_msgs.msg import Clock
from std_msgs.msg import Float64, Float64MultiArray, String, UInt32

from usarsim.config_loading import ConfigError
from usarsim.ros import convert
from usarsim.ros.cmd_vel import CmdVelSubscription
from usarsim.ros.commands import group_command, joint_state_command, trajectory_command, twist_to_command
from usarsim.ros.effecters import group_command_topic
from usarsim.ros.kinematics import OPTICAL_SUFFIX, robot_description
from usarsim.ros.publisher import PublishQueue
from usarsim.ros.rates import DEFAULT_CLOCK_RATE, DEFAULT_RATES, apply_rates
from usarsim.ros.robot_entry import RobotEntry, parse_robot_entry  # noqa: F401 - re-exported
from usarsim.ros.robot_services import RobotServices
from usarsim.ros.simulation_control import SimulationControl
from usarsim.signals import ignore_further_sigints
from usarsim.sim.commands import Command, CommandError, SensorCommand
from usarsim.sim.noise import NO_NOISE_HELP
from usarsim.sim.readings import CameraImage, OdometryReading, Reading
from usarsim.sim.robot import Robot
from usarsim.sim.ros2_control import group_joints
from usarsim.sim.sensors import CommandResult
from usarsim.sim.sensors.camera import Camera
from usarsim.sim.simulator import PACINGS, Simulator
from usarsim.sim.world import DEFAULT_WORLD

try:
    from trajectory_msgs.msg import JointTrajectory
except ImportError:  # pragma: no cover - optional message package
    JointTrajectory = None  # type: ignore[assignment,misc]

# tf2_ros's QoS: /tf reliable depth 100; /tf_static reliable, transient local, depth 1 (one message holds all)
TF_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
TF_STATIC_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
LATCHED_QOS = TF_STATIC_QOS
# Every stream is reliable by default, as in Gazebo, Webots and Isaac Sim: a reliable publisher serves
# reliable subscribers (ros2 topic echo, rqt, rosbridge, Nav2) and best-effort ones alike.
# qos:=best_effort (or best_effort_robots) switches sensor streams to SensorDataQoS for lossy links.
STATE_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
STATE_TYPES = convert.reliable_types()  # always reliable, depth 10
SENSOR_QOS = {
    "reliable": QoSProfile(depth=5, reliability=ReliabilityPolicy.RELIABLE, history=HistoryPolicy.KEEP_LAST),
    "best_effort": QoSProfile(depth=5, reliability=ReliabilityPolicy.BEST_EFFORT, history=HistoryPolicy.KEEP_LAST),
}
# Nav2 publishes TwistStamped from Kilted on (enable_stamped_cmd_vel); earlier distributions publish Twist.
UNSTAMPED_DISTROS = ("humble", "iron", "jazzy")
CHECK_PERIOD = 0.02  # s of sim time between cmd_vel timeout checks
SUBSCRIBER_CHECK_PERIOD = 0.5  # s of sim time between checks for who subscribes (quiet sensors, cameras)

# parameter: (default, description)
PARAMETERS: dict[str, tuple[Any, str]] = {
    "world": (DEFAULT_WORLD, "World to load: a name from `usarsim worlds` or a path to a world YAML file"),
    "robots": (["P2AT"], "Robots to spawn, one string each: 'Class', 'name:Class' or 'name:Class:start' where start "
                         "is a start-pose name of the world or 'x,y[,z[,yaw]]' in metres/radians"),
    "seed": (0, "Seed of every sensor's noise source (same seed + same commands = same readings)"),
    "pacing": ("realtime", "realtime (RTF 1), fast (as fast as possible) or lockstep (advance only on ~/step)"),
    "physics_rate": (200.0, "Physics steps per second of sim time"),
    "clock_rate": (DEFAULT_CLOCK_RATE, "Rate of /clock in Hz of sim time (0: every physics step)"),
    "frame_prefix": ("auto", "Prefix of every robot frame: 'auto' = '<robot>/' when several robots, else none; "
                             "any other string is used as given, with '{robot}' replaced by the robot name"),
    "world_frame": ("map", "Frame of ground truth, the INS pose and map -> odom (shared by all robots)"),
    "publish_map_to_odom": (False, "Publish map -> odom from ground truth (for users without SLAM/AMCL)"),
    "cmd_vel_timeout": (0.5, "Stop a robot when no cmd_vel arrived for this many seconds of sim time (0: never)"),
    "cameras": ("auto", "Render cameras: auto (only while someone subscribes to the image), on, off"),
    "qos": ("reliable", "Reliability of every sensor topic: reliable (default) or best_effort (SensorDataQoS)"),
    "cmd_vel_stamped": ("auto", "cmd_vel type: true = geometry_msgs/TwistStamped, false = Twist, auto = what the "
                                "installed Nav2 publishes (TwistStamped from Kilted on, or without a ROS install)"),
    "multi_robot": (False, "Per-robot TF on <robot>/tf and <robot>/tf_static with plain frame names (Nav2's "
                           "multi-robot layout) instead of prefixed frames on /tf"),
    "imu_orientation": ("world", "IMU orientation reference: world (yaw 0 = world x = north) or enu (yaw 0 = east, "
                                 "REP-103 geographic, what robot_localization's navsat_transform expects)"),
    "enu_frame": ("enu", "Name of a static ENU alias of the world frame on /tf_static (x east, y north); '' for none"),
    "noise": (True, f"Sensor noise; false: {NO_NOISE_HELP}"),
    "protocol": (False, "Also serve the USARSim text protocol from this process"),
    "protocol_host": ("127.0.0.1", "Address of the text-protocol server"),
    "protocol_port": (3000, "TCP port of the text protocol"),
    "image_port": (5003, "TCP port of the image server (0: none)"),
}
DYNAMIC_TYPED = ("cmd_vel_stamped",)  # true/false or the string auto

# rates.<kind>: Hz overriding the catalogue's sensor interval for every sensor of those types (0: catalogue);
# the kinds come from the bridge's table (convert.ROS_FORMS)
RATE_TYPES: dict[str, tuple[str, ...]] = convert.rate_kinds()


@dataclass
class _Bridge:
    """Per-robot state of the node."""

    robot: Robot
    names: convert.RobotNames
    accepts: tuple[type[Command], ...]
    last_cmd: float = 0.0
    driving: bool = False
    subscriptions: list[Any] = field(default_factory=list)
    sensor_qos: QoSProfile = field(default_factory=lambda: SENSOR_QOS["reliable"])
    services: RobotServices | None = None
    cameras: list[Any] = field(default_factory=list)  # the robot's Camera sensors
    cmd_vel: CmdVelSubscription | None = None
    statics: list[Any] = field(default_factory=list)  # its fixed transforms on /tf_static


def cmd_vel_stamped(value: Any, distro: str | None = None) -> bool:
    """The ``cmd_vel_stamped`` parameter: true/false, or auto = what the installed Nav2 publishes."""
    text = str(value).strip().lower()
    if text in ("true", "1", "yes"):
        return True
    if text in ("false", "0", "no"):
        return False
    if text != "auto":
        raise ConfigError(f"cmd_vel_stamped must be true, false or auto, got {value!r}")
    distro = (os.environ.get("ROS_DISTRO", "") if distro is None else distro).lower()
    return distro not in UNSTAMPED_DISTROS  # no ROS install: the wheels are Kilted


class UsarsimNode(Node):
    """Bridge node: simulator readings -> topics and TF; cmd_vel and joint commands -> simulator."""

    def __init__(self, *, sim: Simulator | None = None, node_name: str = "usarsim", **kwargs: Any) -> None:
        """Own a new simulator built from the parameters, or attach to ``sim`` (then bridge its robots
        and spawn only those the ``robots`` parameter names explicitly through ``parameter_overrides``)."""
        super().__init__(node_name, **kwargs)
        # every parameter is read when the node starts: read-only, so a runtime set says so instead of being ignored
        for name, (default, text) in PARAMETERS.items():
            self.declare_parameter(name, default, ParameterDescriptor(description=text, read_only=True,
                                                                      dynamic_typing=name in DYNAMIC_TYPED))
        self.declare_parameter("best_effort_robots", Parameter.Type.STRING_ARRAY, ParameterDescriptor(
            description="Robots whose sensor topics are best-effort whatever qos says", read_only=True))
        for kind, types in RATE_TYPES.items():
            self.declare_parameter(f"rates.{kind}", DEFAULT_RATES.get(kind, 0.0), ParameterDescriptor(
                description=f"Hz of sim time for {', '.join(types)} sensors (0: the catalogue's interval)",
                read_only=True))
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
        self._qos = self._param("qos")
        if self._qos not in SENSOR_QOS:
            raise ConfigError(f"qos must be reliable or best_effort, got {self._qos!r}")
        self._best_effort_robots = set(self.get_parameter_or("best_effort_robots", Parameter(
            "best_effort_robots", Parameter.Type.STRING_ARRAY, [])).value or [])
        self._stamped = cmd_vel_stamped(self._param("cmd_vel_stamped"))
        self._multi = bool(self._param("multi_robot"))
        imu_reference = self._param("imu_orientation")
        if imu_reference not in ("world", "enu"):
            raise ConfigError(f"imu_orientation must be world or enu, got {imu_reference!r}")
        self._imu_yaw_offset = math.pi / 2.0 if imu_reference == "enu" else 0.0
        self.world_frame = self._param("world_frame")
        self._owns_sim = sim is None
        self.sim = sim or Simulator(self._param("world"), physics_rate=float(self._param("physics_rate")),
                                    seed=int(self._param("seed")), pacing=pacing, noise=bool(self._param("noise")))
        self._lock = threading.RLock()
        self._closed = False
        self._pubs: dict[str, Any] = {}
        self._bridges: dict[str, _Bridge] = {}
        self._static: dict[str, list[Any]] = {}  # tf_static topic -> every fixed transform on it
        self._last_clock = -math.inf
        self._next_info: dict[tuple[str, str], float] = {}  # camera_info of cameras not rendering: next due time
        self._next_info_due = 0.0  # earliest of those
        self._next_check = 0.0
        self._next_subscriber_check = 0.0
        self._sensor_topics: dict[tuple[str, str], list[str]] = {}  # (robot, sensor) -> topics it fills
        self._quiet: set[tuple[str, str]] = set()
        self._protocol: Any = None
        if not convert.HAVE_TF:
            self._log.warning("tf2_msgs is not installed: /tf and /tf_static are not published "
                              "(run scripts/build_ros_interfaces.sh to build it into this environment)")
        self._publisher(convert.CLOCK_TOPIC, Clock)
        self._queue = PublishQueue(self._log, alive=self.context.ok)
        self._enu_frame = self._param("enu_frame")
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
        self.control = SimulationControl(self)
        self._shutdown_requested = threading.Event()
        self.sim.add_listener(self._on_tick)
        self._wireless = self._start_wireless()
        self._log.info(f"world '{self.sim.spec.name}', robots: {', '.join(self._bridges) or 'none'}, "
                       f"pacing {pacing}, {1.0 / self.sim.dt:g} Hz physics")

    def _param(self, name: str) -> Any:
        return self.get_parameter(name).value

    # --- lifecycle -------------------------------------------------------------------------
    @property
    def shutdown_requested(self) -> bool:
        """True once a client asked the simulator to quit (SetSimulationState QUITTING)."""
        return self._shutdown_requested.is_set()

    def request_shutdown(self) -> None:
        """Ask ``main`` to stop spinning."""
        self._shutdown_requested.set()

    def advance_if_paused(self) -> None:
        """Apply queued commands now when nothing else steps the simulation (paused or lockstep)."""
        if not self.sim.playing:
            self.sim.step(1)

    def on_reset(self, time: bool) -> None:
        """The simulation was reset: restart the clock-driven schedules; forget removed robots."""
        with self._lock:
            if time:
                self._last_clock = -math.inf
                self._next_check = self._next_subscriber_check = self._next_info_due = 0.0
                self._next_info.clear()
            self._forget_removed()

    def bridge_robot(self, name: str) -> None:
        """Bridge a robot spawned by a service call (topics, TF, services)."""
        self._bridge(name)

    def start(self) -> None:
        """Start the paced simulation (unless lockstep) and the protocol server if enabled."""
        if self._param("protocol"):
            self._start_protocol()
        if self.sim.pacing != "lockstep":
            self.sim.start()

    def step(self, n: int = 1) -> None:
        """Advance ``n`` ticks (lockstep pacing); returns once their messages are published."""
        self.sim.step(n)
        self._queue.flush()

    def close(self) -> None:
        """Stop the simulation and the protocol server; the node can then be destroyed."""
        with self._lock:
            self._closed = True
        self.sim.remove_listener(self._on_tick)
        if self._wireless is not None:
            self._wireless.close()
        self.sim.stop()
        self._queue.close()
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
        if self._multi:
            return ""  # each robot has its own TF tree: plain names
        rule = self._prefix_rule
        if rule == "auto":
            return f"{name}/" if self._several or self._bridges else ""
        prefix = rule.replace("{robot}", name)
        if any(b.names.frame_prefix == prefix for b in self._bridges.values()):
            # a robot spawned beside one with the same fixed prefix ("" from arena.launch.py) would
            # publish the same frames: it gets its own, as a robot launched with several does
            self._log.info(f"{name}: frame prefix '{prefix}' is taken; using '{name}/'")
            return f"{name}/"
        return prefix

    def _names(self, name: str, spec: Any) -> convert.RobotNames:
        tf = ({"tf_topic": f"{name}/tf", "tf_static_topic": f"{name}/tf_static"} if self._multi else {})
        return convert.RobotNames.for_spec(name, spec, self._frame_prefix(name), world_frame=self.world_frame,
                                           relative=True, imu_yaw_offset=self._imu_yaw_offset, **tf)

    def _bridge(self, name: str) -> _Bridge:
        """Publishers' bookkeeping, TF, subscriptions, services and rates for a robot (once)."""
        with self._lock:
            if name in self._bridges:
                return self._bridges[name]
            robot = self.sim.robot(name)
            spec = robot.spec
            names = self._names(name, spec)
            reliability = "best_effort" if name in self._best_effort_robots else self._qos
            bridge = _Bridge(robot, names, tuple(robot.drive.accepts), sensor_qos=SENSOR_QOS[reliability],
                             cameras=[s for s in robot.sensors if isinstance(s, Camera)])
            self._bridges[name] = bridge
            self._next_info_due = 0.0  # its cameras' camera_info is due at once
            self._apply_rates(robot)
            if self._cameras == "on":
                self._set_cameras(robot, True)
            now = self.sim.time
            bridge.statics = convert.static_transforms(names, now)
            on_topic = self._static.setdefault(names.tf_static_topic, [])
            if self._enu_frame and not on_topic:  # one alias of the world frame per TF tree
                on_topic.append(convert.enu_alias(names, self._enu_frame, now))
            on_topic.extend(bridge.statics)
            self._send_static(names.tf_static_topic)
            self._send_tf(convert.initial_joint_transforms(names, now), names.tf_topic)
            description = self.create_publisher(String, names.topic("robot_description"), LATCHED_QOS)
            description.publish(String(data=robot_description(spec)))
            self._pubs[names.topic("robot_description")] = description
            # publishers up front: discovery starts before the first reading, and "auto" cameras see subscribers
            for topic, msg_type in convert.expected_topics(spec, names):
                self._publisher(topic, msg_type, bridge.sensor_qos)
            subscribe = bridge.subscriptions.append
            if bridge.accepts and spec.drive.type not in ("none", "legged"):
                bridge.cmd_vel = CmdVelSubscription(self, names.topic("cmd_vel"), self._stamped,
                                                    functools.partial(self._on_cmd_vel, bridge))
            for group in spec.joint_groups:
                subscribe(self.create_subscription(
                    Float64MultiArray, names.topic(group_command_topic(group.name)),
                    lambda msg, b=bridge, g=group: self._on_group_command(b, g, msg), 10))
            if group_joints(spec):  # topic_based_ros2_control's command topic
                subscribe(self.create_subscription(JointState, names.topic("joint_commands"),
                                                   lambda msg, b=bridge: self._on_joint_commands(b, msg), 10))
            for sensor in robot.sensors:
                if isinstance(sensor, Camera):  # zoom: horizontal FOV in radians (0 = the default)
                    subscribe(self.create_subscription(
                        Float64, names.sensor_topic("camera", sensor.name, "fov"),
                        lambda msg, b=bridge, c=sensor.name: self._on_camera_fov(b, c, msg), 10))
            if JointTrajectory is not None and spec.joint_groups:
                subscribe(self.create_subscription(
                    JointTrajectory, names.topic("joint_trajectory"), lambda msg, b=bridge: self._on_trajectory(b, msg),
                    10))
            bridge.services = RobotServices(self, robot, names.topic)
            self._log.info(f"bridging {name} ({spec.class_name}) under {names.topic('')} "
                           f"with frame prefix '{names.frame_prefix}', TF on {names.tf_topic}")
            return bridge

    def _forget_removed(self) -> None:
        """Stop serving robots the simulator no longer has."""
        for name in self._bridges.keys() - self.sim.robots.keys():
            bridge = self._bridges.pop(name)
            for sub in bridge.subscriptions:
                self.destroy_subscription(sub)
            if bridge.cmd_vel is not None:
                bridge.cmd_vel.destroy()
            if bridge.services is not None:
                bridge.services.destroy()
            self._unpublish(bridge)

    def _unpublish(self, bridge: _Bridge) -> None:
        """A removed robot leaves nothing on the graph: its publishers (the latched description
        too) go, and its fixed transforms leave /tf_static."""
        namespace = bridge.names.topic("")
        gone = [self._pubs.pop(t) for t in list(self._pubs) if namespace and t.startswith(namespace)]

        def destroy() -> None:  # on the publishing thread, after the messages queued for them went out
            for pub in gone:
                self.destroy_publisher(pub)

        self._queue.submit(destroy)
        name = bridge.robot.name
        for key in [k for k in self._sensor_topics if k[0] == name]:
            del self._sensor_topics[key]
        for key in [k for k in self._next_info if k[0] == name]:
            del self._next_info[key]
        topic = bridge.names.tf_static_topic
        if namespace and topic.startswith(namespace):  # its own TF tree (multi_robot) went with it
            self._static.pop(topic, None)
            return
        mine = {id(t) for t in bridge.statics}
        self._static[topic] = [t for t in self._static.get(topic, []) if id(t) not in mine]
        self._send_static(topic)

    def _apply_rates(self, robot: Robot) -> None:
        apply_rates(robot, {kind: float(self._param(f"rates.{kind}")) for kind in RATE_TYPES}, RATE_TYPES)

    @staticmethod
    def _set_cameras(robot: Robot, on: bool) -> None:
        for sensor in robot.sensors:
            if isinstance(sensor, Camera):
                sensor.active = on or sensor.params.always_on  # type: ignore[attr-defined]

    # --- publishing ------------------------------------------------------------------------
    def _publisher(self, topic: str, msg_type: type, sensor_qos: QoSProfile | None = None) -> Any:
        pub = self._pubs.get(topic)
        if pub is None:
            if msg_type is convert.TFMessage:
                qos = TF_STATIC_QOS if topic.endswith("tf_static") else TF_QOS
            elif msg_type in STATE_TYPES:
                qos = STATE_QOS
            else:
                qos = sensor_qos or SENSOR_QOS[self._qos]
            pub = self._pubs[topic] = self.create_publisher(msg_type, topic, qos)
        return pub

    def _publish(self, topic: str, msg: Any) -> None:
        self._publisher(topic, type(msg)).publish(msg)

    def _send_tf(self, transforms: list[Any], topic: str = convert.TF_TOPIC) -> None:
        for pair in convert.tf_messages(transforms, topic):
            self._queue.put(self._publisher(pair[0], convert.TFMessage), pair[1])

    def _send_static(self, topic: str) -> None:
        if convert.HAVE_TF:  # one latched message holds every fixed transform, as tf2_ros's static broadcaster
            self._publisher(topic, convert.TFMessage).publish(convert.TFMessage(transforms=list(self._static[topic])))

    def _on_tick(self, now: float, readings: Sequence[Reading]) -> None:
        """Simulator listener (stepping thread): convert this tick's readings and queue them for publishing."""
        with self._lock:
            if self._closed:
                return
            try:
                self._publish_tick(now, readings)
            except Exception:  # noqa: BLE001 - shutting down under us (Ctrl-C) is not an error
                if rclpy.ok(context=self.context):
                    raise

    def _publish_tick(self, now: float, readings: Sequence[Reading]) -> None:
        """Stepping thread: pick what is heard, snapshot what only the simulator knows now, hand it over."""
        clock = now - self._last_clock >= self._clock_period - 1e-9
        if clock:
            self._last_clock = now
        heard = [r for r in readings if (r.robot, r.sensor) not in self._quiet]
        for reading in heard:
            if reading.robot not in self._bridges:
                self._bridge(reading.robot)
        truths = ({r.robot: self.sim.ground_truth(r.robot) for r in heard if isinstance(r, OdometryReading)}
                  if self._map_to_odom else {})
        infos = self._idle_camera_info(now) if now >= self._next_info_due else []
        if clock or heard or infos:
            self._queue.submit(lambda: self._publish_readings(now, clock, heard, truths, infos))
        if now >= self._next_check:  # housekeeping at a coarse cadence: most ticks end here
            self._next_check = now + CHECK_PERIOD
            self._housekeeping(now)

    def _publish_readings(self, now: float, clock: bool, readings: list[Reading],
                          truths: dict[str, Any], infos: list[tuple[Any, Any]]) -> None:
        """Publishing thread: build and publish one tick's messages, in order."""
        if clock:
            self._pubs[convert.CLOCK_TOPIC].publish(convert.clock_message(now))
        for reading in readings:
            bridge = self._bridges.get(reading.robot)
            if bridge is None:  # removed since
                continue
            pairs = convert.reading_to_messages(reading, bridge.names)
            key = (reading.robot, reading.sensor)
            if key not in self._sensor_topics:
                self._sensor_topics[key] = [topic for topic, _ in pairs]
            if reading.robot in truths and isinstance(reading, OdometryReading):
                pairs += convert.tf_messages([convert.map_to_odom(truths[reading.robot], reading, bridge.names)],
                                             bridge.names.tf_topic)
            for topic, msg in pairs:
                self._publisher(topic, type(msg), bridge.sensor_qos).publish(msg)
            if isinstance(reading, CameraImage):
                self._camera_rendered(bridge, reading, now)
        for publisher, info in infos:
            publisher.publish(info)

    def _housekeeping(self, now: float) -> None:
        """cmd_vel timeouts; now and then: who listens (quiet sensors, cameras), robots added or removed."""
        for bridge in self._bridges.values() if self._timeout > 0 else ():
            if bridge.driving and now - bridge.last_cmd > self._timeout:
                bridge.driving = False
                self._submit(bridge, twist_to_command(bridge.robot.name, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0),
                                                      bridge.robot.spec.drive, bridge.accepts, bridge.robot.spec.body),
                             "cmd_vel timeout stop")
        if len(self.sim.robots) != len(self._bridges):  # spawned or removed by another front door
            for name in self.sim.robots.keys() - self._bridges.keys():
                self._bridge(name)
            self._forget_removed()
        if now < self._next_subscriber_check:
            return
        self._next_subscriber_check = now + SUBSCRIBER_CHECK_PERIOD
        self._refresh_quiet()
        for bridge in self._bridges.values():
            if bridge.cmd_vel is not None:
                bridge.cmd_vel.follow_graph()
        if self._cameras == "auto":
            for bridge in self._bridges.values():
                for sensor in bridge.cameras:
                    wanted = any(self._subscribed(bridge.names.sensor_topic("camera", sensor.name, leaf))
                                 for leaf in ("image_raw", "image_raw/compressed"))
                    sensor.active = wanted or sensor.params.always_on  # type: ignore[attr-defined]

    def _subscribed(self, topic: str) -> bool:
        pub = self._pubs.get(topic)
        return pub is not None and pub.get_subscription_count() > 0

    def _camera_rendered(self, bridge: _Bridge, image: CameraImage, now: float) -> None:
        """A frame was rendered: its camera_info came with it; JPEG it for compressed subscribers."""
        self._next_info[(image.robot, image.sensor)] = now + bridge.robot.sensor(image.sensor).interval
        compressed = self._pubs.get(bridge.names.sensor_topic("camera", image.sensor, "image_raw/compressed"))
        if compressed is not None and compressed.get_subscription_count() > 0:
            compressed.publish(convert.compressed_image(image, bridge.names))

    def _idle_camera_info(self, now: float) -> list[tuple[Any, Any]]:
        """camera_info at the image rate of every camera not rendering (nobody wants its pixels)."""
        out = []
        for bridge in self._bridges.values():
            for sensor in bridge.cameras:
                key = (bridge.robot.name, sensor.name)
                if sensor.active or now < self._next_info.get(key, 0.0):  # type: ignore[attr-defined]
                    continue
                self._next_info[key] = now + sensor.interval
                prm = sensor.params
                info = convert.lens_info(now, bridge.names.frame(sensor.frame + OPTICAL_SUFFIX),
                                         prm.width, prm.height, sensor.lens())  # type: ignore[attr-defined]
                out.append((self._publisher(bridge.names.sensor_topic("camera", sensor.name, "camera_info"),
                                            CameraInfo), info))
        self._next_info_due = min(self._next_info.values(), default=math.inf)
        return out

    def _refresh_quiet(self) -> None:
        """Readings whose every topic has no subscriber (TF always counts as wanted)."""
        quiet = set()
        for key, topics in self._sensor_topics.items():
            if topics and all(t in self._pubs and not t.endswith(("tf", "tf_static")) and
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
                                   bridge.robot.spec.drive, bridge.accepts, bridge.robot.spec.body)
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

    def _on_joint_commands(self, bridge: _Bridge, msg: JointState) -> None:
        """topic_based_ros2_control: position (or velocity) commands for named joints."""
        try:
            commands = joint_state_command(bridge.robot.name, bridge.robot.spec, list(msg.name),
                                           list(msg.position), list(msg.velocity))
        except (ValueError, CommandError) as exc:
            self._log.warning(f"{bridge.robot.name}: ignoring joint_commands: {exc}")
            return
        for cmd in commands:
            self._submit(bridge, cmd, "joint_commands")

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
    # service handlers wait for the tick that applies their command: more than one thread
    executor = MultiThreadedExecutor(num_threads=4)
    status = 0
    try:
        node = UsarsimNode()
        executor.add_node(node)
        node.start()
        while rclpy.ok() and not node.shutdown_requested:
            try:
                executor.spin_once(timeout_sec=0.2)
            except InvalidHandle:  # a removed robot's entity, destroyed while the executor waited on it
                continue
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except (ConfigError, CommandError, RuntimeError, ParameterException) as exc:
        # a bad world/robot file or a parameter of the wrong type (-p physics_rate:=100 is an
        # integer; the parameter wants 100.0): one line, no traceback
        print(f"usarsim_node: {exc}", file=sys.stderr)
        status = 2
    finally:
        ignore_further_sigints()
        if node is not None:
            node.close()
        executor.shutdown()
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return status


if __name__ == "__main__":
    sys.exit(main())
