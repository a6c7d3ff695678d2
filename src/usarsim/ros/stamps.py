"""Sim time in ROS headers (shared by every message builder)."""
from __future__ import annotations

from typing import Any

from builtin_interfaces.msg import Time


def stamp(t: float) -> Time:
    """builtin_interfaces/Time from seconds."""
    ns = int(round(t * 1e9))
    return Time(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)


def set_header(msg: Any, t: float, frame_id: str = "") -> None:
    """Stamp ``msg.header`` with sim time ``t`` in place (cheaper than building a new Time per message)."""
    ns = int(round(t * 1e9))
    header = msg.header
    header.stamp.sec, header.stamp.nanosec = ns // 1_000_000_000, ns % 1_000_000_000
    if frame_id:
        header.frame_id = frame_id
