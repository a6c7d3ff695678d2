"""Every simulation_interfaces and usarsim_interfaces service (and the SimulateSteps action) called from a
second node, against ``usarsim_node`` in its own process, and checked by what it changes in the simulation."""
import math

import pytest

rclpy = pytest.importorskip("rclpy")
si = pytest.importorskip("simulation_interfaces.msg")
pytest.importorskip("usarsim_interfaces.srv")

from rclpy.qos import QoSProfile, ReliabilityPolicy  # noqa: E402
from simulation_interfaces import srv  # noqa: E402
from simulation_interfaces.action import SimulateSteps  # noqa: E402
from usarsim_interfaces import srv as usrv  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402
from usarsim_interfaces.msg import RfidTagDetections  # noqa: E402

from bridge_process import BridgeProcess  # noqa: E402
from usarsim.ros.node import TF_STATIC_QOS  # noqa: E402
from usarsim.sim.world import load_world  # noqa: E402

ROBOT = "bot"
DT = 1.0 / 200.0
WORLD = load_world("yellow")
TAG = WORLD.rfid_tags[0]  # 1001, on the floor
FLOOR = WORLD.start_poses[0].xyz[2]  # the arena is placed in the world frame: its floor is not at z = 0
BOX_URDF = """<robot name="crate"><link name="crate">
  <inertial><mass value="2"/><inertia ixx="0.05" iyy="0.05" izz="0.05" ixy="0" ixz="0" iyz="0"/></inertial>
  <collision><geometry><box size="0.4 0.4 0.4"/></geometry></collision>
  <visual><geometry><box size="0.4 0.4 0.4"/></geometry></visual></link></robot>"""
OK = si.Result.RESULT_OK


@pytest.fixture(scope="module")
def bridge(tmp_path_factory):
    b = BridgeProcess(tmp_path_factory.mktemp("services") / "node.log",
                      ["world:=yellow", f"robots:=['{ROBOT}:RescueP2AT:Start1']", "rates.camera:=1.0",
                       "frame_prefix:=''"])  # plain frames for the launched robot, as arena.launch.py has
    try:
        yield b
    finally:
        b.close()


def sim_time(bridge, entity=ROBOT):
    state = bridge.call(srv.GetEntityState, "/get_entity_state", srv.GetEntityState.Request(entity=entity)).state
    return state.header.stamp.sec + state.header.stamp.nanosec * 1e-9


def set_state(bridge, target, *, expect=OK):
    req = srv.SetSimulationState.Request()
    req.state.state = target
    res = bridge.call(srv.SetSimulationState, "/set_simulation_state", req)
    assert res.result.result == expect, res.result.error_message
    return res


def current_state(bridge):
    res = bridge.call(srv.GetSimulationState, "/get_simulation_state")
    assert res.result.result == OK
    return res.state.state


def entities(bridge, **filters):
    req = srv.GetEntities.Request()
    for key, value in filters.items():
        setattr(req.filters, key, value)
    res = bridge.call(srv.GetEntities, "/get_entities", req)
    assert res.result.result == OK, res.result.error_message
    return list(res.entities)


def spawn(bridge, name, uri="", text="", xyz=(0.0, 0.0, 0.0)):
    req = srv.SpawnEntity.Request(name=name)
    req.entity_resource.uri, req.entity_resource.resource_string = uri, text
    req.initial_pose.pose.position.x, req.initial_pose.pose.position.y, req.initial_pose.pose.position.z = xyz
    return bridge.call(srv.SpawnEntity, "/spawn_entity", req)


def teleport(bridge, entity, xyz, yaw=0.0):
    req = srv.SetEntityState.Request(entity=entity, set_pose=True)
    p, o = req.state.pose.position, req.state.pose.orientation
    p.x, p.y, p.z = xyz
    o.z, o.w = math.sin(yaw / 2), math.cos(yaw / 2)
    return bridge.call(srv.SetEntityState, "/set_entity_state", req)


