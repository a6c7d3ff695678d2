"""Street worlds from OpenStreetMap extracts (``usarsim osm FILE.osm``), as AutoSim builds them.

The extract is read with pyosmium (libosmium's Python binding: maintained, streams XML and
PBF alike, resolves way node locations for us). Roads become the area of their centre
lines buffered by half a width chosen by highway type (or the way's ``width`` tag); the
rest of the extract's bounds is pavement raised by a kerb; buildings are their footprints
extruded to ``height`` (or 3 m per ``building:levels``, else a default). The GPS origin is
the centre of the file's bounds; positions are east/north metres from it, turned into the
core frame (x north, y west). Start poses stand on the longest straight road pieces,
facing along them.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import osmium
import pymap3d
import shapely
import yaml
from shapely.geometry import LineString, Polygon, box

from usarsim.config_loading import ConfigError
from usarsim.sim.mapgen import MAX_MAP_CELLS
from usarsim.sim.world_limits import MAX_ENTRIES
from usarsim.whole_file import write_text_whole

# carriageway widths (m) by highway type, typical for two-lane urban roads; footways stay pavement
ROAD_WIDTHS = {"motorway": 11.0, "trunk": 9.0, "primary": 8.0, "secondary": 7.0, "tertiary": 6.5,
               "residential": 6.0, "unclassified": 5.5, "living_street": 5.0, "service": 4.0}
KERB = 0.12  # m: pavement above the road
STOREY = 3.0  # m per building level
DEFAULT_BUILDING_HEIGHT = 9.0  # m when a building says nothing
SIMPLIFY = 0.05  # m: outlines are simplified this much (fewer triangles, same look)
MIN_PIECE = 0.5  # m^2: slivers of pavement below this are left out
MAP_RESOLUTION = 0.2  # m: streets are large; a car needs no finer map
ROAD_COLOR = [0.22, 0.22, 0.24, 1.0]
PAVEMENT_COLOR = [0.62, 0.6, 0.57, 1.0]
BUILDING_COLOR = [0.72, 0.62, 0.52, 1.0]
# Bounds of what an extract may ask for (docs/worlds.md, "Limits"): a district, not a county.
MAX_EXTENT = 5_000.0  # m along either side of the bounds
MAX_WAYS = 50_000  # roads and buildings together
MAX_ROAD_WIDTH = 100.0  # m, a width tag beyond is a mistake (the widest avenues are about 110 m)
MAX_BUILDING_HEIGHT = 1_000.0  # m (the tallest building stands 828 m)


@dataclass
class OsmExtract:
    """What the converter needs from an extract, in local metres (x north, y west)."""

    origin: tuple[float, float]  # lat, lon of the bounds' centre
    area: Polygon  # the bounds
    roads: list[tuple[LineString, float, str]]  # centre line, width, name or type
    buildings: list[tuple[Polygon, float, str]]  # footprint, height, name or id


def _local(lat: float, lon: float, origin: tuple[float, float]) -> tuple[float, float]:
    east, north, _ = pymap3d.geodetic2enu(lat, lon, 0.0, origin[0], origin[1], 0.0)
    return float(north), float(-east)


def _number(text: str | None) -> float | None:
    try:
        value = float((text or "").split()[0].rstrip("m"))
    except (ValueError, IndexError):
        return None
    return value if math.isfinite(value) and value > 0 else None


def _bounded(value: float | None, limit: float, source: str, what: str) -> float | None:
    if value is not None and value > limit:
        raise ConfigError(f"{source}: {what} = {value:g} m, at most {limit:g} m")
    return value


def read_extract(path: Path, building_height: float = DEFAULT_BUILDING_HEIGHT) -> OsmExtract:
    """Read roads, buildings and bounds of an OSM file (XML or PBF); one clear error when it is malformed."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path}: OSM file not found")
    try:
        header_box = osmium.io.Reader(str(path), osmium.osm.osm_entity_bits.NOTHING).header().box()
        ways = []
        lats, lons = [], []
        for obj in osmium.FileProcessor(str(path)).with_locations():
            if isinstance(obj, osmium.osm.Node):
                lats.append(obj.location.lat)
                lons.append(obj.location.lon)
            elif isinstance(obj, osmium.osm.Way) and ("highway" in obj.tags or "building" in obj.tags):
                ways.append((dict(obj.tags), [(n.location.lat, n.location.lon) for n in obj.nodes], obj.id))
                if len(ways) > MAX_WAYS:
                    raise ConfigError(f"{path}: more than {MAX_WAYS} roads and buildings; cut a smaller extract")
    except (RuntimeError, osmium.InvalidLocationError, ValueError) as exc:
        raise ConfigError(f"{path}: not a readable OSM file: {exc}") from None
    if header_box.valid():
        south, west = header_box.bottom_left.lat, header_box.bottom_left.lon
        north, east = header_box.top_right.lat, header_box.top_right.lon
    elif lats:
        south, north, west, east = min(lats), max(lats), min(lons), max(lons)
    else:
        raise ConfigError(f"{path}: bounds: the file has neither <bounds> nor any node")
    origin = ((south + north) / 2, (west + east) / 2)
    corners = [_local(lat, lon, origin) for lat, lon in ((south, west), (north, east))]
    area = box(min(c[0] for c in corners), min(c[1] for c in corners), max(c[0] for c in corners),
               max(c[1] for c in corners))
    if max(area.bounds[2] - area.bounds[0], area.bounds[3] - area.bounds[1]) > MAX_EXTENT:
        raise ConfigError(f"{path}: bounds: the extract spans {area.bounds[2] - area.bounds[0]:.0f} m x "
                          f"{area.bounds[3] - area.bounds[1]:.0f} m, at most {MAX_EXTENT:g} m a side; "
                          "cut a smaller extract")
    roads, buildings = [], []
    for tags, coords, way_id in ways:
        points = [_local(lat, lon, origin) for lat, lon in coords]
        if "highway" in tags and tags["highway"] in ROAD_WIDTHS and len(points) >= 2:
            width = (_bounded(_number(tags.get("width")), MAX_ROAD_WIDTH, f"{path}: way {way_id}", "width")
                     or ROAD_WIDTHS[tags["highway"]])
            roads.append((LineString(points), width, tags.get("name", tags["highway"])))
        elif "building" in tags and len(points) >= 4 and points[0] == points[-1]:
            where = f"{path}: way {way_id}"
            levels = _bounded(_number(tags.get("building:levels")), MAX_BUILDING_HEIGHT / STOREY, where,
                              "building:levels (x 3 m)")
            height = (_bounded(_number(tags.get("height")), MAX_BUILDING_HEIGHT, where, "height")
                      or (levels * STOREY if levels else building_height))
            footprint = Polygon(points)
            if footprint.is_valid and footprint.area > 1.0:
                buildings.append((footprint, height, tags.get("name", f"building {way_id}")))
    if not roads:
        raise ConfigError(f"{path}: no roads (ways with a highway tag of type {', '.join(ROAD_WIDTHS)})")
    return OsmExtract(origin, area, roads, buildings)


