"""The simulator: one PyBullet world, a fixed step, a sim clock, robots and pacing.

Public surface: ``spawn``, ``remove``, ``submit`` (commands), ``step`` /
``run_for`` (lockstep), ``start`` / ``stop`` (paced background loop),
``add_listener`` (readings fan-out) and ``close``; ``add_station`` and
``wireless`` (the radio link table, docs/wireless.md). Physics runs under one
lock, so front doors in other threads only queue commands.
"""
from __future__ import annotations

import collections
import logging
import importlib.util
import math
import os
import sys
import threading
import time
from concurrent.futures import Future
from typing import Callable, Literal, Sequence

import pybullet as p

from usarsim.config_loading import ConfigError
from usarsim.sim.body_pool import BodyPool
from usarsim.sim.catalogue import RobotSpec, load_robot
from usarsim.sim.commands import Command, CommandError
from usarsim.sim.environment import SensorEnvironment
from usarsim.sim.listeners import Listeners
from usarsim.sim.readings import GroundTruthReading, Reading, RobotLost
from usarsim.sim.props import Prop, load_prop, set_body_state
from usarsim.sim.robot import Robot, pose_tuple, spawn_height
from usarsim.sim.sensors.ground_truth import ground_truth_of
from usarsim.sim.quiet import quiet_stdout
from usarsim.sim.wireless import LinkTable, WirelessNetwork
from usarsim.sim.world import BuiltWorld, WorldSpec, build_world, load_world
from usarsim.signals import starting_up
from usarsim import rotations

log = logging.getLogger(__name__)

Pacing = Literal["realtime", "fast", "lockstep"]
PACINGS: tuple[str, ...] = ("realtime", "fast", "lockstep")
Listener = Callable[[float, Sequence[Reading]], None]
FLOOR_PROBE = 0.05  # m: a spawn location this far below a floor still counts as on it (rounded coordinates)
SPAWN_PENETRATION = 0.01  # m: a spawned robot overlapping anything deeper than this is inside it


# Cameras render through EGL (OpenGL without a display) when the machine has a GPU render device
# and PyBullet's EGL plugin loads. Without a GPU, EGL falls back to Mesa's llvmpipe, which is
# slower than TinyRenderer at 320x240 and cannot convert meshes given as vertex lists (ramps), so
# "auto" keeps TinyRenderer there. USARSIM_EGL=1 forces EGL, USARSIM_EGL=0 forbids it.
EGL_ENV = "USARSIM_EGL"
GPU_DEVICES = ("/dev/nvidia0", "/dev/dri/renderD128")


def egl_wanted(option: object) -> bool:
    """``render={"egl": ...}``: True/False, or "auto" (the default): USARSIM_EGL, else a GPU is present."""
    if option != "auto":
        return bool(option)
    forced = os.environ.get(EGL_ENV, "").strip().lower()
    if forced:
        return forced not in ("0", "false", "no", "off")
    return any(os.path.exists(device) for device in GPU_DEVICES)


def _load_egl(client: int) -> bool:
    """Load PyBullet's EGL renderer plugin; False (cameras use TinyRenderer) when unavailable."""
    try:
        spec = importlib.util.find_spec("eglRenderer")
        if spec is None or not spec.origin:
            return False
        with quiet_stdout():  # the plugin reports its GL version on stdout
            plugin = p.loadPlugin(spec.origin, "_eglRendererPlugin", physicsClientId=client)
    except Exception:  # noqa: BLE001 - no EGL: fall back to TinyRenderer
        return False
    if plugin < 0:
        log.info("EGL renderer unavailable; cameras use TinyRenderer")
    return plugin >= 0


