"""What one world file may ask for: counts, sizes and extents, checked before anything is built.

Every limit is far above what a real arena or street world needs (the largest shipped world has
101 static items, 118 obstacles, 10 victims, 6-step stairs and spans 200 m) and far below what
would take the machine minutes or gigabytes: a 277-byte file could otherwise ask for stairs of
10^9 steps. docs/worlds.md ("Limits") lists them; each refusal names the file and the key.
Bounds of a single item (stairs steps, step-field posts, prism corners) live with the item
(sim/world_geometry.py).
"""
from __future__ import annotations

from typing import Any, Iterable

import yaml

from usarsim.config_loading import ConfigError
from usarsim.sim.world_geometry import MAX_PRISM_CORNERS

# entries of each top-level list (10 000 boxes build in about 4 s of CPU; 500 victims in 2 s)
MAX_ENTRIES = {"static": 10_000, "obstacles": 5_000, "victims": 500, "rfid_tags": 10_000, "lights": 64,
               "start_poses": 1_000, "water": 256}
MAX_EXTENT = 10_000.0  # m: any size, and any coordinate of a position, in the world frame
MAX_FALSE_ALARM_PARTS = 32
MAX_PARTS = 200_000  # boxes of stairs and step fields plus prism corners, in the whole world


def check_entry_counts(root: yaml.Node, source: str) -> None:
    """Refuse an over-long top-level list from the parsed file, before a single entry is converted."""
    if not isinstance(root, yaml.MappingNode):
        return
    for key, value in root.value:
        limit = MAX_ENTRIES.get(key.value) if isinstance(key, yaml.ScalarNode) else None
        if limit is None or not isinstance(value, yaml.SequenceNode):
            continue
        if len(value.value) > limit:
            raise ConfigError(f"{source}:{key.start_mark.line + 1}: {key.value}: {len(value.value)} entries, "
                              f"at most {limit} in one world")
        if key.value == "static":
            for index, item in enumerate(value.value):
                _check_corner_count(item, source, index)


def _check_corner_count(item: yaml.Node, source: str, index: int) -> None:
    """A prism's corners, counted in the parsed file: converting 10^6 corners alone takes seconds."""
    fields = {k.value: v for k, v in item.value} if isinstance(item, yaml.MappingNode) else {}
    rings = [fields.get("points")] + list(getattr(fields.get("holes"), "value", None) or [])
    corners = sum(len(ring.value) for ring in rings if isinstance(ring, yaml.SequenceNode))
    if corners > MAX_PRISM_CORNERS:
        raise ConfigError(f"{source}:{item.start_mark.line + 1}: static[{index}]: {corners} corners "
                          f"(points and holes), at most {MAX_PRISM_CORNERS}")


def _within(source: str, key: str, values: Iterable[float]) -> None:
    for value in values:
        if abs(value) > MAX_EXTENT:
            raise ConfigError(f"{source}: {key}: {value:g} m is beyond the {MAX_EXTENT:g} m a world may span")


def _label(kind: str, index: int, item: Any) -> str:
    name = getattr(item, "name", "") or getattr(item, "id", "") or getattr(item, "tag", "")
    return f"{kind}[{index}] '{name}'" if name else f"{kind}[{index}]"


def check_world(spec: Any, source: str) -> None:
    """Refuse sizes, extents and part counts beyond the limits (``spec``: a converted WorldSpec)."""
    _within(source, "placement", spec.placement)
    _within(source, "floor", (*spec.floor.size, *spec.floor.center, spec.floor.z))
    for i, pose in enumerate(spec.start_poses):
        _within(source, f"{_label('start_poses', i, pose)}.xyz", pose.xyz)
    parts = 0
    for i, item in enumerate(spec.static):
        key = _label("static", i, item)
        _within(source, f"{key}.xyz", item.xyz)
        _within(source, f"{key}.size", item.size)
        _within(source, f"{key}.scale", item.scale)
        for point in [*item.points, *(corner for hole in item.holes for corner in hole)]:
            _within(source, f"{key}.points", point)
        parts += item.parts  # each item's own bound is checked by its validate()
    if parts > MAX_PARTS:
        raise ConfigError(f"{source}: static: {parts} steps, posts and corners in all, at most {MAX_PARTS} in one world")
    for kind, entries in (("obstacles", spec.obstacles), ("victims", spec.victims), ("rfid_tags", spec.rfid_tags),
                          ("lights", spec.lights)):
        for i, entry in enumerate(entries):
            _within(source, f"{_label(kind, i, entry)}.xyz", entry.xyz)
    for i, obstacle in enumerate(spec.obstacles):
        _within(source, f"{_label('obstacles', i, obstacle)}.size", obstacle.size)
    for i, victim in enumerate(spec.victims):
        if len(victim.parts) > MAX_FALSE_ALARM_PARTS:
            raise ConfigError(f"{source}: {_label('victims', i, victim)}.parts: {len(victim.parts)} parts, "
                              f"at most {MAX_FALSE_ALARM_PARTS}")
    for i, water in enumerate(spec.water):
        _within(source, _label("water", i, water), (*water.center, *water.size, water.surface, water.bottom))
    if spec.terrain is not None:
        _within(source, "terrain", (*spec.terrain.size, *spec.terrain.center, spec.terrain.z))


__all__ = ["MAX_ENTRIES", "MAX_EXTENT", "MAX_FALSE_ALARM_PARTS", "MAX_PARTS", "check_entry_counts", "check_world"]
