"""``usarsim record``: a lockstep run written as a rosbag2 (MCAP), with no ROS graph involved.

The messages are the bridge's own (``usarsim.ros.convert``), serialized with
rclpy's CDR serializer, re-encoded by ``rosbags`` (which zeroes CDR padding, so
the same seed gives byte-identical bags) and written through
:class:`usarsim.bagfile.DurableBag`, so a recorded bag carries the same topics,
types, frames and stamps as a live ``usarsim_node`` run recorded with
``ros2 bag record``, and survives the recorder being stopped (SIGINT, SIGTERM:
finished properly) or killed (at most the last chunk lost; ``usarsim
bag-repair``). Bag time is sim time.
"""
from __future__ import annotations

import argparse
import contextlib
import logging
import shutil
import sys
import threading
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Sequence

from usarsim.bagfile import DEFAULT_CHUNK_SECONDS, DurableBag
from usarsim.ros.rates import DEFAULT_CLOCK_RATE, DEFAULT_RATES, apply_rates
from usarsim.signals import StopOnSignal
from usarsim.sim.world import DEFAULT_WORLD

if TYPE_CHECKING:
    from rosbags.interfaces import Connection, Qos
    from rosbags.rosbag2 import Writer

    from usarsim.sim.readings import Reading
    from usarsim.sim.robot import Robot
    from usarsim.sim.simulator import Simulator

log = logging.getLogger(__name__)



@dataclass
class RecordOptions:
    """What ``usarsim record`` runs."""

    world: str = DEFAULT_WORLD
    robot: str = "P2AT"
    name: str | None = None  # robot name, i.e. the topic namespace (default: the simulator's, e.g. P2AT_1)
    start: str | None = None
    seed: int = 0
    duration: float = 10.0
    drive: tuple[float, float] = (0.0, 0.0)
    physics_rate: float = 200.0
    clock_rate: float = DEFAULT_CLOCK_RATE
    cameras: bool = False
    map_tf: bool = False  # map -> odom from ground truth, as the bridge's parameter of the same purpose
    stations: tuple[str, ...] = ()  # ComStations 'name:x,y[,z]': wireless links and their markers get recorded
    trace: tuple[float, str] | None = None  # path trace (interval s, colour): /<robot>/trace markers


def message_type(msg: Any) -> str:
    """ROS 2 type name of an rclpy message instance, e.g. ``sensor_msgs/msg/LaserScan``."""
    cls = type(msg)
    package = cls.__module__.split(".", 1)[0]
    return f"{package}/msg/{cls.__name__}"


def _qos(topic: str, msgtype: str) -> list["Qos"]:
    """The QoS the bridge node offers on the topic, so ``ros2 bag play`` republishes it alike."""
    from rosbags.interfaces import Qos, QosDurability, QosHistory, QosLiveliness, QosReliability, QosTime

    never = QosTime(sec=0, nsec=0)
    if topic.endswith(("/tf_static", "/robot_description")):  # latched
        reliability, durability, depth = QosReliability.RELIABLE, QosDurability.TRANSIENT_LOCAL, 1
    elif topic == "/tf":
        reliability, durability, depth = QosReliability.RELIABLE, QosDurability.VOLATILE, 100
    elif msgtype in _STATE_TYPES:
        reliability, durability, depth = QosReliability.RELIABLE, QosDurability.VOLATILE, 10
    else:  # sensor streams: reliable, as the bridge publishes them by default (qos parameter)
        reliability, durability, depth = QosReliability.RELIABLE, QosDurability.VOLATILE, 5
    return [Qos(history=QosHistory.KEEP_LAST, depth=depth, reliability=reliability, durability=durability,
                deadline=never, lifespan=never, liveliness=QosLiveliness.AUTOMATIC,
                liveliness_lease_duration=never, avoid_ros_namespace_conventions=False)]


# Published with depth 10 by the bridge (usarsim.ros.node.STATE_TYPES); every other stream is sensor data.
_STATE_TYPES = frozenset({"nav_msgs/msg/Odometry", "sensor_msgs/msg/JointState", "sensor_msgs/msg/BatteryState",
                          "rosgraph_msgs/msg/Clock"})


