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
"""
from __future__ import annotations

import logging
import threading
import time
from typing import Sequence

import foxglove
import numpy as np
import pybullet as p
from foxglove.channels import (FrameTransformsChannel, LaserScanChannel, RawImageChannel, SceneUpdateChannel)
from foxglove.messages import (Color, FrameTransform, FrameTransforms, LaserScan, LinePrimitive,
                               LinePrimitiveLineType, Point3, Quaternion, RawImage, SceneEntity, SceneUpdate,
                               SpherePrimitive, TextPrimitive, Timestamp, Vector3)

from usarsim import rotations
from usarsim.live.shapes import Primitives, body_primitives, color, pose, wedge
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
TRAIL_STEP = 0.05  # m between trail points
VICTIM_COLOUR = (0.9, 0.1, 0.1, 1.0)
FALSE_ALARM_COLOUR = (1.0, 0.6, 0.0, 1.0)
TAG_COLOUR = (0.1, 0.4, 1.0, 1.0)
TRAIL_COLOUR = (0.0, 0.8, 0.3, 1.0)
TRACE_POINT_SIZE = 0.05  # m, as the RViz trace markers


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


class LiveView:
    """The Foxglove WebSocket server and its channels; ``attach`` streams a simulator into it."""

    def __init__(self, host: str = "127.0.0.1", port: int = 8765) -> None:
        self._server = foxglove.start_server(name="usarsim", host=host, port=port)
        self.port = self._server.port
        self.host = host
        self._world = SceneUpdateChannel("/world")
        self._robots = SceneUpdateChannel("/robots")
        self._tf = FrameTransformsChannel("/tf")
        self._scan = LaserScanChannel("/scan")
        self._image = RawImageChannel("/camera/image")
        self._trails = SceneUpdateChannel("/trails")
        self._markers = SceneUpdateChannel("/markers")
        self._throttle = _Throttle()
        self._trail_points: dict[str, list[tuple[float, float, float]]] = {}
        self._trace_points: dict[str, list[TracePoint]] = {}  # what TRACE dropped, per robot
        self._sims: list[Simulator] = []
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        """WebSocket URL to open in Foxglove (Open connection -> Foxglove WebSocket)."""
        return f"ws://{self.host}:{self.port}"

    def attach(self, sim: Simulator) -> None:
        """Stream ``sim`` from its next tick on (robots spawned later included)."""
        with self._lock:
            self._sims.append(sim)
        sim.add_listener(lambda now, readings: self._on_tick(sim, now, readings))

    def stop(self) -> None:
        """Close the server (clients are disconnected)."""
        self._server.stop()

    # --- per tick --------------------------------------------------------------------------
    def _on_tick(self, sim: Simulator, now: float, readings: Sequence[Reading]) -> None:
        try:
            with sim.lock:  # PyBullet state is read here, maybe while another thread spawns a robot
                self._publish(sim, now, readings)
        except Exception:  # noqa: BLE001 - a viewer problem must never stop the simulation
            log.exception("live view: publishing failed")

    def _publish(self, sim: Simulator, now: float, readings: Sequence[Reading]) -> None:
        log_time = int(round(now * 1e9))
        for reading in readings:
            if isinstance(reading, RangeScan):
                if self._throttle.due((reading.robot, reading.sensor), SCAN_PERIOD):
                    self._scan.log(_laser_scan(reading), log_time=log_time)
            elif isinstance(reading, CameraImage):
                if self._throttle.due((reading.robot, reading.sensor), IMAGE_PERIOD):
                    self._image.log(_raw_image(reading), log_time=log_time)
            elif isinstance(reading, VictimReading) and reading.parts:
                self._markers.log(_detections(reading), log_time=log_time)
            elif isinstance(reading, TracePoint):
                self._trace_points.setdefault(reading.robot, []).append(reading)
        robots = list(sim.robots.values())
        for robot in robots:
            self._extend_trail(robot)
        if self._throttle.due((id(sim), "pose"), POSE_PERIOD):
            self._tf.log(FrameTransforms(transforms=[t for r in robots for t in _transforms(r, now)]),
                         log_time=log_time)
            self._robots.log(SceneUpdate(entities=[_robot_entity(sim, r, now) for r in robots]), log_time=log_time)
        if self._throttle.due((id(sim), "trail"), TRAIL_PERIOD):
            entities = [self._trail_entity(name, now) for name in self._trail_points]
            entities += [_trace_entity(name, points, now) for name, points in self._trace_points.items()]
            self._trails.log(SceneUpdate(entities=entities), log_time=log_time)
        if self._throttle.due((id(sim), "world"), WORLD_PERIOD):
            self._world.log(SceneUpdate(entities=world_entities(sim, now)), log_time=log_time)

    def _extend_trail(self, robot: Robot) -> None:
        points = self._trail_points.setdefault(robot.name, [])
        x, y, z = (float(v) for v in robot.base.position)
        if not points or (x - points[-1][0]) ** 2 + (y - points[-1][1]) ** 2 >= TRAIL_STEP ** 2:
            points.append((x, y, z))

    def _trail_entity(self, name: str, now: float) -> SceneEntity:
        points = [Point3(x=x, y=y, z=z + 0.02) for x, y, z in self._trail_points[name]]
        line = LinePrimitive(type=LinePrimitiveLineType.LineStrip, pose=pose((0.0, 0.0, 0.0)), thickness=3.0,
                             scale_invariant=True, points=points, color=color(TRAIL_COLOUR))
        return SceneEntity(timestamp=stamp(now), frame_id=WORLD_FRAME, id=f"trail/{name}", lines=[line])


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

