"""What ``/trails`` draws, kept bounded: each live robot's driven path and its TRACE points.

- A path keeps a point every ``TRAIL_STEP`` metres; past ``TRAIL_LIMIT`` points every other
  point is dropped, so a long drive is still drawn whole, at a coarser spacing.
- TRACE points: the newest ``TRACE_LIMIT`` per robot (the oldest go first).
- A robot that is removed loses both; ``keep_only`` says which went, so the viewer can delete them.
"""
from __future__ import annotations

import collections
from typing import Iterable, Sequence

from usarsim.sim.readings import TracePoint

TRAIL_STEP = 0.05  # m between path points
TRAIL_LIMIT = 2000  # path points per robot before the path is thinned to every other point
TRACE_LIMIT = 2000  # TRACE points per robot

Point = tuple[float, float, float]


class TrailStore:
    """Paths and TRACE points per robot name; not thread-safe (the live view holds its lock)."""

    def __init__(self) -> None:
        self._paths: dict[str, list[Point]] = {}
        self._traces: dict[str, collections.deque[TracePoint]] = {}

    def extend(self, robot: str, position: Sequence[float]) -> None:
        """Add ``position`` to the robot's path if it is ``TRAIL_STEP`` from the last point."""
        x, y, z = (float(v) for v in position)
        points = self._paths.setdefault(robot, [])
        if points and (x - points[-1][0]) ** 2 + (y - points[-1][1]) ** 2 < TRAIL_STEP ** 2:
            return
        points.append((x, y, z))
        if len(points) > TRAIL_LIMIT:
            del points[1:-1:2]  # thin out; the first and the newest point stay

    def add_trace(self, point: TracePoint) -> None:
        self._traces.setdefault(point.robot, collections.deque(maxlen=TRACE_LIMIT)).append(point)

    def keep_only(self, robots: Iterable[str]) -> list[str]:
        """Forget the robots not in ``robots``; the names forgotten."""
        live = set(robots)
        gone = sorted((set(self._paths) | set(self._traces)) - live)
        for name in gone:
            self._paths.pop(name, None)
            self._traces.pop(name, None)
        return gone

    def snapshot(self) -> tuple[dict[str, list[Point]], dict[str, list[TracePoint]]]:
        """Copies of the paths and TRACE points, to build messages from outside the lock."""
        return ({name: list(points) for name, points in self._paths.items()},
                {name: list(points) for name, points in self._traces.items()})

    def sizes(self) -> tuple[int, int]:
        """The longest path and the longest TRACE history, in points."""
        return (max(map(len, self._paths.values()), default=0), max(map(len, self._traces.values()), default=0))


__all__ = ["TRACE_LIMIT", "TRAIL_LIMIT", "TRAIL_STEP", "TrailStore"]