def test_features_list_what_is_served(bridge):
    features = bridge.call(srv.GetSimulatorFeatures, "/get_simulator_features").features
    F = si.SimulatorFeatures
    for f in (F.SPAWNING, F.DELETING, F.NAMED_POSES, F.ENTITY_STATE_GETTING, F.ENTITY_STATE_SETTING,
              F.SIMULATION_RESET, F.SIMULATION_STATE_PAUSE, F.STEP_SIMULATION_MULTIPLE, F.STEP_SIMULATION_ACTION):
        assert f in features.features
    assert "urdf" in features.spawn_formats
    assert F.WORLD_LOADING not in features.features  # a world is chosen at start-up only


def test_pause_step_action_and_play(bridge):
    assert current_state(bridge) == si.SimulationState.STATE_PLAYING
    refused = bridge.call(srv.StepSimulation, "/step_simulation", srv.StepSimulation.Request(steps=5))
    assert refused.result.result == si.Result.RESULT_INCORRECT_STATE
    set_state(bridge, si.SimulationState.STATE_PAUSED)
    assert current_state(bridge) == si.SimulationState.STATE_PAUSED
    t0 = sim_time(bridge)
    assert sim_time(bridge) == t0  # paused: time stands still
    res = bridge.call(srv.StepSimulation, "/step_simulation", srv.StepSimulation.Request(steps=10))
    assert res.result.result == OK
    t1 = sim_time(bridge)
    assert t1 - t0 == pytest.approx(10 * DT, abs=1e-9)
    result, feedback = bridge.run_action(SimulateSteps, "/simulate_steps", SimulateSteps.Goal(steps=50))
    assert result.result.result == OK
    assert feedback and feedback[-1].completed_steps == 50 and feedback[-1].remaining_steps == 0
    assert sim_time(bridge) - t1 == pytest.approx(50 * DT, abs=1e-9)
    set_state(bridge, si.SimulationState.STATE_PAUSED, expect=srv.SetSimulationState.Response.ALREADY_IN_TARGET_STATE)
    set_state(bridge, si.SimulationState.STATE_PLAYING)
    assert bridge.wait_for(lambda: sim_time(bridge) > t1 + 0.5)


def test_named_poses_spawnables_and_worlds(bridge):
    poses = bridge.call(srv.GetNamedPoses, "/get_named_poses").poses
    assert [p.name for p in poses] == [s.tag for s in WORLD.start_poses]
    assert poses[0].pose.position.x == pytest.approx(WORLD.start_poses[0].xyz[0])
    spawnables = bridge.call(srv.GetSpawnables, "/get_spawnables").spawnables
    assert "P2AT" in [s.entity_resource.uri for s in spawnables]
    world = bridge.call(srv.GetCurrentWorld, "/get_current_world")
    assert world.result.result == OK and world.world.name == "yellow"
    worlds = bridge.call(srv.GetAvailableWorlds, "/get_available_worlds").worlds
    assert {"yellow", "empty"} <= {w.name for w in worlds}


