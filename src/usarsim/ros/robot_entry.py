"""The bridge's ``robots`` parameter entries: 'Class', 'name:Class' or 'name:Class:start' (pure, no ROS)."""
from __future__ import annotations

import math
from dataclasses import dataclass

from usarsim.config_loading import ConfigError


@dataclass
class RobotEntry:
    """One element of the ``robots`` parameter."""

    name: str | None
    class_name: str
    start: str | None = None
    position: tuple[float, float, float] | None = None
    yaw: float | None = None


def parse_robot_entry(text: str) -> RobotEntry:
    """Parse 'Class', 'name:Class' or 'name:Class:start' (start: pose name or 'x,y[,z[,yaw]]')."""
    parts = [p.strip() for p in text.split(":")]
    if not parts[0] or len(parts) > 3:
        raise ConfigError(f"bad robots entry {text!r}: expected 'Class', 'name:Class' or 'name:Class:start'")
    if len(parts) == 1:
        return RobotEntry(None, parts[0])
    name, class_name = parts[0], parts[1]
    if not class_name:
        raise ConfigError(f"bad robots entry {text!r}: no robot class")
    start = parts[2] if len(parts) == 3 and parts[2] else None
    if start is None:
        return RobotEntry(name, class_name)
    try:
        numbers = [float(v) for v in start.split(",")]
    except ValueError:
        return RobotEntry(name, class_name, start=start)
    if not 2 <= len(numbers) <= 4 or not all(math.isfinite(v) for v in numbers):
        raise ConfigError(f"bad start {start!r}: expected a pose name or 'x,y[,z[,yaw]]'")
    xyz = (numbers[0], numbers[1], numbers[2] if len(numbers) > 2 else 0.0)
    return RobotEntry(name, class_name, position=xyz, yaw=numbers[3] if len(numbers) > 3 else None)
