"""RViz markers for what ROS has no message for: victim parts, RFID tags, the path trace.

Each reading becomes one visualization_msgs/Marker, a SPHERE_LIST in the sensor's frame
with a point per detection (empty when nothing is detected). RViz replaces the previous
list with the same namespace and id, so detections no longer seen disappear. One marker
per reading keeps the cost at one small message; names, ids, tag memory and signal stay
on the JSON topic beside it.
"""
from __future__ import annotations

from typing import Iterable, Sequence

from geometry_msgs.msg import Point
from visualization_msgs.msg import Marker

from usarsim.ros.stamps import set_header
from usarsim.sim import readings as rd
from usarsim.sim.trace import TRACE_RGB

VICTIM_COLOR = (1.0, 0.25, 0.2, 0.9)
TAG_COLOR = (0.2, 0.5, 1.0, 0.9)
SPHERE_DIAMETER = 0.08  # m
LIFETIME_S = 2  # a list outlives a stalled stream by at most this long


def _sphere_list(t: float, frame: str, ns: str, positions: Iterable[Sequence[float]],
                 color: tuple[float, float, float, float]) -> Marker:
    m = Marker()
    set_header(m, t, frame)
    m.ns, m.id, m.type, m.action = ns, 0, Marker.SPHERE_LIST, Marker.ADD
    m.pose.orientation.w = 1.0
    m.scale.x = m.scale.y = m.scale.z = SPHERE_DIAMETER
    m.color.r, m.color.g, m.color.b, m.color.a = color
    m.lifetime.sec = LIFETIME_S
    m.points = [Point(x=float(x), y=float(y), z=float(z)) for x, y, z in positions]
    return m


def victim_marker(r: rd.VictimReading, frame: str) -> Marker:
    """The body parts the victim sensor hits (false alarms included: the sensor cannot tell)."""
    return _sphere_list(r.time, frame, f"{r.sensor}/victims", (p.position for p in r.parts), VICTIM_COLOR)


def rfid_marker(r: rd.RfidReading, frame: str) -> Marker:
    """The tags the reader reads."""
    return _sphere_list(r.time, frame, f"{r.sensor}/tags", (tag.position for tag in r.tags), TAG_COLOR)


TRACE_DIAMETER = 0.05  # m


def trace_marker(r: rd.TracePoint, frame: str) -> Marker:
    """One point of the path trace (TRACE), kept by RViz: its own id and no lifetime, so the trail builds up."""
    m = _sphere_list(r.time, frame, "trace", [r.position], (*TRACE_RGB[r.color], 1.0))
    m.id, m.type, m.lifetime.sec = r.index, Marker.SPHERE, 0
    m.pose.position.x, m.pose.position.y, m.pose.position.z = (float(c) for c in r.position)
    m.points = []
    m.scale.x = m.scale.y = m.scale.z = TRACE_DIAMETER
    return m
