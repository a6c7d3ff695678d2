"""NIST-style arena generator (``usarsim arena``): rooms, doorways, ramps, step fields, rubble,
victims, RFID tags and start poses, with a P2AT path from every start to every victim.

The floor plan is a binary space partition: each split puts a wall with one doorway between
the two halves, so the rooms form a tree and every room is reachable; later walls keep clear
of earlier doorways. Features go inside rooms, away from the walls, without overlapping.
The generator then builds the arena, takes its occupancy map (sim/mapgen.py, the same rule
as ``usarsim map``), grows the obstacles by a P2AT's half-size and checks that every victim
is reachable from every start; an arena that fails is drawn again from the next attempt of
the same seed. Same seed, size and difficulty: the same file.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import yaml
from scipy import ndimage

from usarsim.config_loading import ConfigError
from usarsim.whole_file import write_text_whole

Difficulty = Literal["yellow", "orange", "red"]
DIFFICULTIES: tuple[str, ...] = ("yellow", "orange", "red")

WALL_T, WALL_H = 0.1, 1.2  # m
DOOR = 1.0  # m doorway width
MIN_ROOM = 3.0  # m: no room side shorter
KEEP_OFF_WALL = 0.6  # m between a feature and any wall (keeps doorways and corridors open)
P2AT_CLEARANCE = 0.3  # m: obstacles grown by this for the path check (half a P2AT's diagonal, about)
CHECK_RESOLUTION = 0.1  # m per cell of the path check
MAX_ATTEMPTS = 20
MAX_SIDE = 200.0  # m: rooms and the path check grow with the area; a competition arena is 10-40 m
RAMP_H = 0.32  # m, platform height reached by a 15 degree ramp
RAMP_L = RAMP_H / math.tan(math.radians(15.0))

# features per room, by difficulty: (ramp chance, step field chance, rubble pieces, debris pieces)
_MIX = {"yellow": (0.35, 0.0, 0, 2), "orange": (0.3, 0.3, 1, 5), "red": (0.15, 0.5, 3, 8)}
WALL_COLOR = {"yellow": [0.85, 0.8, 0.4, 1.0], "orange": [0.9, 0.55, 0.25, 1.0], "red": [0.75, 0.3, 0.25, 1.0]}


@dataclass
class Rect:
    """Axis-aligned rectangle (x0, y0)..(x1, y1) in the arena frame."""

    x0: float
    y0: float
    x1: float
    y1: float

    def grown(self, margin: float) -> "Rect":
        return Rect(self.x0 - margin, self.y0 - margin, self.x1 + margin, self.y1 + margin)

    def overlaps(self, other: "Rect") -> bool:
        return self.x0 < other.x1 and other.x0 < self.x1 and self.y0 < other.y1 and other.y0 < self.y1

    @property
    def size(self) -> tuple[float, float]:
        return self.x1 - self.x0, self.y1 - self.y0


@dataclass
class Plan:
    """What has been placed so far (plain dicts in world-file form) and the footprints taken."""

    static: list[dict[str, Any]] = field(default_factory=list)
    obstacles: list[dict[str, Any]] = field(default_factory=list)
    victims: list[dict[str, Any]] = field(default_factory=list)
    tags: list[dict[str, Any]] = field(default_factory=list)
    starts: list[dict[str, Any]] = field(default_factory=list)
    taken: list[Rect] = field(default_factory=list)

    def claim(self, rect: Rect, margin: float = 0.3) -> bool:
        """Take ``rect`` unless it comes within ``margin`` of something already placed."""
        if any(rect.grown(margin).overlaps(t) for t in self.taken):
            return False
        self.taken.append(rect)
        return True


def _r(value: float) -> float:
    return round(float(value), 3)


def split_rooms(rng: np.random.Generator, area: Rect, doors: list[tuple[str, float, float]] | None = None,
                name_prefix: str = "W") -> tuple[list[Rect], list[dict[str, Any]]]:
    """Rooms of a binary space partition of ``area`` and the inner walls (with doorways) between them.
    ``doors`` lists doorways already in the walls around it, as (axis of the wall: "x" for a wall at
    x = coord running along y, coord, centre along the wall); new walls keep clear of them."""
    rooms: list[Rect] = []
    walls: list[dict[str, Any]] = []
    doors = list(doors or [])

    def blocked(axis: str, coord: float, lo: float, hi: float) -> bool:
        # a new wall must not run into an earlier doorway: keep a doorway's width plus clearance free
        for d_axis, d_coord, d_along in doors:
            if d_axis != axis and abs(d_along - coord) < DOOR / 2 + 0.7 and lo - 0.05 <= d_coord <= hi + 0.05:
                return True
        return False

    def split(rect: Rect, depth: int) -> None:
        sx, sy = rect.size
        along_x = sx >= sy
        side = sx if along_x else sy
        if side < 2 * MIN_ROOM or (depth > 1 and rng.random() < 0.15):
            rooms.append(rect)
            return
        lo, hi = (rect.x0, rect.x1) if along_x else (rect.y0, rect.y1)
        span_lo, span_hi = (rect.y0, rect.y1) if along_x else (rect.x0, rect.x1)
        candidates = [c for c in np.arange(lo + MIN_ROOM, hi - MIN_ROOM + 1e-9, 0.1)
                      if not blocked("x" if along_x else "y", c, span_lo, span_hi)]
        if not candidates:
            rooms.append(rect)
            return
        cut = float(candidates[rng.integers(len(candidates))])
        door = float(rng.uniform(span_lo + 0.4 + DOOR / 2, span_hi - 0.4 - DOOR / 2))
        doors.append(("x" if along_x else "y", cut, door))
        for a, b in ((span_lo, door - DOOR / 2), (door + DOOR / 2, span_hi)):
            length = b - a
            centre = (cut, (a + b) / 2) if along_x else ((a + b) / 2, cut)
            size = (WALL_T, length, WALL_H) if along_x else (length, WALL_T, WALL_H)
            walls.append({"kind": "box", "name": f"{name_prefix}{len(walls) + 1}",
                          "xyz": [_r(centre[0]), _r(centre[1]), WALL_H / 2],
                          "size": [_r(s) for s in size]})
        first, second = ((Rect(rect.x0, rect.y0, cut, rect.y1), Rect(cut, rect.y0, rect.x1, rect.y1)) if along_x
                         else (Rect(rect.x0, rect.y0, rect.x1, cut), Rect(rect.x0, cut, rect.x1, rect.y1)))
        split(first, depth + 1)
        split(second, depth + 1)

    split(area, 0)
    return rooms, walls


def _spot(rng: np.random.Generator, room: Rect, size: tuple[float, float]) -> Rect | None:
    """A random footprint of ``size`` inside ``room``, clear of its walls; None if it does not fit."""
    inner = room.grown(-KEEP_OFF_WALL - WALL_T / 2)
    if inner.size[0] < size[0] or inner.size[1] < size[1]:
        return None
    x0 = rng.uniform(inner.x0, inner.x1 - size[0])
    y0 = rng.uniform(inner.y0, inner.y1 - size[1])
    return Rect(x0, y0, x0 + size[0], y0 + size[1])


def _centre(rect: Rect) -> tuple[float, float]:
    return (rect.x0 + rect.x1) / 2, (rect.y0 + rect.y1) / 2


def add_ramp(plan: Plan, rng: np.random.Generator, room: Rect, index: int) -> None:
    along_x = rng.random() < 0.5
    length, width = 2 * RAMP_L + 1.0, 1.2
    rect = _spot(rng, room, (length, width) if along_x else (width, length))
    if rect is None or not plan.claim(rect, 0.8):
        return
    cx, cy = _centre(rect)
    yaw = 0.0 if along_x else math.pi / 2
    ux, uy = math.cos(yaw), math.sin(yaw)
    off = 0.5 + RAMP_L / 2
    plan.static += [
        {"kind": "ramp", "name": f"ramp{index}_up", "xyz": [_r(cx - ux * off), _r(cy - uy * off), 0.0],
         "size": [_r(RAMP_L), width, RAMP_H], "rpy": [0.0, 0.0, _r(yaw)]},
        {"kind": "box", "name": f"platform{index}", "xyz": [_r(cx), _r(cy), RAMP_H / 2],
         "size": [1.0, width, RAMP_H], "rpy": [0.0, 0.0, _r(yaw)]},
        {"kind": "ramp", "name": f"ramp{index}_down", "xyz": [_r(cx + ux * off), _r(cy + uy * off), 0.0],
         "size": [_r(RAMP_L), width, RAMP_H], "rpy": [0.0, 0.0, _r(yaw + math.pi)]},
    ]


def add_step_field(plan: Plan, rng: np.random.Generator, room: Rect, index: int, seed: int) -> None:
    side = float(rng.choice([1.2, 1.6, 2.0]))
    rect = _spot(rng, room, (side, side))
    if rect is None or not plan.claim(rect, 0.8):
        return
    cx, cy = _centre(rect)
    plan.static.append({"kind": "step_field", "name": f"SF{index}", "xyz": [_r(cx), _r(cy), 0.0],
                        "size": [side, side, 0.3], "cell": 0.1, "seed": seed * 100 + index})


def add_rubble(plan: Plan, rng: np.random.Generator, room: Rect, index: int) -> None:
    """A cement block with a slab leaning on it, as in the red arena's piles."""
    rect = _spot(rng, room, (1.4, 1.4))
    if rect is None or not plan.claim(rect, 0.6):
        return
    cx, cy = _centre(rect)
    yaw = float(rng.uniform(0, math.pi))
    plan.static += [
        {"kind": "box", "name": f"CB{index}", "xyz": [_r(cx), _r(cy), 0.2], "size": [0.8, 0.4, 0.4],
         "rpy": [0.0, 0.0, _r(yaw)], "color": [0.62, 0.62, 0.6, 1.0]},
        {"kind": "box", "name": f"S{index}", "xyz": [_r(cx + 0.3 * math.cos(yaw)), _r(cy + 0.3 * math.sin(yaw)), 0.25],
         "size": [1.2, 0.8, 0.08], "rpy": [0.0, 0.35, _r(yaw)], "color": [0.55, 0.55, 0.53, 1.0]},
    ]