# Constraint-solver iterations per step. PyBullet's default of 50 costs 40 % more per step with
# several robots; what 20 loses in resting friction the brakes and friction anchors make up for
# (docs/architecture.md, "Contact friction and the drives").
SOLVER_ITERATIONS = 20
HOLD_PARKED_TICKS = 200  # ticks between putting parked bodies back in place (they fall meanwhile)
# Ticks between checks for robots that fell out of the world: 10 m of free fall take 1.4 s, so
# a check every 0.1 s (at 200 Hz) removes them just as promptly as one every tick.
FALL_CHECK_TICKS = 20
# Where a spawn may be asked for at all, around the floor: deep pits, tall towers and the ground
# beside the arena, not orbits (whether there is ground under it is checked next).
MAX_WORLD_MARGIN = 1000.0
MAX_WORLD_DEPTH = 100.0
MAX_WORLD_HEIGHT = 1000.0
# The physics thread shares the interpreter lock with the front doors' threads (the protocol's
# event loop, ROS executors). A thread waiting for the lock gets it only once the holder has run a
# whole switch interval, 5 ms by default, and a command needs several hand-overs from reading its
# line to sending its reply: under fast pacing a client's commands crawled. 1 ms keeps them prompt;
# the hand-overs cost nothing measurable in the benches (docs/architecture.md, "Pacing").
FRONT_DOOR_SWITCH_INTERVAL = 0.001
# Robots load with their URDF inertias, fixed links merged (fewer bodies to integrate) and
# cylinders as exact implicit shapes: round wheels and rollers roll smoothly, and contacts
# are far cheaper than against the faceted hulls PyBullet makes of them otherwise.
URDF_FLAGS = p.URDF_USE_INERTIA_FROM_FILE | p.URDF_MERGE_FIXED_LINKS | p.URDF_USE_IMPLICIT_CYLINDER


