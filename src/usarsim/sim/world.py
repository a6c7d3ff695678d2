"""Worlds: the schema of ``worlds/*.yaml``, its loader, and the built PyBullet world.

A world file describes static geometry (boxes, ramps, stairs, step fields,
meshes), movable obstacles, named start poses, victims, RFID tags, a GPS
reference point and light hints. Everything is in the core frame (REP-103,
x north, y west, z up, metres, radians); the protocol layer converts to
USARSim's frame at its edge. The format is documented in docs/worlds.md.
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pybullet as p
import pymap3d

from usarsim import rotations
from usarsim.config_loading import ConfigError, confined_path, convert_node, load_yaml_node
from usarsim.paths import share_dir
from usarsim.sim.commands import CommandError
from usarsim.sim.fluid import Water
from usarsim.sim.victims import Victim, VictimSpec, build_victim
from usarsim.sim.lighting import INDOOR_SKY, OUTDOOR_SKY
from usarsim.sim.terrain import GeoPoint, TerrainSpec, build_terrain, load_heights
from usarsim.sim.textures import TEXTURES, TextureBank
from usarsim.sim.water import AIR_DENSITY, WaterSpec, build_water, water_at
from usarsim.sim.world_limits import check_entry_counts, check_world
from usarsim.sim.world_geometry import (ObstacleSpec, StaticItem, build_color, build_obstacle, build_static, texture_for,
                                         textured_box_visual)

Vec3 = tuple[float, float, float]
log = logging.getLogger(__name__)

# Pre-placed tags get ids above this; tags released by robots get ids 0..1000 (USARSim convention).
RELEASED_TAG_MAX_ID = 1000
DEFAULT_WORLD = "yellow"  # what every command and the ROS node load unless told otherwise


GpsOrigin = GeoPoint  # geodetic coordinates of the world origin (decimal degrees, metres)


# USARSim's PlayerStarts stand 47 UU (0.188 m) above the floor (manual §5.3.5): GETSTARTPOSES
# reports that height, and an INIT there drops the robot onto the floor.
SPAWN_HEIGHT = 0.188
# A robot this far below the lowest floor has left the world: it is reported and removed.
FALL_LIMIT = 10.0


@dataclass(frozen=True)
class StartPose:
    """A named spawn pose (USARSim PlayerStart tag); z is the floor height under the robot."""

    tag: str
    xyz: Vec3
    rpy: Vec3 = (0.0, 0.0, 0.0)


@dataclass(frozen=True)
class FloorSpec:
    """The ground slab; its top surface is at ``z``."""

    size: tuple[float, float] = (60.0, 60.0)
    center: tuple[float, float] = (0.0, 0.0)
    z: float = 0.0
    friction: float = 1.0
    color: tuple[float, float, float, float] = (0.55, 0.55, 0.5, 1.0)
    texture: str = "concrete"  # procedural texture (sim/textures.py); "none" for the plain colour


@dataclass(frozen=True)
class RfidTagSpec:
    """A pre-placed RFID tag; id -1 gets a unique id above 1000."""

    xyz: Vec3
    id: int = -1
    single_shot: bool = False
    memory: str = "0"


@dataclass(frozen=True)
class LightSpec:
    """A light hint for the camera renderer (position and relative intensity)."""

    xyz: Vec3
    intensity: float = 1.0


@dataclass(frozen=True)
class WallWeights:
    """How many walls one crossing of a static part counts for, by its surface tag (docs/wireless.md)."""

    default: float = 1.0
    transparent: float = 0.5  # glass: about 3 dB at 2.4 GHz, half a partition wall
    mirror: float = 1.0  # metal-backed
    mesh_fence: float = 0.5  # a wire grid lets part of the signal through

    def of(self, surface: str) -> float:
        """Weight of a part with surface tag ``surface``."""
        return float(getattr(self, surface, self.default))


@dataclass(frozen=True)
class CommSpec:
    """Wireless path-loss parameters (the manual's Wall Attenuation Factor model; docs/wireless.md)."""

    p_d0: float = -49.67  # dBm at the reference distance (ini ePdo)
    d0: float = 2.0  # reference distance, m (eDo)
    n: float = 1.09  # path-loss exponent (eN)
    max_walls: int = 5  # walls counted at most, C (eMaxObs)
    waf: float = 6.625  # dB per wall (eAttenFac)
    cutoff: float = -93.0  # dBm below which links close and cannot open (eCutoff)
    update_rate: float = 1.0  # link-state updates per second of sim time (0: only when robots come and go)
    walls: WallWeights = field(default_factory=WallWeights)

    def validate(self, source: str) -> None:
        """Reject parameters the model cannot use."""
        if not (self.d0 > 0 and self.n >= 0 and self.max_walls >= 0 and self.waf >= 0 and self.update_rate >= 0):
            raise ConfigError(f"{source}: comm: d0 must be > 0 and n, max_walls, waf, update_rate >= 0")
        if min(vars(self.walls).values()) < 0:
            raise ConfigError(f"{source}: comm: walls weights must be >= 0")


@dataclass(frozen=True)
class WorldSpec:
    """One world file."""

    name: str
    description: str
    start_poses: list[StartPose]
    # required unless a terrain's geo_origin gives it (the loader fills it in then)
    gps_origin: GpsOrigin | None = None
    outdoor: bool = False
    gravity: float = -9.81
    floor: FloorSpec = field(default_factory=FloorSpec)
    static: list[StaticItem] = field(default_factory=list)
    obstacles: list[ObstacleSpec] = field(default_factory=list)
    victims: list[VictimSpec] = field(default_factory=list)
    rfid_tags: list[RfidTagSpec] = field(default_factory=list)
    lights: list[LightSpec] = field(default_factory=list)
    comm: CommSpec = field(default_factory=CommSpec)
    terrain: TerrainSpec | None = None  # outdoor height-map ground (sim/terrain.py)
    water: list[WaterSpec] = field(default_factory=list)  # water volumes (sim/water.py)
    sky: tuple[float, float, float] | None = None  # RGB 0..1 behind everything; default by `outdoor`
    map_resolution: float = 0.05  # m per pixel of the world's Nav2 map (`usarsim map`); coarser for large outdoor worlds
    air_density: float = AIR_DENSITY  # kg/m^3 outside water (what a blimp's envelope displaces)
    # rad, magnetic north east of true north (compass sensors); None: the World Magnetic Model's at gps_origin
    magnetic_declination: float | None = None
    # Where the file's arena sits in the world frame: added to every position in the file, so
    # that an arena keeps its own coordinates and USARSim's map coordinates still hold.
    placement: Vec3 = (0.0, 0.0, 0.0)
    source: str = ""  # file the spec was loaded from (set by the loader)


def worlds_dir() -> Path:
    """Directory of the shipped world files."""
    return share_dir() / "worlds"


def available_worlds() -> list[str]:
    """Names of every world that ships, sorted."""
    return sorted(p.stem for p in worlds_dir().glob("*.yaml") if not p.stem.endswith("_map"))


def load_world_file(path: Path) -> WorldSpec:
    """Load and validate one world file; positions come back placed in the world frame."""
    node = load_yaml_node(Path(path))
    check_entry_counts(node, str(path))  # before converting: a list of 10^6 boxes is refused at once
    spec = convert_node(WorldSpec, node, str(path), WorldSpec.__name__)
    if spec.source:  # set by the loader only: it decides which folder meshes are read from
        raise ConfigError(f"{path}: unknown key 'source' in WorldSpec (the loader sets it)")
    spec = _with_source(spec, str(path))
    _validate(spec, str(path))
    return _with_gps_origin(_placed(spec))


def _with_gps_origin(spec: WorldSpec) -> WorldSpec:
    """Derive the world's GPS origin from its terrain's geodetic origin when the file gives that instead."""
    if spec.gps_origin is not None or spec.terrain is None or spec.terrain.geo_origin is None:
        return spec
    geo = spec.terrain.geo_origin
    # the terrain's centre at height 0 is world (center, z): the world origin is that far away
    east, north, up = spec.terrain.center[1], -spec.terrain.center[0], -spec.terrain.z
    lat, lon, alt = pymap3d.enu2geodetic(east, north, up, geo.lat, geo.lon, geo.alt)
    return replace(spec, gps_origin=GpsOrigin(float(lat), float(lon), float(alt)))


def _placed(spec: WorldSpec) -> WorldSpec:
    """``spec`` with its ``placement`` added to every position (floor, starts, items, tags, lights)."""
    dx, dy, dz = spec.placement
    if (dx, dy, dz) == (0.0, 0.0, 0.0):
        return spec

    def moved(item: Any) -> Any:
        x, y, z = item.xyz
        return replace(item, xyz=(x + dx, y + dy, z + dz))

    floor = replace(spec.floor, center=(spec.floor.center[0] + dx, spec.floor.center[1] + dy),
                    z=spec.floor.z + dz)
    return replace(spec, floor=floor, start_poses=[moved(s) for s in spec.start_poses],
                   static=[moved(i) for i in spec.static], obstacles=[moved(o) for o in spec.obstacles],
                   victims=[moved(v) for v in spec.victims], rfid_tags=[moved(t) for t in spec.rfid_tags],
                   lights=[moved(light) for light in spec.lights],
                   terrain=spec.terrain.moved((dx, dy, dz)) if spec.terrain else None,
                   water=[w.moved((dx, dy, dz)) for w in spec.water])


def load_world(name: str) -> WorldSpec:
    """Load a shipped world by name (letters, digits, '_', '-'), or a world file by its .yaml path."""
    candidate = Path(name)
    if candidate.suffix in (".yaml", ".yml"):
        if not candidate.is_file():
            raise ConfigError(f"world file '{name}' not found")
        return load_world_file(candidate)
    path = worlds_dir() / f"{name}.yaml"
    if not re.fullmatch(r"[A-Za-z0-9_-]+", name) or not path.exists() or name.endswith("_map"):
        raise ConfigError(f"unknown world '{name}' (known: {', '.join(available_worlds())}; "
                          f"or the path of a world .yaml file)")
    return load_world_file(path)


def _with_source(spec: WorldSpec, source: str) -> WorldSpec:
    return replace(spec, source=source)


def _validate(spec: WorldSpec, source: str) -> None:
    geo = spec.terrain.geo_origin if spec.terrain else None
    if (spec.gps_origin is None) == (geo is None):
        raise ConfigError(f"{source}: gps_origin: give either gps_origin or terrain.geo_origin (exactly one)"
                          if geo is not None else f"{source}: missing required key 'gps_origin'")
    if spec.terrain is not None:
        spec.terrain.validate(source)
        confined_path(_world_dir(spec), spec.terrain.heightmap, source, "terrain.heightmap")
    if not spec.start_poses:
        raise ConfigError(f"{source}: a world needs at least one start pose")
    tags = [s.tag for s in spec.start_poses]
    dupes = sorted({t for t in tags if tags.count(t) > 1})
    if dupes:
        raise ConfigError(f"{source}: duplicate start pose tags: {', '.join(dupes)}")
    ids = [t.id for t in spec.rfid_tags if t.id != -1]
    if len(ids) != len(set(ids)):
        raise ConfigError(f"{source}: duplicate RFID tag ids")
    for tag in spec.rfid_tags:
        if tag.id != -1 and tag.id <= RELEASED_TAG_MAX_ID:
            raise ConfigError(f"{source}: RFID tag id {tag.id}: pre-placed tags use ids above "
                              f"{RELEASED_TAG_MAX_ID} (or -1 for automatic)")
    victim_ids = [v.id for v in spec.victims]
    if len(victim_ids) != len(set(victim_ids)):
        raise ConfigError(f"{source}: duplicate victim ids")
    if min(spec.floor.size) <= 0:
        raise ConfigError(f"{source}: floor.size must be positive, got {list(spec.floor.size)}")
    for item in spec.static:
        item.validate(source)
        if item.kind == "mesh":
            confined_path(_world_dir(spec), item.mesh, source, f"static item '{item.name or 'mesh'}' mesh")
        if min(item.scale) <= 0:
            raise ConfigError(f"{source}: static item '{item.name or item.kind}': scale must be positive")
    for obstacle in spec.obstacles:
        if min(obstacle.size) <= 0 or obstacle.mass <= 0:
            raise ConfigError(f"{source}: obstacle '{obstacle.name or obstacle.kind}': size and mass must be "
                              f"positive, got size {list(obstacle.size)}, mass {obstacle.mass}")
    for victim in spec.victims:
        victim.validate(source)
    spec.comm.validate(source)
    for water in spec.water:
        water.validate(source)
    check_world(spec, source)
    _validate_looks(spec, source)
    if not spec.map_resolution > 0:
        raise ConfigError(f"{source}: map_resolution must be positive, got {spec.map_resolution}")
    if not spec.air_density > 0:
        raise ConfigError(f"{source}: air_density must be positive, got {spec.air_density}")


def _validate_looks(spec: WorldSpec, source: str) -> None:
    """Texture names, light intensities and the sky colour, each error naming the key."""
    known = ", ".join(["none", *TEXTURES])
    named = [("floor.texture", spec.floor.texture)] + [(f"static[{i}].texture", item.texture)
                                                        for i, item in enumerate(spec.static)]
    for key, name in named:
        if name and name != "none" and name not in TEXTURES:
            raise ConfigError(f"{source}: {key}: unknown texture '{name}' (known: {known})")
    for i, light in enumerate(spec.lights):
        if light.intensity < 0:
            raise ConfigError(f"{source}: lights[{i}].intensity must be >= 0, got {light.intensity}")
    if spec.sky is not None and not all(0.0 <= c <= 1.0 for c in spec.sky):
        raise ConfigError(f"{source}: sky: RGB components must be in 0..1, got {list(spec.sky)}")


@dataclass
class RfidTag:
    """A tag in the running world; memory is writable by RFID readers."""

    id: int
    position: Vec3
    memory: str = "0"
    single_shot: bool = False


class BuiltWorld:
    """The world instantiated in a PyBullet client: bodies, surfaces, victims, tags."""

    def __init__(self, client: int, spec: WorldSpec, textures: bool = True, seed: int = 0) -> None:
        log.debug("building world '%s': %d static items, %d obstacles, %d victims", spec.name, len(spec.static),
                  len(spec.obstacles), len(spec.victims))
        self.client = client
        self.spec = spec
        self.sky = spec.sky or (OUTDOOR_SKY if spec.outdoor else INDOOR_SKY)
        bank = TextureBank(client)
        apply_texture = bank.apply if textures else (lambda body, name: None)
        self._surfaces: dict[int, str] = {}
        self.floor_id = self._build_floor(spec.floor)
        apply_texture(self.floor_id, spec.floor.texture)
        self.static_ids: list[int] = []
        self._labels: dict[int, str] = {self.floor_id: "the floor"}  # for messages about a body
        for item in spec.static:
            body = build_static(client, item, _world_dir(spec))
            apply_texture(body, texture_for(item))
            self.static_ids.append(body)
            self._surfaces[body] = item.surface
            self._labels[body] = f"{item.kind} '{item.name}'" if item.name else item.kind
        self.obstacle_ids = [build_obstacle(client, o) for o in spec.obstacles]
        self._labels.update({b: f"obstacle '{o.name}'" if o.name else "an obstacle"
                             for b, o in zip(self.obstacle_ids, spec.obstacles)})
        self.victims: list[Victim] = [build_victim(client, v, seed) for v in spec.victims]
        self._labels.update({b: f"victim '{v.spec.id}'" for v in self.victims for b in v.body_ids})
        self._labels.update({b: f"the rubble on victim '{v.spec.id}'" for v in self.victims for b in v.debris_ids})
        self._victim_by_body = {b: v for v in self.victims for b in v.body_ids}
        self.rfid_tags: dict[int, RfidTag] = {}
        next_id = RELEASED_TAG_MAX_ID + 1
        taken = {t.id for t in spec.rfid_tags}
        for tag in spec.rfid_tags:
            tag_id = tag.id
            if tag_id == -1:
                while next_id in taken:
                    next_id += 1
                tag_id, next_id = next_id, next_id + 1
                taken.add(tag_id)
            self.rfid_tags[tag_id] = RfidTag(tag_id, rotations.vec3(tag.xyz), tag.memory, tag.single_shot)
        # what the camera sees through (sim/see_through.py): glass with its alpha, grid fences
        self.colors = {b: build_color(item) for b, item in zip(self.static_ids, spec.static)}
        self.glass = {b: self.colors[b][3] for b, s in self._surfaces.items() if s == "transparent"}
        self.fences = {b for b, s in self._surfaces.items() if s == "mesh_fence"}
        self.water = Water(spec.water, spec.gravity)  # pushes on robots (sim/fluid.py)
        # IR passes through glass (sensors.md): rays of IR sensors ignore these bodies
        self.ray_ignore_ids = frozenset(b for b, s in self._surfaces.items() if s == "transparent")
        self.terrain_id: int | None = None
        if spec.terrain is not None:
            heights = load_heights(spec.terrain, _world_dir(spec), spec.source or spec.name)
            self.terrain_id = build_terrain(client, spec.terrain, heights, bank if textures else None, seed)
            self.static_ids.append(self.terrain_id)
            self._surfaces[self.terrain_id] = "default"
            self._labels[self.terrain_id] = "the terrain"
        self.water_ids = [build_water(client, w) for w in spec.water]
        lowest = min([spec.floor.z] + [p.getAABB(b, physicsClientId=client)[0][2] for b in self.static_ids])
        # below this a robot has left the world for good
        self.fall_limit_z = lowest - FALL_LIMIT

    def _build_floor(self, floor: FloorSpec) -> int:
        half = (floor.size[0] / 2, floor.size[1] / 2, 0.05)
        col = p.createCollisionShape(p.GEOM_BOX, halfExtents=half, physicsClientId=self.client)
        vis = textured_box_visual(self.client, half, floor.color)
        body = p.createMultiBody(0, col, vis, (floor.center[0], floor.center[1], floor.z - 0.05),
                                 physicsClientId=self.client)
        p.changeDynamics(body, -1, lateralFriction=floor.friction, physicsClientId=self.client)
        self._surfaces[body] = "default"
        return body

    # --- queries ---------------------------------------------------------------------------
    def surface_of(self, body_id: int) -> str:
        """Surface tag of a static body ('default' for anything else)."""
        return self._surfaces.get(body_id, "default")

    def victim_part_at(self, body_id: int, link_index: int) -> tuple[Victim, str] | None:
        """The victim and body-part name a ray hit on (body, link) belongs to, if any
        (every victim part is its own body, so the link index is always -1)."""
        victim = self._victim_by_body.get(body_id)
        if victim is None:
            return None
        part = victim.part_of_body(body_id)
        return (victim, part) if part else None

    def start_pose(self, tag: str) -> StartPose:
        """The start pose named ``tag`` (case-insensitive)."""
        for pose in self.spec.start_poses:
            if pose.tag.lower() == tag.lower():
                return pose
        known = ", ".join(s.tag for s in self.spec.start_poses)
        raise CommandError(f"world '{self.spec.name}' has no start pose '{tag}' (known: {known})")

    def label(self, body_id: int) -> str:
        """What a world body is, for messages ("box 'W1'", "victim 'V2'")."""
        return self._labels.get(body_id, f"body {body_id}")

    def floor_below(self, x: float, y: float, z: float) -> float | None:
        """Height of the first surface under (x, y) from height z down; None when there is none."""
        hit = p.rayTest((x, y, z), (x, y, self.fall_limit_z), physicsClientId=self.client)[0]
        return float(hit[3][2]) if hit[0] >= 0 else None

    def water_at(self, point: Vec3) -> WaterSpec | None:
        """The water volume ``point`` (world frame) lies in, or None in air."""
        return water_at(self.spec.water, point)

    # --- changes ---------------------------------------------------------------------------
    def add_rfid_tag(self, position: Vec3) -> RfidTag:
        """Place a new tag (dropped by a robot) with the lowest free id in 0..1000."""
        for tag_id in range(RELEASED_TAG_MAX_ID + 1):
            if tag_id not in self.rfid_tags:
                tag = RfidTag(tag_id, rotations.vec3(position))
                self.rfid_tags[tag_id] = tag
                return tag
        raise CommandError("no free RFID tag id left (0..1000 all released)")

    def update(self, time: float) -> None:
        """Advance world animation (victims) to sim time ``time``."""
        for victim in self.victims:
            victim.update(time)


def _world_dir(spec: WorldSpec) -> Path:
    return Path(spec.source).parent if spec.source else worlds_dir()


def build_world(client: int, spec: WorldSpec, textures: bool = True, seed: int = 0) -> BuiltWorld:
    """Instantiate ``spec`` in PyBullet client ``client`` (``textures`` False: plain colours, for speed tests);
    ``seed`` draws what looks vary by (the terrain's ground, victims' clothes)."""
    return BuiltWorld(client, spec, textures, seed)


__all__ = ["BuiltWorld", "CommSpec", "FALL_LIMIT", "SPAWN_HEIGHT", "FloorSpec", "GpsOrigin", "LightSpec", "ObstacleSpec",
           "RfidTag", "RfidTagSpec", "StartPose", "StaticItem", "Victim", "VictimSpec", "WallWeights", "WaterSpec", "WorldSpec",
           "available_worlds",
           "build_world", "load_world", "load_world_file", "worlds_dir"]