def add_debris(plan: Plan, rng: np.random.Generator, room: Rect, index: int) -> None:
    """Loose paper, bricks and pipes (movable, resting on the floor)."""
    kind = ("paper", "brick", "pipe")[int(rng.integers(3))]
    size = {"paper": (0.3, 0.22, 0.005), "brick": (0.2, 0.1, 0.06), "pipe": (0.08, 0.08, 0.8)}[kind]
    yaw = float(rng.uniform(0, math.pi))
    reach = max(size) if kind != "pipe" else size[2]
    rect = _spot(rng, room, (reach, reach))
    if rect is None or not plan.claim(rect, 0.1):
        return
    cx, cy = _centre(rect)
    if kind == "pipe":
        plan.obstacles.append({"kind": "cylinder", "name": f"pipe{index}", "xyz": [_r(cx), _r(cy), 0.04],
                               "size": list(size), "rpy": [1.5708, 0.0, _r(yaw)], "mass": 2.0})
    else:
        plan.obstacles.append({"kind": "box", "name": f"{kind}{index}", "xyz": [_r(cx), _r(cy), _r(size[2] / 2)],
                               "size": list(size), "rpy": [0.0, 0.0, _r(yaw)],
                               "mass": 0.01 if kind == "paper" else 1.5,
                               "color": [0.92, 0.92, 0.88, 1.0] if kind == "paper" else [0.6, 0.3, 0.2, 1.0]})


