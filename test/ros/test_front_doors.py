"""Front-door conformance: every registered sensor and effecter type has a record on each front door.

A real robot carries one sensor of every registered type; the readings it produces go through
the protocol's table (messages.LINE_FORMS) and the ROS bridge's (convert.ROS_FORMS). A sensor type
added to the core without its front-door entries fails here. Each effecter type is answered by the
protocol (GEO/CONF) and offered by a running usarsim_node as the service or joint-group command
topic its ROS record (ros.effecters.EFFECTER_INTERFACES) names, and a command sent there through ROS
reaches the core: the fingers move (read back on joint_states), the releaser drops its tags.
"""
import dataclasses

import numpy as np
import pytest

pytest.importorskip("sensor_msgs.msg")

from usarsim.protocol import grammar as g  # noqa: E402
from usarsim.protocol import image_wire, messages  # noqa: E402
from usarsim.ros import convert  # noqa: E402
from usarsim.ros.effecters import EFFECTER_INTERFACES, RELEASE_TAG, effecter_endpoint  # noqa: E402
from usarsim.sim import effecters  # noqa: E402
from usarsim.sim.catalogue import Mount, SensorSpec, available_robots, load_robot  # noqa: E402
from usarsim.sim.noise import sensor_rng  # noqa: E402
from usarsim.sim.sensors import registry  # noqa: E402
from usarsim.sim.simulator import Simulator  # noqa: E402

# parameters a family needs on this robot, or that keep the test quick
PARAMS = {
    "Camera": {"width": 32, "height": 24, "always_on": True},
    "OmniCamera": {"width": 32, "height": 32, "always_on": True},
    "Encoder": {"joint": "left_front_wheel_joint"},
    "RangeScanner3D": {"horizontal_step": 0.1, "vertical_step": 0.1},
    "RangeImager": {"horizontal_step": 0.1, "vertical_step": 0.1},
}


@pytest.fixture(scope="module")
def sample():
    """(robot, one reading per registered sensor type) from a RescueP2AT in yellow."""
    with Simulator("yellow", seed=3) as sim:
        robot = sim.spawn("RescueP2AT", "R1", start="Start1")
        added = [SensorSpec(type=t, name=f"X{t}", mount=Mount("base_link", (0.1, 0.0, 0.2)), params=PARAMS.get(t, {}))
                 for t in registry.known_types()]
        for spec in added:
            sensor = registry.create(spec, robot, sim.env, sensor_rng(3, "R1", spec.name))
            sensor.on_spawned(sim.time)
            robot.sensors.append(sensor)
        robot.spec = dataclasses.replace(robot.spec, sensors=robot.spec.sensors + added)
        by_type: dict[str, object] = {}
        kinds = {s.name: s.type_name for s in robot.sensors}
        for reading in sim.run_for(1.2):
            sensor_type = kinds.get(reading.sensor)
            if reading.sensor.startswith("X") and sensor_type not in by_type:
                by_type[sensor_type] = reading
        yield robot, by_type


@pytest.mark.parametrize("sensor_type", registry.known_types())
def test_protocol_has_every_sensor_type(sample, sensor_type):
    robot, by_type = sample
    reading = by_type[sensor_type]
    assert isinstance(reading, registry.family(sensor_type).reading_type())
    assert type(reading) in messages.LINE_FORMS, f"no protocol record for {type(reading).__name__}"
    line = messages.format_reading(reading, stamped=True)
    if messages.LINE_FORMS[type(reading)] is None:  # a camera: frames go through the image server
        frame = np.frombuffer(reading.rgb, dtype=np.uint8).reshape(reading.height, reading.width, 3)
        from PIL import Image
        _, picture = image_wire.decode_frame(image_wire.encode_frame(Image.fromarray(frame), image_wire.Encoding(image_wire.RAW)))
        assert picture.size == (reading.width, reading.height)
    else:
        message = g.parse_message(line)
        assert message.type == "SEN"
        assert reading.sensor in [v for n, v in message.pairs if n == "Name"]
        assert float(message.get("Time")) == pytest.approx(reading.time, abs=0.01)
    geo = g.parse_message(messages.geo_reply(robot, sensor_type))
    assert reading.sensor in [v for n, v in geo.pairs if n == "Name"], geo
    conf = g.parse_message(messages.conf_reply(robot, sensor_type))  # CONF describes the type, not each sensor
    assert conf.type == "CONF" and conf.get("Type") == sensor_type and len(conf.pairs) > 1


