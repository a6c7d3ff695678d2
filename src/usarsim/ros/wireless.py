"""The ROS 2 side of the wireless model: links per robot, a relay that drops like the radio, markers.

Per robot ``r`` (docs/wireless.md):

- ``/r/wireless/links`` (usarsim_interfaces/WirelessLinks): the signal to every other robot
  and ComStation at each link-state update (1 Hz of sim time by default);
- ``/r/wireless/send`` (usarsim_interfaces/WirelessMessage, in): a message for
  ``destination``; it is published on ``/<destination>/wireless/receive`` only while the
  latest link table says ``r`` reaches it (directly or through ComStations), else dropped;
- ``/r/wireless/receive`` (out): what other robots sent to ``r``;

and ``/wireless/markers`` (visualization_msgs/MarkerArray): a line per pair of radios,
green at full signal through yellow to red at the cut-off, grey when below it, and a cube
per ComStation. :func:`link_messages` and :func:`link_markers` are pure so that
``usarsim record`` writes the same messages into bags.
"""
from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Iterable

from geometry_msgs.msg import Point
from rclpy.qos import QoSProfile, ReliabilityPolicy
from std_msgs.msg import ColorRGBA
from visualization_msgs.msg import Marker, MarkerArray

from usarsim.config_loading import ConfigError
from usarsim.ros.stamps import set_header
from usarsim.sim.wireless.network import ROBOT, STATION, LinkTable

try:
    from usarsim_interfaces.msg import WirelessLink, WirelessLinks, WirelessMessage
except ImportError:  # not built: scripts/build_ros_interfaces.sh, or colcon build in a workspace
    WirelessLink = WirelessLinks = WirelessMessage = None  # type: ignore[assignment,misc]

if TYPE_CHECKING:
    from rclpy.node import Node

    from usarsim.sim.simulator import Simulator

HAVE_INTERFACES = WirelessLinks is not None
MARKER_TOPIC = "/wireless/markers"
LINE_WIDTH = 0.04  # m
STATION_SIZE = 0.3  # m
DOWN_COLOR = (0.5, 0.5, 0.5, 0.25)
QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)  # relayed messages are not sensor data


def topic(robot: str, leaf: str, relative: bool = False) -> str:
    """``/<robot>/wireless/<leaf>``, or ``<robot>/wireless/<leaf>`` relative to the node's namespace
    (what the bridge uses, like the robots' other topics)."""
    name = f"{robot}/wireless/{leaf}"
    return name if relative else f"/{name}"


def signal_color(signal: float, cutoff: float, strongest: float) -> tuple[float, float, float, float]:
    """Green at ``strongest`` dBm, yellow half way, red at the cut-off; grey below it."""
    if signal < cutoff:
        return DOWN_COLOR
    t = min(1.0, max(0.0, (signal - cutoff) / max(strongest - cutoff, 1e-9)))
    return (min(1.0, 2.0 * (1.0 - t)), min(1.0, 2.0 * t), 0.0, 1.0)


def link_messages(table: LinkTable, frame: str, relative: bool = False) -> list[tuple[str, Any]]:
    """(topic, WirelessLinks) for every robot of ``table``."""
    out = []
    for i, name in enumerate(table.names):
        if table.kinds[i] != ROBOT:
            continue
        msg = WirelessLinks(robot=name, cutoff_dbm=float(table.cutoff))
        set_header(msg, table.time, frame)
        for peer, kind, signal, walls, distance in table.peers(name):
            route = table.route(name, peer)
            msg.links.append(WirelessLink(peer=peer, peer_is_station=kind == STATION, signal_dbm=signal, walls=walls,
                                          distance=distance, direct=signal >= table.cutoff,
                                          connected=route is not None, route=list(route or ())))
        out.append((topic(name, "links", relative), msg))
    return out


def link_markers(table: LinkTable, frame: str, strongest: float) -> MarkerArray:
    """One LINE_LIST of every pair coloured by signal, one CUBE_LIST of the ComStations."""
    lines = _marker(table.time, frame, "wireless/links", Marker.LINE_LIST, LINE_WIDTH)
    n = len(table.names)
    for i in range(n):
        for j in range(i + 1, n):
            r, g, b, a = signal_color(float(table.signal[i, j]), table.cutoff, strongest)
            color = ColorRGBA(r=r, g=g, b=b, a=a)
            lines.points += [_point(table.positions[i]), _point(table.positions[j])]
            lines.colors += [color, color]
    stations = _marker(table.time, frame, "wireless/stations", Marker.CUBE_LIST, STATION_SIZE)
    stations.color.r, stations.color.g, stations.color.b, stations.color.a = 0.2, 0.4, 1.0, 1.0
    stations.points = [_point(table.positions[i]) for i in range(n) if table.kinds[i] == STATION]
    return MarkerArray(markers=[lines, stations])