class Simulator:
    """Owns the PyBullet client, the world, the robots and the sim clock."""

    def __init__(self, world: str | WorldSpec = "empty", *, physics_rate: float = 200.0, seed: int = 0,
                 pacing: Pacing = "lockstep", render: dict | None = None,
                 solver_iterations: int = SOLVER_ITERATIONS, noise: bool = True) -> None:
        if pacing not in PACINGS:
            raise ValueError(f"pacing must be one of {', '.join(PACINGS)}, got {pacing!r}")
        if not physics_rate > 0:
            raise ValueError(f"physics rate must be positive, got {physics_rate}")
        with starting_up():  # Ctrl-C stops a long world load at once, even under StopOnSignal
            self.spec = world if isinstance(world, WorldSpec) else load_world(world)
            self.dt = 1.0 / physics_rate
            self.seed = int(seed)
            self.pacing: Pacing = pacing
            with quiet_stdout():  # the first connection prints a build banner
                self.client = p.connect(p.DIRECT)
            try:
                self._set_up_physics(solver_iterations)
                render = {"egl": "auto", **(render or {})}
                render["egl"] = egl_wanted(render["egl"]) and _load_egl(self.client)  # before any body is loaded
                self.world: BuiltWorld = build_world(self.client, self.spec, textures=render.get("textures", True),
                                                        seed=self.seed)
            except BaseException:  # stopped or refused half-way: no PyBullet client left behind
                p.disconnect(self.client)
                raise
        self.env = SensorEnvironment(client=self.client, world=self.world, gravity=self.spec.gravity,
                                     physics_dt=self.dt, seed=self.seed,
                                     robot_body_ids=lambda: {r.body_id for r in self.robots.values()},
                                     render_options=render, noise=bool(noise))
        self.robots: dict[str, Robot] = {}
        self.wireless = WirelessNetwork(self.client, self.world, self.spec.comm)
        self.props: dict[str, Prop] = {}
        self._initial_robots: set[str] | None = None  # robots present at the first tick (kept by reset)
        self._bodies = BodyPool(self.client)  # removed robots' bodies, reused (PyBullet leaks on removeBody)
        self.ticks = 0
        self._lock = threading.RLock()
        self._queue: collections.deque[tuple[Command, Future]] = collections.deque()
        self._listeners: Listeners[Listener] = Listeners("reading listener", log)
        self._thread: threading.Thread | None = None
        self._running = threading.Event()
        self._name_counter: dict[str, int] = collections.Counter()
        self._closed = False

    def _set_up_physics(self, solver_iterations: int) -> None:
        p.setGravity(0, 0, self.spec.gravity, physicsClientId=self.client)
        p.setTimeStep(self.dt, physicsClientId=self.client)
        # Cone friction makes a skid-steer robot's turn rate depend on its heading against the
        # world axes (a P2AT turns 4x slower at some headings); the pyramid model does not.
        p.setPhysicsEngineParameter(numSolverIterations=int(solver_iterations), enableConeFriction=0,
                                    physicsClientId=self.client)

    # --- clock -----------------------------------------------------------------------------
    @property
    def time(self) -> float:
        """Simulation time in seconds (exact multiple of the physics step)."""
        return self.ticks * self.dt

    # --- robots ----------------------------------------------------------------------------
    def spawn(self, class_name: str, name: str | None = None, *, start: str | None = None,
              position: Sequence[float] | None = None, rpy: Sequence[float] | None = None) -> Robot:
        """Spawn a robot at a named start pose or at ``position`` (core frame).

        As in USARSim, ``position`` is where the robot appears and the robot then stands on
        the first floor under it (it is set down there rather than dropped). A position
        over no floor, or one that puts the robot inside geometry, is refused with a
        CommandError: nothing is spawned.
        """
        spec: RobotSpec = load_robot(class_name)
        with self._lock:
            self._check_open()
            name = name or self._default_name(spec.class_name)
            self._check_free(name)
            if position is None:
                pose = self.world.start_pose(start) if start else self.spec.start_poses[0]
                xyz, orientation, ground = pose.xyz, pose.rpy, pose.xyz[2]
            else:
                xyz, orientation = self._inside_world(position), pose_tuple(rpy or (0.0, 0.0, 0.0))
                floor = self.world.floor_below(xyz[0], xyz[1], xyz[2] + FLOOR_PROBE)
                if floor is None:
                    raise CommandError("there is no floor under that location (the robot would fall forever); "
                                       "GETSTARTPOSES lists valid starts")
                ground = floor
            if rpy is not None:
                orientation = pose_tuple(rpy)
            if not all(math.isfinite(a) and abs(a) <= 1e4 for a in orientation):
                raise CommandError(f"rotation {tuple(orientation)} is not a finite angle (radians)")
            base = (xyz[0], xyz[1], spawn_height(spec, ground))
            quaternion = rotations.quaternion_from_euler(orientation)
            model = str(spec.urdf_path)

            def load() -> int:
                with quiet_stdout():  # PyBullet prints a note per merged fixed link
                    return p.loadURDF(model, base, quaternion, flags=URDF_FLAGS, physicsClientId=self.client)

            body = self._bodies.take(model, base, quaternion, load)
            if abs(orientation[0]) > 1e-9 or abs(orientation[1]) > 1e-9:
                self._lift_above(body, ground)  # rolled or pitched: the catalogue's lowest point does not hold
            blocker = self._blocking_body(body)
            if blocker is not None:
                self._bodies.park(model, body)
                raise CommandError(f"that location puts the robot inside {blocker}; choose a free spot "
                                   f"(GETSTARTPOSES lists valid starts)")
            try:
                robot = Robot(name, spec, self.client, body, self.env)
            except Exception:
                self._bodies.park(model, body)
                raise
            self.robots[name] = robot
            robot.spawn_pose = (base, rotations.quaternion_from_euler(orientation))
            robot.on_spawned(self.time)
            log.info("spawned %s (%s) at %s", name, spec.class_name, base)
            return robot

    def _lift_above(self, body: int, ground: float, clearance: float = 0.02) -> None:
        """Raise a freshly loaded body until its bounding box clears ``ground`` by ``clearance``."""
        links = range(-1, p.getNumJoints(body, physicsClientId=self.client))
        lowest = min(p.getAABB(body, link, physicsClientId=self.client)[0][2] for link in links)
        if lowest < ground + clearance:
            pos, orn = p.getBasePositionAndOrientation(body, physicsClientId=self.client)
            p.resetBasePositionAndOrientation(body, (pos[0], pos[1], pos[2] + ground + clearance - lowest), orn,
                                              physicsClientId=self.client)

    def _blocking_body(self, body: int) -> str | None:
        """What a freshly placed robot body penetrates (a description), or None when it is free."""
        for index in range(p.getNumBodies(physicsClientId=self.client)):
            other = p.getBodyUniqueId(index, physicsClientId=self.client)
            if other == body:
                continue
            points = p.getClosestPoints(body, other, 0.0, physicsClientId=self.client)
            if any(pt[8] < -SPAWN_PENETRATION for pt in points):
                owner = next((r.name for r in self.robots.values() if r.body_id == other), None)
                if owner is not None:
                    return f"robot '{owner}'"
                return self.world.label(other)
        return None

    def _inside_world(self, position: Sequence[float]) -> tuple[float, float, float]:
        """``position`` if it lies within reach of the world (its floor, MAX_WORLD_MARGIN around it), else
        CommandError: absurd values (1e300, far beyond any arena) stop here; the floor check follows."""
        xyz = pose_tuple(position)
        floor, margin = self.spec.floor, MAX_WORLD_MARGIN
        low = (floor.center[0] - floor.size[0] / 2 - margin, floor.center[1] - floor.size[1] / 2 - margin,
               floor.z - MAX_WORLD_DEPTH)
        high = (floor.center[0] + floor.size[0] / 2 + margin, floor.center[1] + floor.size[1] / 2 + margin,
                floor.z + MAX_WORLD_HEIGHT)
        if not all(math.isfinite(v) and lo <= v <= hi for v, lo, hi in zip(xyz, low, high)):
            raise CommandError(f"location {xyz} is outside the world '{self.spec.name}' "
                               f"(x {low[0]:g}..{high[0]:g}, y {low[1]:g}..{high[1]:g}, "
                               f"z {low[2]:g}..{high[2]:g} m, core frame)")
        return xyz

    def _default_name(self, class_name: str) -> str:
        while True:
            self._name_counter[class_name] += 1
            candidate = f"{class_name}_{self._name_counter[class_name]}"
            if candidate not in self.robots and candidate not in self.wireless.stations:
                return candidate

    def _check_free(self, name: str) -> None:
        """Robots, ComStations and props share one name space."""
        if name in self.robots or name in self.wireless.stations:
            raise CommandError(f"a robot named '{name}' already exists")
        if name in self.props:
            raise CommandError(f"a prop named '{name}' already exists")

    def spawn_prop(self, name: str, urdf: str, position: Sequence[float],
                   orientation: Sequence[float] = (0.0, 0.0, 0.0, 1.0)) -> Prop:
        """Spawn a passive body from a URDF path or URDF text at a world pose (quaternion x, y, z, w)."""
        with self._lock:
            self._check_open()
            if not name:
                raise CommandError("a prop needs a name")
            self._check_free(name)
            prop = load_prop(self.client, name, urdf, position, orientation)
            self.props[name] = prop
            return prop

    def remove(self, name: str) -> None:
        """Remove a robot, ComStation or prop (no error if it is already gone)."""
        with self._lock:
            self.wireless.remove_station(name)
            robot = self.robots.pop(name, None)
            prop = self.props.pop(name, None) if robot is None else None
            if self._closed:
                return
            if robot is not None:
                self._bodies.park(str(robot.spec.urdf_path), robot.body_id)  # reused by the next spawn
            elif prop is not None:
                p.removeBody(prop.body_id, physicsClientId=self.client)

    def body_id(self, name: str) -> int:
        """PyBullet body of a robot or prop."""
        entity = self.robots.get(name) or self.props.get(name)
        if entity is None:
            raise CommandError(f"no entity named '{name}' (entities: {', '.join(self.entity_names()) or 'none'})")
        return entity.body_id

    def entity_names(self) -> list[str]:
        """Robots then props, in spawn order."""
        return [*self.robots, *self.props]

    def entity_state(self, name: str) -> tuple[tuple[float, ...], tuple[float, ...], tuple[float, ...], tuple[float, ...]]:
        """World position, quaternion (x, y, z, w), linear and angular velocity of a robot or prop now."""
        with self._lock:
            body = self.body_id(name)
            position, orientation = p.getBasePositionAndOrientation(body, physicsClientId=self.client)
            linear, angular = p.getBaseVelocity(body, physicsClientId=self.client)
            return tuple(position), tuple(orientation), tuple(linear), tuple(angular)

    def set_state(self, name: str, position: Sequence[float] | None = None,
                  orientation: Sequence[float] | None = None, linear: Sequence[float] | None = None,
                  angular: Sequence[float] | None = None) -> None:
        """Teleport a robot or prop and/or set its world-frame velocity, between ticks."""
        with self._lock:
            self._check_open()
            set_body_state(self.client, self.body_id(name), position, orientation, linear, angular)
            robot = self.robots.get(name)
            if robot is not None:
                robot.invalidate()

    def reset(self, *, time: bool = True, state: bool = True, spawned: bool = True) -> None:
        """Back to the start: ``time`` clock to 0, ``state`` robots and props to their spawn poses at rest
        (joints and drives too; sensors re-reference), ``spawned`` remove what was spawned after the first tick."""
        with self._lock:
            self._check_open()
            self._queue.clear()
            if spawned:
                for name in [n for n in self.robots if self._initial_robots is not None and n not in self._initial_robots]:
                    self.remove(name)
                for name in list(self.props):
                    self.remove(name)
            if time:
                self.ticks = 0
            if state:
                for robot in self.robots.values():
                    robot.reset_to_spawn()
                for prop in self.props.values():
                    set_body_state(self.client, prop.body_id, prop.spawn_position, prop.spawn_orientation,
                                   (0.0, 0.0, 0.0), (0.0, 0.0, 0.0))
            if time or state:
                for robot in self.robots.values():
                    robot.on_spawned(self.time)

    def add_station(self, name: str | None = None, position: Sequence[float] | None = None, *,
                    start: str | None = None) -> str:
        """Place a ComStation (a wireless relay) standing at ``position`` (core frame), or at a
        start pose; returns its name. Robots and stations share one name space (one radio each)."""
        with self._lock:
            self._check_open()
            name = name or self._default_name("ComStation")
            if name in self.robots:
                raise CommandError(f"a robot named '{name}' already exists")
            if name in self.props:
                raise CommandError(f"a prop named '{name}' already exists")
            if position is None:
                position = (self.world.start_pose(start) if start else self.spec.start_poses[0]).xyz
            self.wireless.add_station(name, pose_tuple(position))
            return name

    def robot(self, name: str) -> Robot:
        """A spawned robot by name."""
        try:
            return self.robots[name]
        except KeyError:
            raise CommandError(f"no robot named '{name}' (robots: {', '.join(self.robots) or 'none'})") from None

    # --- commands --------------------------------------------------------------------------
    def submit(self, cmd: Command) -> Future:
        """Queue a command for the start of the next tick; the future gets its result or error."""
        future: Future = Future()
        self._queue.append((cmd, future))
        return future

    def _apply_commands(self) -> None:
        while self._queue:
            cmd, future = self._queue.popleft()
            if not future.set_running_or_notify_cancel():  # its sender gave up (e.g. disconnected)
                continue
            try:
                result = self.robot(cmd.robot).apply(cmd)
            except (CommandError, ValueError) as exc:
                log.warning("command %s refused: %s", type(cmd).__name__, exc)
                future.set_exception(exc)
            else:
                future.set_result(result)

    # --- stepping --------------------------------------------------------------------------
    def step(self, n: int = 1) -> list[Reading]:
        """Advance ``n`` physics ticks; return every reading produced, in order."""
        produced: list[Reading] = []
        for _ in range(n):
            produced.extend(self._tick())
        return produced

    def run_for(self, seconds: float) -> list[Reading]:
        """Advance by ``seconds`` of sim time (rounded to whole ticks)."""
        return self.step(max(0, round(seconds / self.dt)))

    def _tick(self) -> list[Reading]:
        with self._lock:
            self._check_open()
            if self._initial_robots is None:
                self._initial_robots = set(self.robots)
            self._apply_commands()
            for robot in self.robots.values():
                robot.update(self.dt)
            self.world.water.apply(self.robots.values())
            p.stepSimulation(physicsClientId=self.client)
            self.ticks += 1
            if self.ticks % HOLD_PARKED_TICKS == 0:
                self._bodies.hold()
            now = self.time
            self.world.update(now)
            readings: list[Reading] = []
            for robot in self.robots.values():
                robot.invalidate()
                readings.extend(robot.robot_readings(now))
                readings.extend(robot.sample_sensors(now))
            if self.ticks % FALL_CHECK_TICKS == 0:
                readings.extend(self._remove_lost(now))
            links = self._update_links(now)
            listeners = self._listeners.snapshot()
        if links is not None:
            self.wireless.notify(links)
        self._listeners.call(listeners, now, readings)
        return readings

    def _remove_lost(self, now: float) -> list[Reading]:
        """Report and remove robots that fell out of the world (instead of simulating the fall forever)."""
        lost = [r for r in self.robots.values() if r.height() < self.world.fall_limit_z]
        out: list[Reading] = []
        for robot in lost:
            where = rotations.vec3(robot.base.position)
            log.warning("robot %s fell out of the world (z %.1f m) and was removed", robot.name, where[2])
            out.append(RobotLost(time=now, robot=robot.name, sensor="State", frame="base_link", position=where))
            self.remove(robot.name)
        return out

    def _update_links(self, now: float) -> LinkTable | None:
        if not self.wireless.due(now, self.robots.keys()):
            return None
        return self.wireless.update(now, {n: tuple(r.base.position) for n, r in self.robots.items()})

    def add_listener(self, listener: Listener) -> None:
        """Call ``listener(time, readings)`` after every tick (from the stepping thread)."""
        self._listeners.add(listener)

    def remove_listener(self, listener: Listener) -> None:
        """Stop calling ``listener``."""
        self._listeners.remove(listener)

    @property
    def lock(self) -> threading.RLock:
        """Held while physics steps; hold it to read PyBullet state from another thread (live views)."""
        return self._lock

    def ground_truth(self, name: str) -> GroundTruthReading:
        """Exact pose and twist of a robot now (for tests and evaluation)."""
        with self._lock:
            return ground_truth_of(self.robot(name), time=self.time, robot=name, sensor="GroundTruth",
                                   frame="base_link")

    # --- pacing ----------------------------------------------------------------------------
    def start(self) -> None:
        """Run the paced loop in a background thread (realtime or fast)."""
        if self.pacing == "lockstep":
            raise RuntimeError("lockstep pacing advances only through step()/run_for()")
        self.play()

    @property
    def playing(self) -> bool:
        """True while the background loop advances the simulation."""
        return self._thread is not None

    def play(self) -> None:
        """Run the loop in a background thread; under lockstep pacing it runs in real time until paused."""
        if self._thread is not None:
            return
        sys.setswitchinterval(min(sys.getswitchinterval(), FRONT_DOOR_SWITCH_INTERVAL))
        self._running.set()
        self._thread = threading.Thread(target=self._loop, name="usarsim-physics", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        wall_start = time.monotonic()
        sim_start = self.time
        while self._running.is_set():
            self._tick()
            if self.pacing != "fast":
                ahead = (self.time - sim_start) - (time.monotonic() - wall_start)
                if ahead > 0:
                    time.sleep(ahead)
                elif ahead < -0.5:  # fell far behind (machine busy): do not try to catch up in a burst
                    wall_start, sim_start = time.monotonic(), self.time

    def stop(self) -> None:
        """Stop the background loop (if any) and wait for it: the simulation is paused."""
        self._running.clear()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def close(self) -> None:
        """Stop, fail pending commands and disconnect PyBullet."""
        self.stop()
        with self._lock:
            if self._closed:
                return
            self._closed = True
            while self._queue:
                _, future = self._queue.popleft()
                if future.set_running_or_notify_cancel():
                    future.set_exception(CommandError("simulator closed"))
            self.env.reach.close()
            with quiet_stdout():  # the EGL plugin says goodbye on stdout
                p.disconnect(physicsClientId=self.client)

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("simulator is closed")

    def __enter__(self) -> "Simulator":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["Simulator", "PACINGS", "Pacing", "ConfigError"]