@pytest.mark.parametrize("sensor_type", registry.known_types())
def test_ros_has_every_sensor_type(sample, sensor_type):
    robot, by_type = sample
    reading = by_type[sensor_type]
    assert type(reading) in convert.ROS_FORMS, f"no ROS record for {type(reading).__name__}"
    form = convert.sensor_form(sensor_type)
    names = convert.RobotNames.for_spec(robot.name, robot.spec)
    pairs = [(t, m) for t, m in form.convert(reading, names) if t not in (convert.TF_TOPIC, convert.TF_STATIC_TOPIC)]
    declared = form.topics(names, sensor_type, reading.sensor)
    if form.covered_by:
        assert pairs == [] and declared == []
        assert names.topic(form.covered_by) in [t for t, _ in convert.expected_topics(robot.spec, names)]
        return
    assert declared, f"{sensor_type}: no topics declared"
    emitted = [(t, type(m)) for t, m in pairs]
    assert emitted and set(emitted) <= set(declared), (emitted, declared)
    # a declared topic the converter does not fill is the node's own (a camera's compressed image)
    assert all(t.endswith("/compressed") for t, _ in set(declared) - set(emitted)), (emitted, declared)
    for declared_pair in declared:
        assert declared_pair in convert.expected_topics(robot.spec, names)
    changed = form.convert(_perturbed(reading), names)
    for (_, msg), (_, other) in zip(pairs, changed):
        if hasattr(msg, "header"):
            assert msg != type(msg)(), f"{type(msg).__name__} left empty"
            assert msg.header.frame_id
            assert msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9 == pytest.approx(reading.time, abs=1e-6)
        else:  # a bare value (Bool, Float32 ...), legitimately zero: it must follow the reading
            assert msg != other, f"{type(msg).__name__} does not carry the reading's values"


def _perturbed(reading):
    """The reading with every plain number and flag changed (names, frame and time kept)."""
    changes = {}
    for f in dataclasses.fields(reading):
        value = getattr(reading, f.name)
        if f.name == "time":
            continue
        if isinstance(value, bool):
            changes[f.name] = not value
        elif isinstance(value, (int, float)):
            changes[f.name] = value + 1
    return dataclasses.replace(reading, **changes)


def _robot_with(effecter_type: str) -> str:
    for name in available_robots():
        if any(e.type == effecter_type for e in load_robot(name).effecters):
            return name
    raise AssertionError(f"no catalogue robot carries a {effecter_type}")


@pytest.mark.parametrize("effecter_type", effecters.known_types())
def test_protocol_has_every_effecter_type(effecter_type):
    with Simulator("empty") as sim:
        robot = sim.spawn(_robot_with(effecter_type), "R1", position=(0.0, 0.0, 0.0))
        name = next(e.name for e in robot.spec.effecters if e.type == effecter_type)
        for reply in (messages.geo_reply(robot, "Effecter", name), messages.conf_reply(robot, "Effecter", name)):
            message = g.parse_message(reply)
            assert name in [v for n, v in message.pairs if n == "Name"], reply


@pytest.fixture(scope="module")
def effecter_bridge(tmp_path_factory):
    """A running usarsim_node with one catalogue robot per registered effecter type: (bridge, type -> robot)."""
    pytest.importorskip("rclpy")
    pytest.importorskip("usarsim_interfaces.srv")
    from bridge_process import BridgeProcess

    classes = sorted({_robot_with(t) for t in effecters.known_types()})
    robots = {cls: f"e{i}" for i, cls in enumerate(classes)}
    entries = ",".join(f"'{robots[cls]}:{cls}:Start{i + 1}'" for i, cls in enumerate(classes))
    bridge = BridgeProcess(tmp_path_factory.mktemp("effecters") / "node.log", ["world:=yellow", f"robots:=[{entries}]"])
    try:
        yield bridge, {t: (robots[_robot_with(t)], load_robot(_robot_with(t))) for t in effecters.known_types()}
    finally:
        bridge.close()