def add_victim(plan: Plan, rng: np.random.Generator, room: Rect, index: int) -> bool:
    posture = ("lying", "sitting", "lying")[int(rng.integers(3))]
    rect = _spot(rng, room, (2.2, 1.2) if posture == "lying" else (1.2, 1.2))
    if rect is None or not plan.claim(rect, 0.6):
        return False
    x = rect.x0 + (0.6 if posture == "lying" else 0.5)
    y = (rect.y0 + rect.y1) / 2
    victim: dict[str, Any] = {"id": f"V{index}", "xyz": [_r(x), _r(y), 0.0], "posture": posture}
    if rng.random() < 0.5:
        victim["sound_db"] = 55.0
        victim["segments"] = [{"joint": "shoulder_left", "init": 0.0, "final": 1.0, "rate": 0.7}]
    plan.victims.append(victim)
    return True


def _add_start(plan: Plan, rng: np.random.Generator, room: Rect, index: int) -> bool:
    rect = _spot(rng, room, (1.0, 1.0))
    if rect is None or not plan.claim(rect, 0.5):
        return False
    x, y = _centre(rect)
    plan.starts.append({"tag": f"Start{index}", "xyz": [_r(x), _r(y), 0.0],
                        "rpy": [0.0, 0.0, _r(rng.choice([0.0, math.pi / 2, math.pi, -math.pi / 2]))]})
    return True


