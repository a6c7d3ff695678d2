"""A robot's path trace (the protocol's TRACE): points of its trail at a fixed interval.

USARSim drew the trail in the Unreal viewport; here each point is a ``TracePoint``
reading (ROS Marker on ``/<robot>/trace``, a record in ``usarsim run``/``record``
output) and the robot keeps the whole trail in ``points``.
"""
from __future__ import annotations

import math

from usarsim.sim.commands import SetTrace
from usarsim.sim.readings import TracePoint, Vec3

MIN_STEP = 0.01  # m: with Interval 0 a point is dropped whenever the robot has moved this far
# How each of the protocol's TRACE colours is drawn (RViz markers, the live view).
TRACE_RGB: dict[str, tuple[float, float, float]] = {
    "Red": (1.0, 0.0, 0.0), "Yellow": (1.0, 1.0, 0.0), "Green": (0.0, 1.0, 0.0), "Cyan": (0.0, 1.0, 1.0),
    "White": (1.0, 1.0, 1.0), "Blue": (0.0, 0.0, 1.0), "Purple": (0.6, 0.0, 0.8)}


class PathTrace:
    """Trace settings and the trail so far (off until a TRACE turns it on)."""

    def __init__(self) -> None:
        self.on = False
        self.interval = 0.0  # s; 0: as often as the robot moves MIN_STEP
        self.color = "Red"
        self.points: list[Vec3] = []
        self._next_due = 0.0

    def apply(self, cmd: SetTrace, now: float) -> None:
        """Change the settings; turning the trace on drops a point at once."""
        if cmd.interval is not None:
            self.interval = float(cmd.interval)
        if cmd.color is not None:
            self.color = cmd.color
        if cmd.on is not None:
            if cmd.on and not self.on:
                self._next_due = now
            self.on = cmd.on
        elif cmd.interval is not None or cmd.color is not None:
            self.on = True  # a TRACE that only sets the interval or colour means "trace"

    def sample(self, now: float, robot: str, position: Vec3) -> TracePoint | None:
        """The point due now, if any (appended to ``points``)."""
        if not self.on or now + 1e-9 < self._next_due:
            return None
        self._next_due = now + self.interval
        if self.points and (self.interval == 0.0 and math.dist(self.points[-1], position) < MIN_STEP):
            return None
        self.points.append(position)
        return TracePoint(time=now, robot=robot, sensor="Trace", frame="map", position=position,
                          color=self.color, index=len(self.points) - 1)