class BagSink:
    """Writes (topic, rclpy message) pairs into an open rosbags Writer; one connection per topic."""

    def __init__(self, writer: "Writer", on_write: Callable[[int], None] = lambda stamp_ns: None) -> None:
        from rclpy.serialization import serialize_message
        from rosbags.typesys import Stores, get_typestore

        self._writer = writer
        self._serialize = serialize_message
        self._on_write = on_write
        self.started = False  # set once the simulation runs: from then on a failure keeps the bag
        # Kilted's definitions equal the message wheels' (Kilted builds), hence equal type hashes.
        self._typestore = get_typestore(Stores.ROS2_KILTED)
        self._connections: dict[str, "Connection"] = {}
        self._skipped: set[str] = set()
        self.counts: Counter[str] = Counter()

    def write(self, t: float, pairs: Iterable[tuple[str, Any]]) -> None:
        """Write each message with log time ``t`` (sim seconds)."""
        stamp_ns = int(round(t * 1e9))
        for topic, msg in pairs:
            conn = self._connections.get(topic) or self._connect(topic, msg)
            if conn is None:
                continue
            self._writer.write(conn, stamp_ns, self._canonical(self._serialize(msg), conn.msgtype))
            self.counts[topic] += 1
        self._on_write(stamp_ns)

    def _canonical(self, raw: bytes, msgtype: str) -> bytes:
        # rclpy leaves alignment padding uninitialised (the bytes differ from run to run);
        # rosbags writes the same message with zeroed padding.
        store = self._typestore
        return bytes(store.serialize_cdr(store.deserialize_cdr(raw, msgtype), msgtype))

    def _connect(self, topic: str, msg: Any) -> "Connection | None":
        msgtype = message_type(msg)
        if msgtype not in self._typestore.types and msgtype.startswith(f"{PROJECT_INTERFACES}/"):
            _register_project_types(self._typestore)
        if msgtype not in self._typestore.types:
            if topic not in self._skipped:  # only possible with a message set newer than the typestore
                log.warning("not recording %s: %s is unknown to the rosbags typestore", topic, msgtype)
                self._skipped.add(topic)
            return None
        conn = self._writer.add_connection(topic, msgtype, typestore=self._typestore,
                                           offered_qos_profiles=_qos(topic, msgtype))
        self._connections[topic] = conn
        return conn


PROJECT_INTERFACES = "usarsim_interfaces"


def _register_project_types(typestore: Any) -> None:
    """Teach the typestore the project's own messages, from the .msg files their build installed."""
    from rosbags.typesys import get_types_from_msg

    folder = Path(sys.prefix) / "share" / PROJECT_INTERFACES / "msg"
    if not folder.is_dir():
        try:
            from ament_index_python.packages import get_package_share_directory

            folder = Path(get_package_share_directory(PROJECT_INTERFACES)) / "msg"
        except Exception:  # noqa: BLE001 - not installed: the messages stay unknown (and are skipped)
            return
    types: dict[str, Any] = {}
    for path in sorted(folder.glob("*.msg")):
        types.update(get_types_from_msg(path.read_text(), f"{PROJECT_INTERFACES}/msg/{path.stem}"))
    typestore.register(types)


@contextlib.contextmanager
def open_bag(output: str | Path, *, overwrite: bool = False,
             chunk_seconds: float = DEFAULT_CHUNK_SECONDS) -> Iterator[BagSink]:
    """A BagSink writing the MCAP rosbag2 ``output`` (a :class:`usarsim.bagfile.DurableBag`).

    ``output`` ending in ``.mcap`` becomes one self-contained MCAP file (rosbag2 metadata
    inside; ``ros2 bag play FILE.mcap``, Foxglove and rosbags read it); any other path
    becomes a rosbag2 directory (``metadata.yaml`` + ``<name>.mcap``), as ``ros2 bag record -o``.
    Every ``chunk_seconds`` of bag time is sealed on disk, so a killed recorder loses at most
    that much. If the body raises, the bag is finished with what was recorded, or removed when
    the simulation had not started yet (``sink.started``), leaving nothing to block a retry.
    """
    out = Path(output)
    if out.exists():
        if not overwrite:
            raise FileExistsError(f"{out} exists (use --overwrite to replace it)")
        if out.is_dir() and not (out / "metadata.yaml").is_file():  # never delete a directory that is no bag
            raise FileExistsError(f"{out} is a directory but not a rosbag2; not replacing it")
        shutil.rmtree(out) if out.is_dir() else out.unlink()
    bag = DurableBag(out, chunk_seconds)
    sink = BagSink(bag.open(), on_write=bag.wrote)
    try:
        yield sink
    except BaseException:
        bag.close()
        if not sink.started:
            shutil.rmtree(out) if out.is_dir() else out.unlink(missing_ok=True)
        raise
    bag.close()