def _draw(seed: int, attempt: int, width: float, height: float, difficulty: str) -> dict[str, Any]:
    """One candidate arena as a world-file mapping."""
    rng = np.random.default_rng([seed, attempt, DIFFICULTIES.index(difficulty)])
    rooms, inner_walls = split_rooms(rng, Rect(0.0, 0.0, width, height))
    plan = Plan()
    order = [int(i) for i in rng.permutation(len(rooms))]
    n_starts = min(3, max(1, len(rooms) // 2))
    for k, i in enumerate(order[:n_starts]):
        _add_start(plan, rng, rooms[i], k + 1)
    n_victims = max(1, min(len(rooms) - 1, round(width * height / 40)))
    victim_rooms = order[n_starts:] + order[:n_starts]
    for k, i in enumerate(victim_rooms[:n_victims]):
        add_victim(plan, rng, rooms[i], k + 1)
    ramp_p, field_p, rubble_n, debris_n = _MIX[difficulty]
    for k, room in enumerate(rooms):
        if rng.random() < ramp_p:
            add_ramp(plan, rng, room, k + 1)
        if rng.random() < field_p:
            add_step_field(plan, rng, room, k + 1, seed)
        for j in range(rubble_n if room.size[0] * room.size[1] > 12 else 0):
            add_rubble(plan, rng, room, 10 * (k + 1) + j)
        for j in range(debris_n):
            add_debris(plan, rng, room, 10 * (k + 1) + j)
        cx, cy = _centre(room)
        plan.tags.append({"id": 1001 + k, "xyz": [_r(cx), _r(cy), 0.02]})
    color = WALL_COLOR[difficulty]
    outer = [
        {"kind": "box", "name": "wall_south", "xyz": [-0.05, _r(height / 2), 0.6], "size": [0.1, _r(height + 0.2), 1.2]},
        {"kind": "box", "name": "wall_north", "xyz": [_r(width + 0.05), _r(height / 2), 0.6],
         "size": [0.1, _r(height + 0.2), 1.2]},
        {"kind": "box", "name": "wall_east", "xyz": [_r(width / 2), -0.05, 0.6], "size": [_r(width + 0.2), 0.1, 1.2]},
        {"kind": "box", "name": "wall_west", "xyz": [_r(width / 2), _r(height + 0.05), 0.6],
         "size": [_r(width + 0.2), 0.1, 1.2]},
    ]
    for wall in inner_walls:
        wall["color"] = color
    # tags sit in room centres; drop those a feature covers
    tags = [t for t in plan.tags if not any(Rect(t["xyz"][0], t["xyz"][1], t["xyz"][0], t["xyz"][1]).grown(0.3)
                                            .overlaps(r) for r in plan.taken)]
    return {
        "name": f"arena_{difficulty}_{seed}",
        "description": f"generated {difficulty} arena, seed {seed}, {width:g} x {height:g} m",
        "outdoor": False,
        "gps_origin": {"lat": 39.1347, "lon": -77.2163, "alt": 130.0},
        "floor": {"size": [_r(width + 2), _r(height + 2)], "center": [_r(width / 2), _r(height / 2)]},
        "start_poses": plan.starts,
        "static": outer + inner_walls + plan.static,
        "obstacles": plan.obstacles,
        "victims": plan.victims,
        "rfid_tags": tags,
        "lights": [{"xyz": [_r(width / 2), _r(height / 2), 4.0], "intensity": 1.0}],
    }


def unreachable_victims(path: Path, starts: list[str] | None = None) -> list[str]:
    """Victims of the world file at ``path`` that a P2AT cannot reach from every start pose (or
    from those tagged in ``starts``): the occupancy map's free cells, shrunk by the P2AT's
    clearance, flood-filled; a victim counts as reached within 1 m of its chest."""
    from usarsim.sim import mapgen
    from usarsim.sim.world import load_world_file

    spec = load_world_file(path)
    grid = mapgen.occupancy_map(spec, CHECK_RESOLUTION)
    radius = max(1, int(round(P2AT_CLEARANCE / CHECK_RESOLUTION)))
    free = ndimage.binary_erosion(grid.cells == mapgen.FREE, structure=mapgen.disc(radius), border_value=0)
    labels, _ = ndimage.label(free)
    everyone = [v.id for v in spec.victims if not v.false_alarm]
    poses = [s for s in spec.start_poses if starts is None or s.tag in starts]
    start_labels = {int(labels[grid.cell_of(*pose.xyz[:2])]) for pose in poses}
    if 0 in start_labels or len(start_labels) != 1:
        return everyone  # a start without room to stand, or starts not connected with each other
    (region,) = start_labels
    reach = int(round(1.0 / CHECK_RESOLUTION))
    lost = []
    for victim in spec.victims:
        row, col = grid.cell_of(*victim.xyz[:2])
        window = labels[max(0, row - reach):row + reach + 1, max(0, col - reach):col + reach + 1]
        if not victim.false_alarm and region not in window:
            lost.append(victim.id)
    return lost


def generate(seed: int, width: float, height: float, difficulty: str, out_path: Path,
             name: str = "") -> dict[str, Any]:
    """Write the arena for (seed, size, difficulty) to ``out_path``; returns its contents.
    ``name`` is the world's name (default ``arena_<difficulty>_<seed>``)."""
    if difficulty not in DIFFICULTIES:
        raise ConfigError(f"difficulty must be one of {', '.join(DIFFICULTIES)}, got {difficulty!r}")
    if not (math.isfinite(width) and math.isfinite(height)) or min(width, height) < 2 * MIN_ROOM:
        raise ConfigError(f"arena size must be at least {2 * MIN_ROOM:g} x {2 * MIN_ROOM:g} m, got {width:g} x {height:g}")
    if max(width, height) > MAX_SIDE:
        raise ConfigError(f"arena size must be at most {MAX_SIDE:g} m a side, got {width:g} x {height:g} "
                          "(NIST arenas are 10 to 40 m)")
    for attempt in range(MAX_ATTEMPTS):
        world = _draw(seed, attempt, width, height, difficulty)
        world["name"] = name or world["name"]
        if not world["start_poses"] or not world["victims"]:
            continue
        _write(world, out_path, seed, attempt)
        if not unreachable_victims(out_path):
            return world
    out_path.unlink(missing_ok=True)
    raise ConfigError(f"no arena with a P2AT path to every victim after {MAX_ATTEMPTS} attempts "
                      f"(seed {seed}, {width:g} x {height:g} m): try a larger size")


def _write(world: dict[str, Any], path: Path, seed: int, attempt: int) -> None:
    header = (f"# Generated by `usarsim arena --seed {seed}` (attempt {attempt}): a NIST-style arena whose\n"
              "# every victim a P2AT can reach from every start pose (checked on its occupancy map).\n")
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_whole(path, header + yaml.safe_dump(world, sort_keys=False, default_flow_style=None, width=110))


__all__ = ["DIFFICULTIES", "generate", "unreachable_victims"]