def _prism(name: str, polygon: Polygon, height: float, color: list[float], texture: str) -> dict[str, Any]:
    polygon = shapely.geometry.polygon.orient(polygon.simplify(SIMPLIFY), 1.0)

    def ring(coords: Any) -> list[list[float]]:
        return [[round(x, 3), round(y, 3)] for x, y in list(coords)[:-1]]
    item: dict[str, Any] = {"kind": "prism", "name": name, "xyz": [0.0, 0.0, 0.0], "size": [1.0, 1.0, round(height, 3)],
                            "points": ring(polygon.exterior.coords), "color": color, "texture": texture}
    if polygon.interiors:
        item["holes"] = [ring(h.coords) for h in polygon.interiors]
    return item


def _pieces(geometry: Any) -> list[Polygon]:
    return [g for g in getattr(geometry, "geoms", [geometry]) if isinstance(g, Polygon) and g.area >= MIN_PIECE]


def _start_poses(roads: list[tuple[LineString, float, str]], count: int = 4) -> list[dict[str, Any]]:
    """Starts in the middle of the longest straight road segments, facing along them."""
    segments = []
    for line, width, _ in roads:
        coords = list(line.coords)
        segments += [(math.dist(a, b), a, b, width) for a, b in zip(coords, coords[1:])]
    segments.sort(key=lambda s: -s[0])
    starts: list[dict[str, Any]] = []
    for _, a, b, _ in segments[:count]:
        x, y = (a[0] + b[0]) / 2, (a[1] + b[1]) / 2
        yaw = math.atan2(b[1] - a[1], b[0] - a[0])
        starts.append({"tag": f"Start{len(starts) + 1}", "xyz": [round(x, 3), round(y, 3), 0.0],
                       "rpy": [0.0, 0.0, round(yaw, 6)]})
    return starts


