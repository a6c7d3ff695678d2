"""``LiveView``: a running simulator streamed to Foxglove over the Foxglove SDK's WebSocket server.

Topics (fixed names, so the layout in ``config/foxglove_layout.json`` works for any world):

| topic | schema | what |
|---|---|---|
| /world | foxglove.SceneUpdate | floor, arena parts, movable obstacles, victims and RFID tags |
| /robots | foxglove.SceneUpdate | every robot's links at their current pose |
| /tf | foxglove.FrameTransforms | world -> <robot>/base_link (ground truth), base_link -> sensor frames |
| /scan | foxglove.LaserScan | laser scans in <robot>/<sensor frame> |
| /camera/image | foxglove.RawImage | camera images (rgb8) while a camera renders |
| /trails | foxglove.SceneUpdate | each robot's driven path (line strip); TRACE points in their colours |
| /markers | foxglove.SceneUpdate | victim-sensor detections (short-lived spheres and labels) |

Frames follow the core: ``world`` is x north, y west, z up. Stamps are sim time. Publishing is
throttled by wall time, so a run much faster than real time is shown decimated, not queued.

Threads: the simulator's thread only files each tick's readings and robot positions (cheap,
bounded: the newest scan and image per sensor, a few detections, the bounded trails of
:mod:`usarsim.live.trails`). A publisher thread of the view builds and sends the messages,
holding the simulator's lock only while it reads PyBullet (poses, shapes). Viewers connect through
:mod:`usarsim.live.door` (both Foxglove subprotocols, a connection limit, slow viewers dropped).
"""
from __future__ import annotations

import collections
import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

import foxglove
import numpy as np
import pybullet as p
from foxglove.channels import (FrameTransformsChannel, LaserScanChannel, RawImageChannel, SceneUpdateChannel)
from foxglove.messages import (Color, FrameTransform, FrameTransforms, LaserScan, LinePrimitive,
                               LinePrimitiveLineType, Point3, Quaternion, RawImage, SceneEntity,
                               SceneEntityDeletion, SceneEntityDeletionType, SceneUpdate, SpherePrimitive,
                               TextPrimitive, Timestamp, Vector3)

from usarsim import rotations
from usarsim.live.door import FrontDoor
from usarsim.live.options import DEFAULT_MAX_VIEWERS
from usarsim.live.shapes import Primitives, body_primitives, color, pose, wedge
from usarsim.live.trails import Point, TrailStore
from usarsim.log_budget import LogBudget
from usarsim.sim.readings import CameraImage, RangeScan, Reading, TracePoint, VictimReading
from usarsim.sim.robot import Robot
from usarsim.sim.simulator import Simulator
from usarsim.sim.trace import TRACE_RGB

log = logging.getLogger(__name__)

WORLD_FRAME = "world"
TOPICS = ("/world", "/robots", "/tf", "/scan", "/camera/image", "/trails", "/markers")
# Wall-clock periods (s) of the throttled streams.
POSE_PERIOD = 0.05  # /tf and /robots
SCAN_PERIOD = 0.05  # per robot and sensor
IMAGE_PERIOD = 0.2  # per camera
TRAIL_PERIOD = 0.5
WORLD_PERIOD = 1.0  # static world, re-sent so that a client connecting later sees it
WAKE_PERIOD = 0.05  # s the publisher waits for a tick before it looks again (it also stops within this)
DETECTION_LIMIT = 32  # detection messages waiting for the publisher; the oldest go first
SDK_BACKLOG = 16  # messages the SDK's server queues per viewer (its default, 1024, is a gigabyte of trails)
SLOW_VIEWER_TIMEOUT = 10.0  # s a viewer may take nothing off the wire while data waits, before it is dropped
VICTIM_COLOUR = (0.9, 0.1, 0.1, 1.0)
FALSE_ALARM_COLOUR = (1.0, 0.6, 0.0, 1.0)
TAG_COLOUR = (0.1, 0.4, 1.0, 1.0)
TRAIL_COLOUR = (0.0, 0.8, 0.3, 1.0)
TRACE_POINT_SIZE = 0.05  # m, as the RViz trace markers