def record(options: RecordOptions, output: str | Path, *, overwrite: bool = False, progress: bool = False,
           stop: threading.Event | None = None, chunk_seconds: float = DEFAULT_CHUNK_SECONDS) -> Counter[str]:
    """Run the scenario in lockstep and write it to ``output`` (see ``open_bag``); returns messages per topic.

    Setting ``stop`` ends the recording early with a complete bag.
    """
    with open_bag(output, overwrite=overwrite, chunk_seconds=chunk_seconds) as sink:
        _run(options, sink, progress, stop or threading.Event())
    return sink.counts


class BagRecorder:
    """Records one robot of a running simulator into a BagSink, as the bridge would publish it.

    ``start`` writes the latched and initial messages and listens to the simulator; ``clock``
    writes /clock at the current sim time and re-raises anything that failed while recording.
    """

    def __init__(self, sink: BagSink, sim: "Simulator", robot: "Robot", *, map_tf: bool = False) -> None:
        from usarsim.ros import convert

        self._sink = sink
        self._sim = sim
        self._map_tf = map_tf
        self.names = convert.RobotNames.for_spec(robot.name, robot.spec)
        self._robot = robot
        self.failures: list[BaseException] = []  # what went wrong while recording (other writers may add)

    def start(self) -> None:
        from std_msgs.msg import String

        from usarsim.ros import convert
        from usarsim.ros.kinematics import robot_description

        if not convert.HAVE_TF:
            log.warning("tf2_msgs is not installed: the bag has no /tf or /tf_static "
                        "(scripts/build_ros_interfaces.sh builds it)")
        now, names, sink = self._sim.time, self.names, self._sink
        sink.write(now, [(convert.CLOCK_TOPIC, convert.clock_message(now))])
        sink.write(now, convert.tf_messages(convert.static_transforms(names, now), convert.TF_STATIC_TOPIC))
        sink.write(now, convert.tf_messages(convert.initial_joint_transforms(names, now)))
        sink.write(now, [(names.topic("robot_description"), String(data=robot_description(self._robot.spec)))])
        self._sim.add_listener(self._on_tick)

    def _on_tick(self, now: float, readings: Sequence["Reading"]) -> None:
        # A listener sees each tick's readings while the simulator is still at that tick.
        from usarsim.ros import convert
        from usarsim.sim.readings import OdometryReading

        if self.failures:
            return
        try:
            for reading in readings:
                if reading.robot != self._robot.name:
                    continue
                self._sink.write(reading.time, convert.reading_to_messages(reading, self.names))
                if self._map_tf and isinstance(reading, OdometryReading):
                    truth = self._sim.ground_truth(reading.robot)  # same tick: exact, as the bridge does
                    self._sink.write(reading.time,
                                     convert.tf_messages([convert.map_to_odom(truth, reading, self.names)]))
        except BaseException as exc:  # the simulator only logs listener errors; a bag must not go on silently
            self.failures.append(exc)

    def clock(self) -> None:
        from usarsim.ros import convert

        if self.failures:
            raise self.failures[0]
        self._sink.write(self._sim.time, [(convert.CLOCK_TOPIC, convert.clock_message(self._sim.time))])