def _map_resolution(length: float, width: float) -> float:
    """MAP_RESOLUTION, or as much coarser (in 0.05 m steps) as keeps the map within MAX_MAP_CELLS."""
    fine_enough = math.sqrt((length + 2) * (width + 2) / MAX_MAP_CELLS)  # with mapgen's border
    return max(MAP_RESOLUTION, round(math.ceil(fine_enough / 0.05) * 0.05, 2))


def street_world(extract: OsmExtract, name: str, source: str) -> dict[str, Any]:
    """The world file contents of an extract."""
    road_area = shapely.union_all([line.buffer(width / 2, cap_style="flat", join_style="round")
                                   .union(shapely.Point(line.coords[0]).buffer(width / 2))
                                   .union(shapely.Point(line.coords[-1]).buffer(width / 2))
                                   for line, width, _ in extract.roads])
    pavement = _pieces(extract.area.difference(road_area))
    static = [_prism(f"pavement{i + 1}", piece, KERB, PAVEMENT_COLOR, "pavement") for i, piece in enumerate(pavement)]
    for footprint, height, label in extract.buildings:
        for piece in _pieces(footprint.intersection(extract.area).difference(road_area)):
            static.append(_prism(label, piece, height, BUILDING_COLOR, "concrete"))
    if len(static) > MAX_ENTRIES["static"]:
        raise ConfigError(f"{source}: {len(static)} pavement pieces and buildings, at most {MAX_ENTRIES['static']} "
                          "in one world; cut a smaller extract")
    xmin, ymin, xmax, ymax = extract.area.bounds
    return {
        "name": name,
        "description": f"streets from OpenStreetMap extract {source}",
        "outdoor": True,
        "gps_origin": {"lat": round(extract.origin[0], 8), "lon": round(extract.origin[1], 8), "alt": 0.0},
        "floor": {"size": [round(xmax - xmin + 20, 2), round(ymax - ymin + 20, 2)],
                  "center": [round((xmin + xmax) / 2, 3), round((ymin + ymax) / 2, 3)], "color": ROAD_COLOR},
        "map_resolution": _map_resolution(xmax - xmin, ymax - ymin),
        "start_poses": _start_poses(extract.roads),
        "static": static,
        "lights": [{"xyz": [round(xmin, 2), round(ymax, 2), 80.0], "intensity": 1.0}],
    }


def convert(osm_path: Path, out_path: Path, name: str = "",
            building_height: float = DEFAULT_BUILDING_HEIGHT) -> dict[str, Any]:
    """Read ``osm_path`` and write its street world to ``out_path``; returns the world's contents."""
    name = name or Path(out_path).stem
    _bounded(building_height, MAX_BUILDING_HEIGHT, "--building-height", "the default building height")
    world = street_world(read_extract(osm_path, building_height), name, Path(osm_path).name)
    header = (f"# Generated by `usarsim osm {Path(osm_path).name}`: roads, kerbs and buildings of an\n"
              "# OpenStreetMap extract; GPS origin = the centre of its bounds. Do not edit: regenerate.\n")
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    write_text_whole(out_path, header + yaml.safe_dump(world, sort_keys=False, default_flow_style=None, width=120))
    return world


__all__ = ["DEFAULT_BUILDING_HEIGHT", "ROAD_WIDTHS", "convert", "read_extract", "street_world"]