@pytest.mark.parametrize("effecter_type", effecters.known_types())
def test_ros_has_every_effecter_type(effecter_bridge, effecter_type):
    assert effecter_type in EFFECTER_INTERFACES, f"no ROS interface for effecter type {effecter_type}"
    bridge, carriers = effecter_bridge
    robot, spec = carriers[effecter_type]
    interface = EFFECTER_INTERFACES[effecter_type]
    for effecter in (e for e in spec.effecters if e.type == effecter_type):
        name = f"/{robot}/{effecter_endpoint(spec, effecter)}"
        if interface.kind == "service":
            offered = bridge.node.get_service_names_and_types
        else:
            assert bridge.wait_for(lambda n=name: bridge.node.count_subscribers(n) > 0), (name, bridge.log_tail())
            offered = bridge.node.get_topic_names_and_types
        assert bridge.wait_for(lambda n=name, o=offered: (n, [interface.ros_type]) in o()), (name, bridge.log_tail())


def _group_of(spec, endpoint: str):
    return next(g for g in spec.joint_groups if endpoint == f"{g.name}/command")


def _drive_group(bridge, robot: str, spec, effecter) -> None:
    """Publish on the effecter's group command topic; its joints follow on joint_states (open, then back)."""
    from bridge_process import qos_for
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    endpoint = effecter_endpoint(spec, effecter)
    links = _group_of(spec, endpoint).links
    states = bridge.listen_once(JointState, f"/{robot}/joint_states", qos_for(JointState, depth=10))
    command = bridge.publisher(Float64MultiArray, f"/{robot}/{endpoint}")

    def at(targets: list[float]) -> bool:
        received = bridge.messages(states)
        positions = dict(zip(received[-1].name, received[-1].position)) if received else {}
        return all(abs(positions.get(link.joint, float("nan")) - v) < 0.03 for link, v in zip(links, targets))

    for targets in ([link.min + 0.4 * (link.max - link.min) for link in links], [link.initial for link in links]):
        assert bridge.wait_for(lambda v=targets: command.publish(Float64MultiArray(data=v)) or at(v)), \
            (effecter.name, targets, bridge.log_tail())


def _release_tags(bridge, robot: str, spec, effecter) -> None:
    """Call release_tag for this releaser twice: two new tags, one fewer left each time."""
    from usarsim_interfaces.srv import ReleaseTag

    first, second = (bridge.call(ReleaseTag, f"/{robot}/{RELEASE_TAG}", ReleaseTag.Request(releaser=effecter.name))
                     for _ in range(2))
    assert first.success and second.success, (first.message, second.message)
    assert second.tags_remaining == first.tags_remaining - 1 and second.tag_id != first.tag_id


# How a command through each kind of ROS interface is shown to reach the core; an effecter type
# on a new service needs its check here.
ROS_EFFECTS = {"group_command": _drive_group, f"service {RELEASE_TAG}": _release_tags}


@pytest.mark.parametrize("effecter_type", effecters.known_types())
def test_ros_commands_reach_every_effecter_type(effecter_bridge, effecter_type):
    bridge, carriers = effecter_bridge
    robot, spec = carriers[effecter_type]
    interface = EFFECTER_INTERFACES[effecter_type]
    way = interface.kind if interface.kind == "group_command" else f"service {interface.service}"
    assert way in ROS_EFFECTS, f"no check that {effecter_type} commands through ROS ({way}) reach the core"
    for effecter in (e for e in spec.effecters if e.type == effecter_type):
        ROS_EFFECTS[way](bridge, robot, spec, effecter)