def test_spawn_robot_and_urdf_then_query_set_and_delete(bridge):
    x0, y0, _ = WORLD.start_poses[0].xyz
    res = spawn(bridge, "second", uri="USARBot.P2AT", xyz=(x0 - 0.5, y0 - 0.9, FLOOR))
    assert res.result.result == OK, res.result.error_message
    assert res.entity_name == "second"
    assert spawn(bridge, "second", uri="P2AT").result.result == si.SpawnResult.NAME_NOT_UNIQUE
    assert spawn(bridge, "x", uri="Nonsense").result.result == si.SpawnResult.UNSUPPORTED_FORMAT
    assert spawn(bridge, "y").result.result == si.SpawnResult.NO_RESOURCE
    crate = spawn(bridge, "crate", text=BOX_URDF, xyz=(x0 - 1.5, y0 - 1.5, FLOOR + 0.5))  # clear floor, no victim
    assert crate.result.result == OK, crate.result.error_message
    # the new robot is bridged like the first: its topics appear, and its frames have a prefix of
    # their own (the launched robot's plain frames are taken), once each on /tf_static
    assert bridge.wait_for(lambda: "/second/odom" in dict(bridge.node.get_topic_names_and_types()))
    statics = bridge.listen_once(TFMessage, "/tf_static", TF_STATIC_QOS)

    def static_children():
        latest = bridge.messages(statics)[-1].transforms if bridge.messages(statics) else []
        return [t.child_frame_id for t in latest]

    assert bridge.wait_for(lambda: any(c.startswith("second/") for c in static_children()))
    children = static_children()
    assert len(children) == len(set(children)), "a fixed transform is on /tf_static twice"
    assert any(not c.startswith("second/") for c in children)  # the launched robot's stay
    assert set(entities(bridge)) == {ROBOT, "second", "crate"}
    robots = entities(bridge, categories=[si.EntityCategory(category=si.EntityCategory.CATEGORY_ROBOT)])
    assert set(robots) == {ROBOT, "second"}
    assert entities(bridge, filter="^cr") == ["crate"]
    info = bridge.call(srv.GetEntityInfo, "/get_entity_info", srv.GetEntityInfo.Request(entity="second")).info
    assert info.category.category == si.EntityCategory.CATEGORY_ROBOT and "P2AT" in info.tags
    bounds = bridge.call(srv.GetEntityBounds, "/get_entity_bounds", srv.GetEntityBounds.Request(entity="crate"))
    lo, hi = bounds.bounds.points
    assert bounds.bounds.type == si.Bounds.TYPE_BOX and hi.x - lo.x == pytest.approx(0.4, abs=0.05)
    assert teleport(bridge, "second", (x0 + 1.5, y0 + 0.1, FLOOR + 0.3)).result.result == OK
    states = bridge.call(srv.GetEntitiesStates, "/get_entities_states", srv.GetEntitiesStates.Request())
    pose = dict(zip(states.entities, states.states))["second"].pose.position
    assert (pose.x, pose.y) == pytest.approx((x0 + 1.5, y0 + 0.1), abs=0.1)
    assert dict(zip(states.entities, states.states))["second"].header.frame_id == "map"
    bad = srv.SetEntityState.Request(entity="second", set_pose=True)
    bad.state.pose.orientation.w = 0.0  # a zero quaternion
    assert bridge.call(srv.SetEntityState, "/set_entity_state", bad).result.result == \
        srv.SetEntityState.Response.INVALID_POSE
    for name in ("crate", "second"):
        gone = bridge.call(srv.DeleteEntity, "/delete_entity", srv.DeleteEntity.Request(entity=name))
        assert gone.result.result == OK
    again = bridge.call(srv.DeleteEntity, "/delete_entity", srv.DeleteEntity.Request(entity="crate"))
    assert again.result.result == si.Result.RESULT_NOT_FOUND
    assert entities(bridge) == [ROBOT]
    # nothing of the deleted robot is left on the graph: publishers, latched description, fixed frames
    assert bridge.wait_for(lambda: not [t for t, _ in bridge.node.get_topic_names_and_types()
                                        if t.startswith("/second/") and bridge.node.get_publishers_info_by_topic(t)])
    assert bridge.wait_for(lambda: static_children() and not any(c.startswith("second/") for c in static_children()))


def test_spawn_entities_and_reset(bridge):
    req = srv.SpawnEntities.Request()
    for name, x in (("a1", 3.0), ("a2", 5.0)):
        one = si.SpawnEntity(name=name)
        one.entity_resource.resource_string = BOX_URDF
        position = one.initial_pose.pose.position
        position.x, position.y, position.z = x, WORLD.start_poses[1].xyz[1], FLOOR + 0.5
        req.spawn_requests.append(one)
    res = bridge.call(srv.SpawnEntities, "/spawn_entities", req)
    assert res.result.result == OK and [r.entity_name for r in res.results] == ["a1", "a2"]
    teleport(bridge, ROBOT, (7.0, WORLD.start_poses[0].xyz[1] + 1.1, FLOOR + 0.3))
    reset = bridge.call(srv.ResetSimulation, "/reset_simulation", srv.ResetSimulation.Request(
        scope=srv.ResetSimulation.Request.SCOPE_ALL))
    assert reset.result.result == OK
    assert entities(bridge) == [ROBOT]
    start = WORLD.start_poses[0].xyz
    state = bridge.call(srv.GetEntityState, "/get_entity_state", srv.GetEntityState.Request(entity=ROBOT)).state
    assert (state.pose.position.x, state.pose.position.y) == pytest.approx(start[:2], abs=0.05)
    set_state(bridge, si.SimulationState.STATE_STOPPED)
    assert current_state(bridge) == si.SimulationState.STATE_STOPPED
    assert sim_time(bridge) < 0.05
    set_state(bridge, si.SimulationState.STATE_PAUSED, expect=srv.SetSimulationState.Response.INCORRECT_TRANSITION)
    set_state(bridge, si.SimulationState.STATE_PLAYING)