M_ARENA_MAX = -8  # glibc mallopt parameter: how many malloc arenas threads share
MALLOC_ARENAS = 2


def _limit_malloc_arenas() -> None:
    """Let the SDK's server threads share two glibc malloc arenas instead of one each.

    With an arena per thread, the buffers of every viewer that connects and is dropped leave
    fragments in arenas that are never given back: RSS crept up by about 0.1 MB per dropped viewer
    (about 4 MB over 60 drops in one process; flat with two arenas). Python holds the GIL, so the
    threads hardly contend for the shared arenas. Not glibc (or no ctypes): nothing to do.
    """
    try:
        import ctypes

        ctypes.CDLL(None).mallopt(M_ARENA_MAX, MALLOC_ARENAS)
    except (OSError, AttributeError):
        pass


def stamp(sim_time: float) -> Timestamp:
    """A Foxglove timestamp of a sim time."""
    sec = int(sim_time)
    return Timestamp(sec=sec, nsec=int(round((sim_time - sec) * 1e9)) % 1_000_000_000)


def frame_of(robot: str, frame: str) -> str:
    """Frame id of a robot's link, namespaced as the ROS bridge does."""
    return f"{robot}/{frame}"


class _Throttle:
    """True at most once per period (wall clock) per key."""

    def __init__(self) -> None:
        self._last: dict[object, float] = {}

    def due(self, key: object, period: float) -> bool:
        now = time.monotonic()
        if now - self._last.get(key, -np.inf) < period:
            return False
        self._last[key] = now
        return True

    def forget(self, keep: Callable[[object], bool]) -> None:
        """Forget the keys ``keep`` says no to (those of robots that are gone)."""
        self._last = {key: last for key, last in self._last.items() if keep(key)}


@dataclass
class _Feed:
    """What one attached simulator's ticks left for the publisher (filed under the view's lock)."""

    sim: Simulator
    now: float = 0.0
    ticked: bool = False
    sensors: dict[tuple[str, str], RangeScan | CameraImage] = field(default_factory=dict)  # newest per sensor
    detections: collections.deque[VictimReading] = field(
        default_factory=lambda: collections.deque(maxlen=DETECTION_LIMIT))
    trails: TrailStore = field(default_factory=TrailStore)


