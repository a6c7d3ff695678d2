"""The simulation_interfaces standard on the bridge node: step, play/pause, reset, spawn, delete, entity states.

Service names follow the other simulators that implement the standard (Isaac Sim, O3DE): relative
names at the node's namespace, e.g. ``/get_simulator_features``, ``/step_simulation`` and the
``/simulate_steps`` action. Entities are the robots (category ROBOT) and props spawned from a URDF
(category OBJECT). Named poses are the world's start poses. Poses and twists are in the world frame.
"""
from __future__ import annotations

import functools
import re
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from geometry_msgs.msg import Vector3
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from simulation_interfaces import msg as si
from simulation_interfaces import srv
from simulation_interfaces.action import SimulateSteps

from usarsim import rotations
from usarsim.ros.stamps import set_header
from usarsim.sim.catalogue import available_robots
from usarsim.sim.commands import CommandError
from usarsim.sim.props import body_bounds
from usarsim.sim.world import available_worlds, worlds_dir

if TYPE_CHECKING:
    from usarsim.ros.node import UsarsimNode

try:  # SpawnEntities appeared in simulation_interfaces 2.1; older installs lack it
    SpawnEntities = srv.SpawnEntities
except AttributeError:  # pragma: no cover - depends on the installed package
    SpawnEntities = None

R = si.Result
F = si.SimulatorFeatures
CATALOGUE_PREFIX = "USARBot."  # a class may be named as in the text protocol's INIT
STEP_FEEDBACK_EVERY = 20  # steps between SimulateSteps feedback messages
FEATURES = (F.SPAWNING, F.DELETING, F.NAMED_POSES, F.ENTITY_CATEGORIES, F.SPAWNING_RESOURCE_STRING,
            F.ENTITY_STATE_GETTING, F.ENTITY_STATE_SETTING, F.ENTITY_INFO_GETTING, F.ENTITY_BOUNDS,
            F.SPAWNABLES, F.SIMULATION_RESET, F.SIMULATION_RESET_TIME, F.SIMULATION_RESET_STATE,
            F.SIMULATION_RESET_SPAWNED, F.SIMULATION_STATE_GETTING, F.SIMULATION_STATE_SETTING,
            F.SIMULATION_STATE_PAUSE, F.STEP_SIMULATION_SINGLE, F.STEP_SIMULATION_MULTIPLE,
            F.STEP_SIMULATION_ACTION, F.WORLD_INFO_GETTING, F.AVAILABLE_WORLDS)


def result(code: int = R.RESULT_OK, message: str = "") -> si.Result:
    """A simulation_interfaces Result."""
    return si.Result(result=code, error_message=message)


def catalogue_class(uri: str) -> str | None:
    """The catalogue class a resource URI names ('P2AT', 'USARBot.P2AT', 'usarsim://P2AT'), else None."""
    name = uri.removeprefix("usarsim://").removeprefix(CATALOGUE_PREFIX)
    return name if name in available_robots() else None


def _needs_entity(handler: Callable[[Any, Any, Any], Any]) -> Callable[[Any, Any, Any], Any]:
    """Answer RESULT_NOT_FOUND for a request naming no existing entity, else run ``handler``."""

    @functools.wraps(handler)
    def checked(self: "SimulationControl", request: Any, response: Any) -> Any:
        if request.entity not in self.sim.entity_names():
            response.result = result(R.RESULT_NOT_FOUND, f"no entity '{request.entity}'")
            return response
        return handler(self, request, response)

    return checked


