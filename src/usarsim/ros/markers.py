"""RViz markers for detections ROS has no message for: victim parts and RFID tags.

Each reading becomes one visualization_msgs/MarkerArray in the sensor's frame: a DELETEALL
first (so parts no longer seen disappear), then a sphere and a text label per detection.
The full detail (victim ids, tag memory, signal) stays on the JSON topic beside it.
"""
from __future__ import annotations

from typing import Sequence

from visualization_msgs.msg import Marker, MarkerArray

from usarsim.ros.stamps import set_header
from usarsim.sim import readings as rd

VICTIM_COLOR = (1.0, 0.25, 0.2, 0.9)
TAG_COLOR = (0.2, 0.5, 1.0, 0.9)
SPHERE_DIAMETER = 0.08  # m
LABEL_HEIGHT = 0.06  # m, text size
LIFETIME_S = 2.0  # a marker outlives a stalled stream by at most this long


def _marker(kind: int, t: float, frame: str, ns: str, index: int, position: Sequence[float],
            color: tuple[float, float, float, float]) -> Marker:
    m = Marker()
    set_header(m, t, frame)
    m.ns, m.id, m.type, m.action = ns, index, kind, Marker.ADD
    m.pose.position.x, m.pose.position.y, m.pose.position.z = (float(v) for v in position)
    m.pose.orientation.w = 1.0
    m.color.r, m.color.g, m.color.b, m.color.a = color
    m.lifetime.sec = int(LIFETIME_S)
    return m


def _detections(t: float, frame: str, ns: str, found: Sequence[tuple[Sequence[float], str]],
                color: tuple[float, float, float, float]) -> MarkerArray:
    clear = Marker(action=Marker.DELETEALL)
    set_header(clear, t, frame)
    markers = [clear]
    for i, (position, label) in enumerate(found):
        sphere = _marker(Marker.SPHERE, t, frame, ns, 2 * i, position, color)
        sphere.scale.x = sphere.scale.y = sphere.scale.z = SPHERE_DIAMETER
        text = _marker(Marker.TEXT_VIEW_FACING, t, frame, ns, 2 * i + 1,
                       (position[0], position[1], position[2] + SPHERE_DIAMETER), color)
        text.scale.z = LABEL_HEIGHT
        text.text = label
        markers += [sphere, text]
    return MarkerArray(markers=markers)


def victim_markers(r: rd.VictimReading, frame: str) -> MarkerArray:
    """One sphere per body part hit, labelled ``<victim>/<part>``."""
    return _detections(r.time, frame, f"{r.sensor}/victims",
                       [(p.position, f"{p.victim_id}/{p.part}") for p in r.parts], VICTIM_COLOR)


def rfid_markers(r: rd.RfidReading, frame: str) -> MarkerArray:
    """One sphere per tag read, labelled ``tag <id>``."""
    return _detections(r.time, frame, f"{r.sensor}/tags",
                       [(tag.position, f"tag {tag.tag_id}") for tag in r.tags], TAG_COLOR)