class LiveView:
    """The Foxglove WebSocket server and its channels; ``attach`` streams a simulator into it."""

    def __init__(self, host: str = "127.0.0.1", port: int = 8765, *, max_viewers: int = DEFAULT_MAX_VIEWERS,
                 slow_viewer_timeout: float = SLOW_VIEWER_TIMEOUT) -> None:
        _limit_malloc_arenas()  # before the SDK starts its threads
        self._server = foxglove.start_server(name="usarsim", host="127.0.0.1", port=0,
                                             message_backlog_size=SDK_BACKLOG)
        try:
            self._door = FrontDoor(host, port, self._server.port, max_viewers=max_viewers,
                                   send_timeout=slow_viewer_timeout)
        except BaseException:
            self._server.stop()
            raise
        self.port = self._door.port
        self.host = host
        self._world = SceneUpdateChannel("/world")
        self._robots = SceneUpdateChannel("/robots")
        self._tf = FrameTransformsChannel("/tf")
        self._scan = LaserScanChannel("/scan")
        self._image = RawImageChannel("/camera/image")
        self._trails = SceneUpdateChannel("/trails")
        self._markers = SceneUpdateChannel("/markers")
        self._throttle = _Throttle()
        self._feeds: list[_Feed] = []
        self._lock = threading.Lock()  # the feeds, between the simulator threads and the publisher
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._log = LogBudget(log)
        self._publisher = threading.Thread(target=self._publish_loop, name="live-publisher", daemon=True)
        self._publisher.start()

    @property
    def url(self) -> str:
        """WebSocket URL to open in Foxglove (Open connection -> Foxglove WebSocket)."""
        return f"ws://{self.host}:{self.port}"

    @property
    def door(self) -> FrontDoor:
        """The port viewers connect to (its limits and counters)."""
        return self._door

    def trail_sizes(self) -> tuple[int, int, int]:
        """(robots with trails, longest path, longest TRACE history), over every attached simulator."""
        with self._lock:
            sizes = [(len(f.trails.snapshot()[0]), *f.trails.sizes()) for f in self._feeds]
        return (sum(s[0] for s in sizes), max((s[1] for s in sizes), default=0),
                max((s[2] for s in sizes), default=0))

    def attach(self, sim: Simulator) -> None:
        """Stream ``sim`` from its next tick on (robots spawned later included)."""
        feed = _Feed(sim)
        with self._lock:
            self._feeds.append(feed)
        sim.add_listener(lambda now, readings: self._on_tick(feed, now, readings))

    def stop(self) -> None:
        """Stop publishing and close the server (viewers are disconnected)."""
        self._stopping.set()
        self._wake.set()
        self._publisher.join(timeout=5.0)
        self._door.stop()
        self._server.stop()

    # --- the simulator's thread: file what the tick left, nothing more ---------------------
    def _on_tick(self, feed: _Feed, now: float, readings: Sequence[Reading]) -> None:
        try:
            positions = [(r.name, tuple(float(v) for v in r.base.position)) for r in list(feed.sim.robots.values())]
            with self._lock:
                for reading in readings:
                    if isinstance(reading, (RangeScan, CameraImage)):
                        feed.sensors[(reading.robot, reading.sensor)] = reading
                    elif isinstance(reading, VictimReading) and reading.parts:
                        feed.detections.append(reading)
                    elif isinstance(reading, TracePoint):
                        feed.trails.add_trace(reading)
                for name, position in positions:
                    feed.trails.extend(name, position)
                feed.now, feed.ticked = now, True
            self._wake.set()
        except Exception:  # noqa: BLE001 - a viewer problem must never stop the simulation
            self._log.log(logging.ERROR, "tick", "live view: filing a tick failed", exc_info=True)

    # --- the publisher thread ---------------------------------------------------------------
    def _publish_loop(self) -> None:
        while not self._stopping.is_set():
            self._wake.wait(WAKE_PERIOD)
            self._wake.clear()
            with self._lock:
                feeds = [f for f in self._feeds if f.ticked]
            for feed in feeds:
                try:
                    self._publish(feed)
                except Exception:  # noqa: BLE001 - a viewer problem must never stop the simulation
                    self._log.log(logging.ERROR, "publish", "live view: publishing failed", exc_info=True)

    def _publish(self, feed: _Feed) -> None:
        sim = feed.sim
        with self._lock:
            now, sensors, detections = feed.now, list(feed.sensors.values()), list(feed.detections)
            feed.sensors.clear()
            feed.detections.clear()
            feed.ticked = False
        log_time = int(round(now * 1e9))
        for reading in sensors:
            if isinstance(reading, RangeScan):
                if self._throttle.due((id(sim), reading.robot, reading.sensor), SCAN_PERIOD):
                    self._scan.log(_laser_scan(reading), log_time=log_time)
            elif self._throttle.due((id(sim), reading.robot, reading.sensor), IMAGE_PERIOD):
                self._image.log(_raw_image(reading), log_time=log_time)
        for detection in detections:
            self._markers.log(_detections(detection), log_time=log_time)
        if self._throttle.due((id(sim), "pose"), POSE_PERIOD):
            with sim.lock:  # PyBullet is read here while the simulator may step or spawn
                robots = list(sim.robots.values())
                transforms = [t for r in robots for t in _transforms(r, now)]
                entities = [_robot_entity(sim, r, now) for r in robots]
            self._tf.log(FrameTransforms(transforms=transforms), log_time=log_time)
            self._robots.log(SceneUpdate(entities=entities), log_time=log_time)
        if self._throttle.due((id(sim), "trail"), TRAIL_PERIOD):
            self._trails.log(self._trail_update(feed, now), log_time=log_time)
        if self._throttle.due((id(sim), "world"), WORLD_PERIOD):
            with sim.lock:
                world = world_entities(sim, now)
            self._world.log(SceneUpdate(entities=world), log_time=log_time)

    def _trail_update(self, feed: _Feed, now: float) -> SceneUpdate:
        """Trails of the live robots; deletions for those of robots removed since the last update."""
        live = list(feed.sim.robots)
        with self._lock:
            gone = feed.trails.keep_only(live)
            paths, traces = feed.trails.snapshot()
        if gone:
            self._throttle.forget(lambda key: not (isinstance(key, tuple) and len(key) == 3 and key[1] in gone))
        entities = [_trail_entity(name, points, now) for name, points in paths.items()]
        entities += [_trace_entity(name, points, now) for name, points in traces.items()]
        deletions = [SceneEntityDeletion(timestamp=stamp(now), type=SceneEntityDeletionType.MatchingId,
                                         id=f"{kind}/{name}") for name in gone for kind in ("trail", "trace")]
        return SceneUpdate(deletions=deletions, entities=entities)