def _marker(t: float, frame: str, ns: str, kind: int, scale: float) -> Marker:
    m = Marker()
    set_header(m, t, frame)
    m.ns, m.id, m.type, m.action = ns, 0, kind, Marker.ADD
    m.pose.orientation.w = 1.0
    m.scale.x = m.scale.y = m.scale.z = scale
    m.color.a = 1.0
    return m


def _point(xyz: Iterable[float]) -> Point:
    x, y, z = (float(c) for c in xyz)
    return Point(x=x, y=y, z=z)


def parse_station(text: str) -> tuple[str, tuple[float, float, float]]:
    """'name:x,y[,z]' (core frame, metres; z the ground under it) -> (name, position)."""
    name, _, where = text.partition(":")
    try:
        values = [float(v) for v in where.split(",")]
    except ValueError:
        values = []
    if not name or len(values) not in (2, 3):
        raise ConfigError(f"bad wireless station {text!r}: expected 'name:x,y' or 'name:x,y,z'")
    return name, (values[0], values[1], values[2] if len(values) == 3 else 0.0)


def _stations_parameter(node: "Node") -> list[tuple[str, tuple[float, float, float]]]:
    """The ``wireless.stations`` parameter: ComStations to place, 'name:x,y[,z]' each."""
    from rcl_interfaces.msg import ParameterDescriptor
    from rclpy.exceptions import ParameterUninitializedException
    from rclpy.parameter import Parameter

    node.declare_parameter("wireless.stations", Parameter.Type.STRING_ARRAY, ParameterDescriptor(
        description="ComStations (wireless relays) to place, 'name:x,y' or 'name:x,y,z' in the world frame (m)"))
    try:
        texts = node.get_parameter("wireless.stations").value
    except ParameterUninitializedException:
        return []
    return [parse_station(text) for text in texts]


class WirelessBridge:
    """Publishes links and markers at every link update and relays messages between robots."""

    def __init__(self, node: "Node", sim: "Simulator", frame: str) -> None:
        self.node = node
        self.sim = sim
        self.frame = frame
        self.delivered = 0
        self.dropped = 0
        self._lock = threading.Lock()
        self._pubs: dict[str, Any] = {}
        self._subscribed: dict[str, Any] = {}  # robot -> its send subscription
        self._markers = node.create_publisher(MarkerArray, MARKER_TOPIC, QOS)
        for name, position in _stations_parameter(node):
            sim.add_station(name, position)
        sim.wireless.add_listener(self._on_table)
        table = sim.wireless.table
        if table.names:
            self._on_table(table)

    def close(self) -> None:
        """Stop publishing (the simulator may go on)."""
        self.sim.wireless.remove_listener(self._on_table)

    def _publisher(self, name: str, msg_type: type) -> Any:
        with self._lock:
            pub = self._pubs.get(name)
            if pub is None:
                pub = self._pubs[name] = self.node.create_publisher(msg_type, name, QOS)
            return pub

    def _on_table(self, table: LinkTable) -> None:
        """Simulator thread: publish the new links and markers; subscribe to new robots' send topics."""
        robots = {name for name, kind in zip(table.names, table.kinds) if kind == ROBOT}
        for name in robots - self._subscribed.keys():
            self._subscribed[name] = self.node.create_subscription(
                WirelessMessage, topic(name, "send", relative=True),
                lambda msg, sender=name: self._relay(sender, msg), QOS)
        for name in self._subscribed.keys() - robots:
            self._forget(name)
        for name, msg in link_messages(table, self.frame, relative=True):
            self._publisher(name, WirelessLinks).publish(msg)
        self._markers.publish(link_markers(table, self.frame, self.sim.wireless.comm.p_d0))

    def _forget(self, robot: str) -> None:
        """A robot that left the radio leaves the graph too: its send subscription and link topics."""
        self.node.destroy_subscription(self._subscribed.pop(robot))
        with self._lock:
            gone = [t for t in self._pubs if t in (topic(robot, "links", relative=True),
                                                   topic(robot, "receive", relative=True))]
            for name in gone:
                self.node.destroy_publisher(self._pubs.pop(name))

    def _relay(self, sender: str, msg: Any) -> None:
        """Executor thread: deliver ``msg`` from ``sender`` if the radio gets it there."""
        table = self.sim.wireless.table
        if not table.reachable(sender, msg.destination):
            self.dropped += 1
            return
        out = WirelessMessage(source=sender, destination=msg.destination, data=msg.data)
        set_header(out, self.sim.time, self.frame)
        self._publisher(topic(msg.destination, "receive", relative=True), WirelessMessage).publish(out)
        self.delivered += 1


__all__ = ["HAVE_INTERFACES", "MARKER_TOPIC", "WirelessBridge", "link_markers", "link_messages", "parse_station",
           "signal_color", "topic"]
