"""The link table of a running simulation: signal between every pair of radios, and relays.

Radios are the robots (at their chassis centre) and the ComStations (``STATION_HEIGHT``
above the point they stand on). The simulator calls :meth:`WirelessNetwork.update`
from its tick at the world's ``comm.update_rate`` (a radio's RSSI refresh, 1 Hz by
default) and whenever radios come or go; everything else reads the latest immutable
:class:`LinkTable`, from any thread.
"""
from __future__ import annotations

import heapq
import logging
import math
import threading
from dataclasses import dataclass, field
from typing import Callable, Collection, Mapping, Sequence

import numpy as np

from usarsim import rotations
from usarsim.sim.commands import CommandError
from usarsim.sim.listeners import Listeners
from usarsim.sim.water import WaterSpec
from usarsim.sim.wireless.model import EARTH_DB_PER_M, path_loss_dbm, water_loss_db
from usarsim.sim.wireless.walls import obstruction
from usarsim.sim.world import BuiltWorld, CommSpec

log = logging.getLogger(__name__)

ROBOT, STATION = "robot", "station"
# A ComStation stands on the ground at its Location; its antenna is this far above it.
STATION_HEIGHT = 0.3
Vec3 = tuple[float, float, float]
TableListener = Callable[["LinkTable"], None]


@dataclass(frozen=True)
class LinkTable:
    """Signal between every pair of radios at one instant (symmetric matrices, SI units)."""

    time: float
    names: tuple[str, ...]
    kinds: tuple[str, ...]
    positions: np.ndarray  # (N, 3) core frame
    signal: np.ndarray  # (N, N) dBm; the diagonal is +inf
    walls: np.ndarray  # (N, N) weighted wall count
    distance: np.ndarray  # (N, N) m
    cutoff: float
    _routes: dict = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def empty(cls, cutoff: float = -93.0) -> "LinkTable":
        """No radios yet."""
        none = np.zeros((0, 0))
        return cls(0.0, (), (), np.zeros((0, 3)), none, none, none, cutoff)

    def index(self, name: str) -> int | None:
        """Row of radio ``name`` (None when it is not in the table)."""
        try:
            return self.names.index(name)
        except ValueError:
            return None

    def signal_between(self, a: str, b: str) -> float | None:
        """Direct signal a <-> b in dBm (None when either is unknown)."""
        i, j = self.index(a), self.index(b)
        return None if i is None or j is None else float(self.signal[i, j])

    def direct(self, a: str, b: str) -> bool:
        """True when a and b hear each other without a relay."""
        s = self.signal_between(a, b)
        return s is not None and s >= self.cutoff

    def route(self, a: str, b: str) -> tuple[str, ...] | None:
        """Radios a message from a to b passes, a and b included: direct, or relayed by
        ComStations only (fewest hops, then the strongest weakest hop); None when cut off."""
        key = (a, b)
        if key not in self._routes:
            self._routes[key] = self._find_route(a, b)
        return self._routes[key]

    def reachable(self, a: str, b: str) -> bool:
        """True when a message from a gets to b (directly or through stations)."""
        return a != b and self.route(a, b) is not None

    def _find_route(self, a: str, b: str) -> tuple[str, ...] | None:
        src, dst = self.index(a), self.index(b)
        if src is None or dst is None or src == dst:
            return None
        up = self.signal >= self.cutoff
        # Dijkstra on (hops, -weakest hop): extending a path never makes it better
        best: dict[int, tuple[int, float]] = {src: (0, -math.inf)}
        previous: dict[int, int] = {}
        heap = [(0, -math.inf, src)]
        while heap:
            hops, weakest, i = heapq.heappop(heap)
            if (hops, weakest) != best[i]:
                continue  # a better way to i was found meanwhile
            if i == dst:
                break
            if i != src and self.kinds[i] != STATION:
                continue  # only stations relay
            for j in np.flatnonzero(up[i]).tolist():
                cost = (hops + 1, max(weakest, -float(self.signal[i, j])))
                if j != i and (j not in best or cost < best[j]):
                    best[j], previous[j] = cost, i
                    heapq.heappush(heap, (*cost, j))
        if dst not in best:
            return None
        path = [dst]
        while path[-1] != src:
            path.append(previous[path[-1]])
        return tuple(self.names[i] for i in reversed(path))

    def peers(self, name: str) -> list[tuple[str, str, float, float, float]]:
        """(peer, kind, signal dBm, walls, distance m) for every other radio."""
        i = self.index(name)
        if i is None:
            return []
        return [(self.names[j], self.kinds[j], float(self.signal[i, j]), float(self.walls[i, j]),
                 float(self.distance[i, j])) for j in range(len(self.names)) if j != i]