def _run(options: RecordOptions, sink: BagSink, progress: bool, stop: threading.Event) -> None:
    from usarsim.sim.commands import CommandError, SetTrace, WheelDrive
    from usarsim.sim.simulator import Simulator

    sim = Simulator(options.world, physics_rate=options.physics_rate, seed=options.seed, pacing="lockstep")
    try:
        robot = sim.spawn(options.robot, options.name, start=options.start)
        from usarsim.ros.convert import rate_kinds

        apply_rates(robot, DEFAULT_RATES, rate_kinds())  # the streams a live node publishes
        if options.cameras:
            for sensor in robot.sensors:
                if hasattr(sensor, "active"):
                    sensor.active = True
        recorder = BagRecorder(sink, sim, robot, map_tf=options.map_tf)
        recorder.start()
        if options.drive != (0.0, 0.0):
            if WheelDrive not in robot.drive.accepts:  # e.g. Ackermann or aerial: fail rather than record a still robot
                raise CommandError(f"--drive needs a wheel-driven robot; {robot.spec.class_name} is driven by "
                                   f"{', '.join(c.__name__ for c in robot.drive.accepts) or 'nothing'}")
            sim.submit(WheelDrive(robot.name, *options.drive))
        if options.trace is not None:
            sim.submit(SetTrace(robot.name, True, *options.trace))
        _record_wireless(sim, options.stations, recorder.names.world_frame, sink, recorder.failures)
        total = max(1, round(options.duration / sim.dt))
        chunk = max(1, round(1.0 / (options.clock_rate * sim.dt)))  # ticks per /clock message
        bar = _progress_bar(total, progress)
        done = 0
        sink.started = True
        while done < total and not stop.is_set():
            n = min(chunk, total - done)
            sim.step(n)
            recorder.clock()
            done += n
            if bar is not None:
                bar.update(n)
        if bar is not None:
            bar.close()
    finally:
        sim.close()


def _record_wireless(sim: Any, stations: Sequence[str], frame: str, sink: BagSink,
                     failure: list[BaseException]) -> None:
    """Place ``stations`` and write every link update: /<robot>/wireless/links and /wireless/markers
    (nothing without stations: one robot alone has no links)."""
    if not stations:
        return
    from usarsim.ros import wireless

    for text in stations:
        sim.add_station(*wireless.parse_station(text))
    strongest = sim.wireless.comm.p_d0

    def on_links(table: Any) -> None:
        if failure:
            return
        try:
            if wireless.HAVE_INTERFACES:
                sink.write(table.time, wireless.link_messages(table, frame))
            sink.write(table.time, [(wireless.MARKER_TOPIC, wireless.link_markers(table, frame, strongest))])
        except BaseException as exc:  # as on_tick: stop the recording rather than lose data silently
            failure.append(exc)

    sim.wireless.add_listener(on_links)


def _progress_bar(total: int, enabled: bool):  # noqa: ANN202 - tqdm is imported lazily
    if not enabled or not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    return tqdm(total=total, unit="tick", desc="recording", file=sys.stderr)