def _trail_entity(robot: str, points: Sequence[Point], now: float) -> SceneEntity:
    """A robot's driven path as a green line strip, just above the ground."""
    line = LinePrimitive(type=LinePrimitiveLineType.LineStrip, pose=pose((0.0, 0.0, 0.0)), thickness=3.0,
                         scale_invariant=True, points=[Point3(x=x, y=y, z=z + 0.02) for x, y, z in points],
                         color=color(TRAIL_COLOUR))
    return SceneEntity(timestamp=stamp(now), frame_id=WORLD_FRAME, id=f"trail/{robot}", lines=[line])


def _trace_entity(robot: str, points: Sequence[TracePoint], now: float) -> SceneEntity:
    """The TRACE points a robot dropped, each a sphere in the colour it was dropped with."""
    size = Vector3(x=TRACE_POINT_SIZE, y=TRACE_POINT_SIZE, z=TRACE_POINT_SIZE)
    spheres = [SpherePrimitive(pose=pose(point.position), size=size, color=color((*TRACE_RGB[point.color], 1.0)))
               for point in points]
    return SceneEntity(timestamp=stamp(now), frame_id=WORLD_FRAME, id=f"trace/{robot}", spheres=spheres)


def _laser_scan(scan: RangeScan) -> LaserScan:
    n = len(scan.ranges)
    end = scan.angle_min + scan.angle_increment * max(0, n - 1)
    return LaserScan(timestamp=stamp(scan.time), frame_id=frame_of(scan.robot, scan.frame), pose=pose((0, 0, 0)),
                     start_angle=scan.angle_min, end_angle=end, ranges=list(scan.ranges), intensities=[])


def _raw_image(image: CameraImage) -> RawImage:
    return RawImage(timestamp=stamp(image.time), frame_id=frame_of(image.robot, image.frame), width=image.width,
                    height=image.height, encoding="rgb8", step=3 * image.width, data=bytes(image.rgb))


def _detections(reading: VictimReading) -> SceneUpdate:
    spheres = [SpherePrimitive(pose=pose(part.position), size=Vector3(x=0.12, y=0.12, z=0.12),
                               color=color(VICTIM_COLOUR)) for part in reading.parts]
    texts = [TextPrimitive(pose=pose(np.add(part.position, (0.0, 0.0, 0.15))), billboard=True, font_size=14.0,
                           scale_invariant=True, color=color(VICTIM_COLOUR), text=f"{part.victim_id} {part.part}")
             for part in reading.parts]
    lifetime = foxglove.messages.Duration(sec=0, nsec=500_000_000)
    return SceneUpdate(entities=[SceneEntity(timestamp=stamp(reading.time), id=f"{reading.robot}/{reading.sensor}",
                                             frame_id=frame_of(reading.robot, reading.frame), lifetime=lifetime,
                                             frame_locked=False, spheres=spheres, texts=texts)])