def compute_table(client: int, time: float, radios: Sequence[tuple[str, str, Vec3]],
                  weights: Mapping[int, float], comm: CommSpec, losses: Mapping[int, float] | None = None,
                  water: Sequence[WaterSpec] = ()) -> LinkTable:
    """Cast the N (N - 1) / 2 segments between ``radios`` (name, kind, position) in one batch.

    ``weights``: walls per crossing of a static body; ``losses``: dB per metre inside a bulk body
    (earth); ``water``: the world's water volumes, which absorb by the path length in them."""
    names = tuple(r[0] for r in radios)
    kinds = tuple(r[1] for r in radios)
    positions = np.array([r[2] for r in radios], dtype=float).reshape(-1, 3)
    n = len(names)
    iu, ju = np.triu_indices(n, k=1)
    walls, absorbed = np.zeros((n, n)), np.zeros((n, n))
    if len(iu):
        walls[iu, ju], bulk = obstruction(client, positions[iu], positions[ju], weights, losses or {})
        absorbed[iu, ju] = bulk + water_loss_db(positions[iu], positions[ju], water)
        walls[ju, iu], absorbed[ju, iu] = walls[iu, ju], absorbed[iu, ju]
    distance = np.linalg.norm(positions[:, None, :] - positions[None, :, :], axis=2)
    signal = np.asarray(path_loss_dbm(distance, walls, comm), dtype=float).reshape(n, n) - absorbed
    np.fill_diagonal(signal, np.inf)
    return LinkTable(time, names, kinds, positions, signal, walls, distance, comm.cutoff)


class WirelessNetwork:
    """ComStations and the latest link table of one simulation (owned by the Simulator)."""

    def __init__(self, client: int, world: BuiltWorld, comm: CommSpec) -> None:
        self.client = client
        self.comm = comm
        self.period = 1.0 / comm.update_rate if comm.update_rate > 0 else math.inf
        # the terrain is earth, not a wall: it absorbs by the path length inside it
        static = [body for body in [world.floor_id, *world.static_ids] if body != world.terrain_id]
        self.weights = {body: comm.walls.of(world.surface_of(body)) for body in static}
        self.losses = {} if world.terrain_id is None else {world.terrain_id: EARTH_DB_PER_M}
        self.water = list(world.spec.water)
        self.stations: dict[str, Vec3] = {}
        self.table: LinkTable = LinkTable.empty(comm.cutoff)
        self._next_due = 0.0
        self._robots: tuple[str, ...] = ()  # robots of the current table, in the simulator's order
        self._stations_changed = False
        self._listeners: Listeners[TableListener] = Listeners("wireless listener", log)
        self._lock = threading.Lock()

    # --- stations (called under the simulator's lock) -----------------------------------------
    def add_station(self, name: str, ground: Vec3) -> Vec3:
        """Place a ComStation standing at ``ground``; returns its antenna position."""
        if name in self.stations:
            raise CommandError(f"a ComStation named '{name}' already exists")
        if not all(math.isfinite(c) for c in ground):
            raise CommandError(f"ComStation location must be finite, got {ground}")
        antenna = (float(ground[0]), float(ground[1]), float(ground[2]) + STATION_HEIGHT)
        self.stations[name] = antenna
        self._stations_changed = True
        return antenna

    def station_ground(self, name: str) -> Vec3 | None:
        """Where station ``name`` stands (its Location), None when there is no such station."""
        antenna = self.stations.get(name)
        return None if antenna is None else (antenna[0], antenna[1], antenna[2] - STATION_HEIGHT)

    def remove_station(self, name: str) -> None:
        """Remove a ComStation (no error if it is gone)."""
        if self.stations.pop(name, None) is not None:
            self._stations_changed = True

    # --- updates (simulator thread) -------------------------------------------------------------
    def due(self, now: float, robot_names: Collection[str]) -> bool:
        """True when the table should be recomputed at sim time ``now`` (called every tick: cheap)."""
        if self._stations_changed or tuple(robot_names) != self._robots:
            return True
        return now >= self._next_due and len(self.table.names) >= 2

    def update(self, now: float, robots: Mapping[str, Vec3]) -> LinkTable:
        """Recompute the table for robots at ``robots`` (name -> chassis position) and the stations."""
        radios = [(n, ROBOT, rotations.vec3(pos)) for n, pos in robots.items()]
        radios += [(n, STATION, pos) for n, pos in sorted(self.stations.items())]
        self.table = compute_table(self.client, now, radios, self.weights, self.comm, self.losses, self.water)
        self._robots, self._stations_changed = tuple(robots), False
        while self._next_due <= now:  # fixed cadence on the sim clock, no bursts after a change
            self._next_due += self.period if math.isfinite(self.period) else math.inf
        return self.table

    # --- listeners ------------------------------------------------------------------------------
    def add_listener(self, listener: TableListener) -> None:
        """Call ``listener(table)`` after every update (from the simulator thread)."""
        self._listeners.add(listener)

    def remove_listener(self, listener: TableListener) -> None:
        """Stop calling ``listener``."""
        self._listeners.remove(listener)

    def notify(self, table: LinkTable) -> None:
        """Hand ``table`` to every listener; a failing listener never stops the simulation."""
        self._listeners.call(self._listeners.snapshot(), table)


__all__ = ["LinkTable", "ROBOT", "STATION", "STATION_HEIGHT", "WirelessNetwork", "compute_table"]