def test_rfid_read_write_and_release(bridge):
    reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
    key = bridge.listen(RfidTagDetections, f"/{ROBOT}/rfid/RFID", reliable)
    teleport(bridge, ROBOT, (TAG.xyz[0], TAG.xyz[1], FLOOR + 0.3))
    assert bridge.wait_for(lambda: any(t.id == 1001 for m in bridge.messages(key) for t in m.tags)), \
        "the reader sees the tag it stands on"
    read = usrv.ReadRfidTag.Request(tag_id=1001)
    first = bridge.call(usrv.ReadRfidTag, f"/{ROBOT}/rfid/read", read)
    assert first.success and first.memory == TAG.memory
    write = bridge.call(usrv.WriteRfidTag, f"/{ROBOT}/rfid/write", usrv.WriteRfidTag.Request(tag_id=1001, memory="found_V2"))
    assert write.success, write.message
    assert bridge.call(usrv.ReadRfidTag, f"/{ROBOT}/rfid/read", read).memory == "found_V2"
    spaced = bridge.call(usrv.WriteRfidTag, f"/{ROBOT}/rfid/write", usrv.WriteRfidTag.Request(tag_id=1001, memory="a b"))
    assert not spaced.success and "spaces" in spaced.message
    far = bridge.call(usrv.ReadRfidTag, f"/{ROBOT}/rfid/read", usrv.ReadRfidTag.Request(tag_id=1003))
    assert not far.success and "not in range" in far.message
    released = bridge.call(usrv.ReleaseTag, f"/{ROBOT}/release_tag")
    assert released.success and released.tags_remaining == 9
    assert bridge.wait_for(lambda: any(t.id == released.tag_id for t in bridge.messages(key)[-1].tags)), \
        "the dropped tag is read back"


def test_headlight_flip_odometry_reset_and_scan(bridge):
    assert bridge.call(usrv.SetHeadlight, f"/{ROBOT}/set_headlight", usrv.SetHeadlight.Request(on=True)).success
    x, y, _ = WORLD.start_poses[1].xyz
    req = srv.SetEntityState.Request(entity=ROBOT, set_pose=True)  # upside down
    req.state.pose.position.x, req.state.pose.position.y, req.state.pose.position.z = x, y, FLOOR + 0.6
    req.state.pose.orientation.x, req.state.pose.orientation.w = 1.0, 0.0
    bridge.call(srv.SetEntityState, "/set_entity_state", req)
    assert bridge.call(usrv.Flip, f"/{ROBOT}/flip").success
    o = bridge.call(srv.GetEntityState, "/get_entity_state", srv.GetEntityState.Request(entity=ROBOT)).state.pose.orientation
    assert abs(o.x) < 0.1 and abs(o.y) < 0.1, "upright again"
    reset = bridge.call(usrv.ResetOdometry, f"/{ROBOT}/reset_odometry")
    assert reset.success and "Odometry" in reset.reset
    scan = bridge.call(usrv.Scan, f"/{ROBOT}/scan", usrv.Scan.Request(sensor="Scanner"))
    assert scan.success, scan.message
    unknown = bridge.call(usrv.Scan, f"/{ROBOT}/scan", usrv.Scan.Request(sensor="Nope"))
    assert not unknown.success and "no device" in unknown.message