def cmd_record(args: argparse.Namespace) -> int:
    """usarsim record: run a lockstep scenario into an MCAP rosbag2."""
    try:
        import rclpy.serialization  # noqa: F401 - only to fail early with a clear message
        import rosbags.rosbag2  # noqa: F401
    except ImportError as exc:
        print(f"usarsim record: needs the ROS 2 message packages and rosbags ({exc.name or exc} is missing); "
              "install with `pip install -e '.[ros]'` or scripts/bootstrap.sh", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # the ROS imports take seconds
        print("usarsim record: stopped by Ctrl-C while starting up; no bag written", file=sys.stderr)
        return 130
    options = RecordOptions(world=args.world, robot=args.robot, name=args.name, start=args.start, seed=args.seed,
                            duration=args.duration, drive=args.drive, physics_rate=args.physics_rate,
                            clock_rate=args.clock_rate, cameras=args.camera, map_tf=args.map_tf,
                            stations=tuple(args.station), trace=args.trace)
    with StopOnSignal() as stopper:
        try:
            counts = record(options, args.output, overwrite=args.overwrite, progress=True, stop=stopper.event,
                            chunk_seconds=args.chunk_seconds)
        except FileExistsError as exc:
            print(f"usarsim record: {exc}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:  # while the world was built (signals.starting_up): the bag is removed
            print(f"usarsim record: stopped by {stopper.signal_name or 'Ctrl-C'} while loading the world; "
                  "no bag written", file=sys.stderr)
            return 130
    how = f" (stopped by {stopper.signal_name})" if stopper.signal_name else ""
    print(f"wrote {sum(counts.values())} messages on {len(counts)} topics to {args.output}{how}", file=sys.stderr)
    return stopper.exit_code


_DESCRIPTION = ("Run a scenario in lockstep and write what the ROS bridge would publish (/clock, /tf, /tf_static, "
                "/<robot>/scan, odom, imu/data, gps/fix, ground_truth, joint_states, ...) to an MCAP rosbag2. "
                "FILE.mcap gives one self-contained file; any other name a rosbag2 directory. See docs/bags.md.")


def add_subcommand(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Register ``usarsim record`` on the ``usarsim`` command's subparsers."""
    from usarsim.arguments import positive_float, seed_number
    from usarsim.cli import parse_drive_pair, parse_trace  # the cli imports this module lazily: no cycle

    rec = subparsers.add_parser("record", help="run a lockstep scenario and write an MCAP rosbag2 (no ROS graph)",
                                description=_DESCRIPTION)
    rec.add_argument("--world", default=DEFAULT_WORLD,
                     help=f"world name or YAML file (default: {DEFAULT_WORLD})")
    rec.add_argument("--robot", default="P2AT", help="catalogue class")
    rec.add_argument("--name", default=None, help="robot name = topic namespace (default: <class>_1)")
    rec.add_argument("--start", default=None, help="start pose tag (default: the world's first)")
    rec.add_argument("--seed", type=seed_number, default=0)
    rec.add_argument("--duration", type=positive_float, default=10.0, help="sim seconds")
    rec.add_argument("--drive", type=parse_drive_pair, default=(0.0, 0.0), metavar="LEFT,RIGHT",
                     help="wheel spin speeds in rad/s (as DRIVE {Left} {Right})")
    rec.add_argument("--physics-rate", type=positive_float, default=200.0, help="physics steps per sim second")
    rec.add_argument("--clock-rate", type=positive_float, default=DEFAULT_CLOCK_RATE, help="/clock messages per sim second")
    rec.add_argument("--camera", action="store_true", help="also render and record camera images (slow)")
    rec.add_argument("--map-tf", action="store_true", help="also record map -> odom from ground truth")
    rec.add_argument("--station", action="append", default=[], metavar="NAME:X,Y[,Z]",
                     help="place a ComStation (m, world frame; repeatable): records /<robot>/wireless/links and "
                          "/wireless/markers (docs/wireless.md)")
    rec.add_argument("--trace", type=parse_trace, default=None, metavar="INTERVAL[,COLOR]",
                     help="record the robot's path trace (as TRACE) as markers on /<robot>/trace")
    rec.add_argument("--overwrite", action="store_true", help="replace an existing output")
    rec.add_argument("--chunk-seconds", type=positive_float, default=DEFAULT_CHUNK_SECONDS,
                     help="sim seconds per MCAP chunk sealed on disk: the most a killed recorder loses (default 1)")
    rec.add_argument("--output", "-o", required=True,
                     help="FILE.mcap (one file) or a directory name (rosbag2 directory)")
    rec.set_defaults(func=cmd_record)

    repair = subparsers.add_parser("bag-repair", help="make a bag cut off by a crash readable again (in place)",
                                   description="Rewrite an MCAP rosbag2 (FILE.mcap or a bag directory) whose "
                                               "recorder was killed: every intact chunk is kept, the torn tail "
                                               "dropped, and summary, index and metadata written. See docs/bags.md.")
    repair.add_argument("bag", help="FILE.mcap or rosbag2 directory")
    repair.set_defaults(func=cmd_bag_repair)


def cmd_bag_repair(args: argparse.Namespace) -> int:
    """usarsim bag-repair: rewrite a killed recording as a complete bag."""
    from usarsim.bagfile import repair

    try:
        report = repair(args.bag)
    except (ValueError, OSError) as exc:
        print(f"usarsim bag-repair: {exc}", file=sys.stderr)
        return 2
    if report.already_complete:
        print(f"{args.bag} is complete; nothing to repair", file=sys.stderr)
        return 0
    print(f"{args.bag}: recovered {report.messages} messages on {len(report.topics)} topics from "
          f"{report.chunks} chunks; dropped a torn tail of {report.dropped_bytes} bytes", file=sys.stderr)
    return 0