def _transforms(robot: Robot, now: float) -> list[FrameTransform]:
    """world -> base_link, and base_link -> each sensor's frame (from the mounts, current joint positions)."""
    base = robot.base
    out = [_transform(WORLD_FRAME, frame_of(robot.name, "base_link"), base.position, base.orientation, now)]
    inverse = base.rotation.T
    seen = {"base_link"}
    for sensor in robot.sensors:
        frame = sensor.spec.frame_id
        if frame in seen:
            continue
        seen.add(frame)
        position, rotation = robot.mount_pose(sensor.spec.mount)
        local = inverse @ (np.asarray(position) - base.position)
        quat = rotations.quaternion_from_matrix(inverse @ rotation)
        out.append(_transform(frame_of(robot.name, "base_link"), frame_of(robot.name, frame), local, quat, now))
    return out


def _transform(parent: str, child: str, position: Sequence[float] | np.ndarray, quat: Sequence[float] | np.ndarray,
               now: float) -> FrameTransform:
    x, y, z = (float(v) for v in position)
    qx, qy, qz, qw = (float(v) for v in quat)
    return FrameTransform(timestamp=stamp(now), parent_frame_id=parent, child_frame_id=child,
                          translation=Vector3(x=x, y=y, z=z), rotation=Quaternion(x=qx, y=qy, z=qz, w=qw))


def _robot_entity(sim: Simulator, robot: Robot, now: float) -> SceneEntity:
    shapes = body_primitives(sim.client, robot.body_id)
    label = TextPrimitive(pose=pose(np.add(robot.base.position, (0.0, 0.0, 0.5))), billboard=True, font_size=14.0,
                          scale_invariant=True, color=Color(r=1.0, g=1.0, b=1.0, a=1.0), text=robot.name)
    return SceneEntity(timestamp=stamp(now), frame_id=WORLD_FRAME, id=f"robot/{robot.name}", texts=[label],
                       **shapes.as_kwargs())


def world_entities(sim: Simulator, now: float) -> list[SceneEntity]:
    """The arena (floor, static parts, obstacles), victims and RFID tags as scene entities in ``world``."""
    client, world, spec = sim.client, sim.world, sim.spec
    arena = body_primitives(client, world.floor_id)
    for item, body in zip(spec.static, world.static_ids):
        if item.kind == "ramp":
            arena.triangles.append(wedge(item.xyz, item.size, item.rpy, item.color))
        else:
            body_primitives(client, body, arena)
    for body in world.obstacle_ids:
        body_primitives(client, body, arena)
    entities = [SceneEntity(timestamp=stamp(now), frame_id=WORLD_FRAME, id="arena", **arena.as_kwargs())]
    for victim in world.victims:
        shapes = Primitives()
        tint = FALSE_ALARM_COLOUR if victim.false_alarm else VICTIM_COLOUR
        for body in victim.body_ids:
            body_primitives(client, body, shapes, tint=tint)
        head = p.getBasePositionAndOrientation(victim.body_ids[0], physicsClientId=client)[0]
        label = TextPrimitive(pose=pose(np.add(head, (0.0, 0.0, 0.6))), billboard=True, font_size=14.0,
                              scale_invariant=True, color=color(tint), text=victim.id)
        entities.append(SceneEntity(timestamp=stamp(now), frame_id=WORLD_FRAME, id=f"victim/{victim.id}",
                                    texts=[label], **shapes.as_kwargs()))
    tags = [SpherePrimitive(pose=pose(tag.position), size=Vector3(x=0.08, y=0.08, z=0.08), color=color(TAG_COLOUR))
            for tag in world.rfid_tags.values()]
    entities.append(SceneEntity(timestamp=stamp(now), frame_id=WORLD_FRAME, id="rfid_tags", spheres=tags))
    return entities