class SimulationControl:
    """Registers the simulation_interfaces services and the SimulateSteps action on ``node``."""

    def __init__(self, node: "UsarsimNode") -> None:
        self.node = node
        self.sim = node.sim
        self._stopped = False  # STATE_STOPPED: paused and reset, until played
        self._step_lock = threading.Lock()
        group = ReentrantCallbackGroup()  # a long SimulateSteps goal does not block state queries
        services: dict[str, tuple[Any, Callable]] = {
            "get_simulator_features": (srv.GetSimulatorFeatures, self.get_features),
            "get_simulation_state": (srv.GetSimulationState, self.get_state),
            "set_simulation_state": (srv.SetSimulationState, self.set_state),
            "step_simulation": (srv.StepSimulation, self.step),
            "reset_simulation": (srv.ResetSimulation, self.reset),
            "spawn_entity": (srv.SpawnEntity, self.spawn),
            "delete_entity": (srv.DeleteEntity, self.delete),
            "get_entities": (srv.GetEntities, self.get_entities),
            "get_entities_states": (srv.GetEntitiesStates, self.get_entities_states),
            "get_entity_state": (srv.GetEntityState, self.get_entity_state),
            "set_entity_state": (srv.SetEntityState, self.set_entity_state),
            "get_entity_info": (srv.GetEntityInfo, self.get_entity_info),
            "get_entity_bounds": (srv.GetEntityBounds, self.get_entity_bounds),
            "get_named_poses": (srv.GetNamedPoses, self.get_named_poses),
            "get_spawnables": (srv.GetSpawnables, self.get_spawnables),
            "get_current_world": (srv.GetCurrentWorld, self.get_current_world),
            "get_available_worlds": (srv.GetAvailableWorlds, self.get_available_worlds),
        }
        if SpawnEntities is not None:
            services["spawn_entities"] = (SpawnEntities, self.spawn_many)
        self.services = [node.create_service(kind, name, callback, callback_group=group)
                         for name, (kind, callback) in services.items()]
        self.action = ActionServer(node, SimulateSteps, "simulate_steps", self.simulate_steps,
                                   goal_callback=lambda goal: GoalResponse.ACCEPT,
                                   cancel_callback=lambda handle: CancelResponse.ACCEPT, callback_group=group)

    def destroy(self) -> None:
        """Remove the services and the action server."""
        for service in self.services:
            self.node.destroy_service(service)
        self.action.destroy()

    # --- simulation state ------------------------------------------------------------------
    def state(self) -> int:
        """The current SimulationState constant."""
        if self.sim.playing:
            return si.SimulationState.STATE_PLAYING
        return si.SimulationState.STATE_STOPPED if self._stopped else si.SimulationState.STATE_PAUSED

    def get_features(self, request: Any, response: Any) -> Any:
        response.features.features = list(FEATURES) + ([F.SPAWNING_ENTITIES] if SpawnEntities else [])
        response.features.spawn_formats = ["urdf", "usarsim"]
        response.features.custom_info = ("usarsim: spawn a catalogue robot with uri 'P2AT' (or 'USARBot.P2AT'), "
                                         "a passive body with a .urdf path or URDF text; "
                                         "named poses are the world's start poses")
        return response

    def get_state(self, request: Any, response: Any) -> Any:
        response.state.state = self.state()
        response.result = result()
        return response

    def set_state(self, request: Any, response: Any) -> Any:
        S = si.SimulationState
        target, now = request.state.state, self.state()
        if target == now:
            response.result = result(srv.SetSimulationState.Response.ALREADY_IN_TARGET_STATE, "already in that state")
        elif target == S.STATE_PLAYING:
            self._stopped = False
            self.sim.play()
            response.result = result()
        elif target == S.STATE_PAUSED:
            if now == S.STATE_STOPPED:
                response.result = result(srv.SetSimulationState.Response.INCORRECT_TRANSITION,
                                         "stopped: play first, then pause")
            else:
                self.sim.stop()
                response.result = result()
        elif target == S.STATE_STOPPED:
            self.sim.stop()
            self._reset(si_reset_all=True)
            self._stopped = True
            response.result = result()
        elif target == S.STATE_QUITTING:
            self.sim.stop()
            response.result = result()
            self.node.request_shutdown()
        else:
            response.result = result(R.RESULT_FEATURE_UNSUPPORTED, f"state {target} is not supported")
        return response

    def _steppable(self) -> si.Result | None:
        if self.sim.playing:
            return result(R.RESULT_INCORRECT_STATE, "the simulation is playing: pause it before stepping")
        return None

    def step(self, request: Any, response: Any) -> Any:
        refused = self._steppable()
        if refused is not None:
            response.result = refused
            return response
        with self._step_lock:
            self._stopped = False
            self.sim.step(max(1, int(request.steps)))
        response.result = result()
        return response

    def simulate_steps(self, goal: Any) -> Any:
        total = int(goal.request.steps)
        out = SimulateSteps.Result()
        refused = self._steppable()
        if refused is not None:
            goal.abort()
            out.result = refused
            return out
        feedback = SimulateSteps.Feedback()
        done = 0
        with self._step_lock:
            self._stopped = False
            while done < total:
                if goal.is_cancel_requested:
                    goal.canceled()
                    out.result = result(R.RESULT_OPERATION_FAILED, f"canceled after {done} steps")
                    return out
                n = min(STEP_FEEDBACK_EVERY, total - done)
                self.sim.step(n)
                done += n
                feedback.completed_steps, feedback.remaining_steps = done, total - done
                goal.publish_feedback(feedback)
        goal.succeed()
        out.result = result()
        return out

    def reset(self, request: Any, response: Any) -> Any:
        scope = request.scope
        Q = srv.ResetSimulation.Request
        if scope in (Q.SCOPE_DEFAULT, Q.SCOPE_ALL):
            self._reset(si_reset_all=True)
        else:
            self._reset(time=bool(scope & Q.SCOPE_TIME), state=bool(scope & Q.SCOPE_STATE),
                        spawned=bool(scope & Q.SCOPE_SPAWNED))
        response.result = result()
        return response

    def _reset(self, si_reset_all: bool = False, **scope: bool) -> None:
        if si_reset_all:
            scope = {"time": True, "state": True, "spawned": True}
        self.sim.reset(**scope)
        self.node.on_reset(time=scope.get("time", False))

    # --- entities ---------------------------------------------------------------------------
    def spawn(self, request: Any, response: Any) -> Any:
        response.result, response.entity_name = self._spawn(request)
        return response

    def spawn_many(self, request: Any, response: Any) -> Any:
        for one in request.spawn_requests:
            code, name = self._spawn(one)
            response.results.append(si.SpawnResult(result=code, entity_name=name))
        failed = any(r.result.result != R.RESULT_OK for r in response.results)
        response.result = (result(SpawnEntities.Response.ENTITIES_SPAWN_FAILED, "at least one spawn failed")
                           if failed else result())
        return response

    def _spawn(self, request: Any) -> tuple[si.Result, str]:
        Rs = si.SpawnResult
        res = request.entity_resource
        if not res.uri and not res.resource_string:
            return result(Rs.NO_RESOURCE, "give a catalogue class or URDF in uri, or URDF text in resource_string"), ""
        name = request.name
        if name and not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", name):
            return result(Rs.NAME_INVALID, f"'{name}' is not a valid ROS name component"), ""
        if request.entity_namespace:
            return result(Rs.NAMESPACE_INVALID, "robots live under /<name>; leave entity_namespace empty"), ""
        if name and name in self.sim.entity_names():
            if not request.allow_renaming:
                return result(Rs.NAME_NOT_UNIQUE, f"an entity named '{name}' exists"), ""
            name = self._unique(name)
        frame = request.initial_pose.header.frame_id
        if frame and frame != self.node.world_frame:
            return result(Rs.INVALID_POSE, f"initial_pose must be in '{self.node.world_frame}' (or empty)"), ""
        pose = request.initial_pose.pose
        q = (pose.orientation.x, pose.orientation.y, pose.orientation.z, pose.orientation.w)
        norm = sum(c * c for c in q) ** 0.5
        xyz = (pose.position.x, pose.position.y, pose.position.z)
        if not all(abs(v) < 1e6 for v in (*xyz, *q)) or abs(norm - 1.0) > 1e-3:
            return result(Rs.INVALID_POSE, "the pose has a non-unit quaternion or non-finite values"), ""
        class_name = catalogue_class(res.uri) if res.uri else None
        try:
            if class_name is not None:
                rpy = rotations.euler_from_quaternion(q)
                robot = self.sim.spawn(class_name, name or None, position=xyz, rpy=(0.0, 0.0, rpy[2]))
                self.node.bridge_robot(robot.name)
                return result(), robot.name
            source = res.uri or res.resource_string
            if res.uri and not res.uri.endswith(".urdf") and not res.uri.startswith("file://"):
                return result(Rs.UNSUPPORTED_FORMAT, f"'{res.uri}' is neither a catalogue class "
                                                     f"({', '.join(available_robots())}) nor a .urdf file"), ""
            prop = self.sim.spawn_prop(name or self._unique("prop"), source, xyz, q)
            return result(), prop.name
        except CommandError as exc:
            code = Rs.MISSING_ASSETS if "not found" in str(exc) else Rs.RESOURCE_PARSE_ERROR
            return result(code, str(exc)), ""

    def _unique(self, base: str) -> str:
        names = set(self.sim.entity_names())
        n = 1
        while f"{base}_{n}" in names:
            n += 1
        return f"{base}_{n}"

    @_needs_entity
    def delete(self, request: Any, response: Any) -> Any:
        self.sim.remove(request.entity)
        response.result = result()
        return response

    def _matching(self, filters: Any) -> list[str]:
        try:
            pattern = re.compile(filters.filter) if filters.filter else None
        except re.error as exc:
            raise CommandError(f"bad filter regular expression: {exc}") from None
        wanted = {c.category for c in filters.categories}
        out = []
        for name in self.sim.entity_names():
            if pattern is not None and not pattern.search(name):
                continue
            if wanted and self._category(name) not in wanted:
                continue
            out.append(name)
        return out

    def _category(self, name: str) -> int:
        return si.EntityCategory.CATEGORY_ROBOT if name in self.sim.robots else si.EntityCategory.CATEGORY_OBJECT

    def get_entities(self, request: Any, response: Any) -> Any:
        try:
            response.entities = self._matching(request.filters)
            response.result = result()
        except CommandError as exc:
            response.result = result(R.RESULT_OPERATION_FAILED, str(exc))
        return response

    def get_entities_states(self, request: Any, response: Any) -> Any:
        try:
            names = self._matching(request.filters)
        except CommandError as exc:
            response.result = result(R.RESULT_OPERATION_FAILED, str(exc))
            return response
        with self.sim._lock:  # one consistent snapshot
            response.entities = names
            response.states = [self._entity_state(n) for n in names]
        response.result = result()
        return response

    def _entity_state(self, name: str) -> si.EntityState:
        position, orientation, linear, angular = self.sim.entity_state(name)
        state = si.EntityState()
        set_header(state, self.sim.time, self.node.world_frame)
        p, o = state.pose.position, state.pose.orientation
        p.x, p.y, p.z = (float(v) for v in position)
        o.x, o.y, o.z, o.w = (float(v) for v in orientation)
        t = state.twist
        t.linear.x, t.linear.y, t.linear.z = (float(v) for v in linear)
        t.angular.x, t.angular.y, t.angular.z = (float(v) for v in angular)
        return state

    @_needs_entity
    def get_entity_state(self, request: Any, response: Any) -> Any:
        response.state = self._entity_state(request.entity)
        response.result = result()
        return response

    @_needs_entity
    def set_entity_state(self, request: Any, response: Any) -> Any:
        state = request.state
        frame = state.header.frame_id
        if frame and frame != self.node.world_frame:
            response.result = result(R.RESULT_OPERATION_FAILED, f"state must be in '{self.node.world_frame}' (or empty)")
            return response
        if request.set_acceleration:
            response.result = result(R.RESULT_FEATURE_UNSUPPORTED, "accelerations cannot be set")
            return response
        pose, twist = state.pose, state.twist
        q = (pose.orientation.x, pose.orientation.y, pose.orientation.z, pose.orientation.w)
        if request.set_pose and abs(sum(c * c for c in q) ** 0.5 - 1.0) > 1e-3:
            response.result = result(srv.SetEntityState.Response.INVALID_POSE, "the orientation is not a unit quaternion")
            return response
        self.sim.set_state(
            request.entity,
            position=(pose.position.x, pose.position.y, pose.position.z) if request.set_pose else None,
            orientation=q if request.set_pose else None,
            linear=(twist.linear.x, twist.linear.y, twist.linear.z) if request.set_twist else None,
            angular=(twist.angular.x, twist.angular.y, twist.angular.z) if request.set_twist else None)
        response.result = result()
        return response

    @_needs_entity
    def get_entity_info(self, request: Any, response: Any) -> Any:
        name = request.entity
        response.info.category.category = self._category(name)
        if name in self.sim.robots:
            spec = self.sim.robots[name].spec
            response.info.description = f"{spec.class_name} robot"
            response.info.tags = [spec.class_name, spec.drive.type]
        else:
            response.info.description = f"passive body from {self.sim.props[name].source}"
        response.result = result()
        return response

    @_needs_entity
    def get_entity_bounds(self, request: Any, response: Any) -> Any:
        with self.sim._lock:
            lo, hi = body_bounds(self.sim.client, self.sim.body_id(request.entity))
        response.bounds.type = si.Bounds.TYPE_BOX
        response.bounds.points = [_vector(lo), _vector(hi)]
        response.result = result()
        return response

    def get_named_poses(self, request: Any, response: Any) -> Any:
        for start in self.sim.spec.start_poses:
            pose = si.NamedPose(name=start.tag, description=f"start pose {start.tag} of {self.sim.spec.name}")
            pose.tags = ["start"]
            pose.pose.position.x, pose.pose.position.y, pose.pose.position.z = (float(v) for v in start.xyz)
            q = rotations.quaternion_from_euler(start.rpy)
            o = pose.pose.orientation
            o.x, o.y, o.z, o.w = (float(v) for v in q)
            if _tags_match(pose.tags, request.tags):
                response.poses.append(pose)
        response.result = result()
        return response

    def get_spawnables(self, request: Any, response: Any) -> Any:
        for name in available_robots():
            item = si.Spawnable(description=f"{name} from the usarsim robot catalogue")
            item.entity_resource.uri = name
            response.spawnables.append(item)
        response.result = result()
        return response

    def _world_resource(self, name: str) -> si.WorldResource:
        world = si.WorldResource(name=name)
        world.world_resource.uri = str(worlds_dir() / f"{name}.yaml")
        return world

    def get_current_world(self, request: Any, response: Any) -> Any:
        spec = self.sim.spec
        response.world = si.WorldResource(name=spec.name, description=spec.description)
        source = getattr(spec, "source", None)
        response.world.world_resource.uri = str(source) if source else str(Path(worlds_dir() / f"{spec.name}.yaml"))
        response.result = result()
        return response

    def get_available_worlds(self, request: Any, response: Any) -> Any:
        response.worlds = [self._world_resource(name) for name in available_worlds()]
        response.result = result()
        return response


def _vector(v: Any) -> Vector3:
    return Vector3(x=float(v[0]), y=float(v[1]), z=float(v[2]))


def _tags_match(tags: list[str], wanted: Any) -> bool:
    if not wanted.tags:
        return True
    hits = [t in tags for t in wanted.tags]
    return all(hits) if wanted.filter_mode == si.TagsFilter.FILTER_MODE_ALL else any(hits)
