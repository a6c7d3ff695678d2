"""Static arena parts (boxes, ramps, stairs, step fields, meshes) and movable obstacles.

Multi-part items (stairs, step fields) become one compound PyBullet body each, so a
world of a few hundred parts stays a few dozen bodies for the broadphase and the
ray tests. Sizes follow worlds-and-robots.md c.1 where the arenas leave them open
(ramp 15 deg, stair rise 0.18 m and run 0.28 m, step-field posts 0.1 m).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
import pybullet as p
import shapely
from shapely.geometry import Polygon

from usarsim import rotations
from usarsim.config_loading import ConfigError, confined_path
from usarsim.sim.mesh_files import mesh_visual

Vec3 = tuple[float, float, float]
Rgba = tuple[float, float, float, float]
Surface = Literal["default", "transparent", "mirror", "mesh_fence"]

GREY: Rgba = (0.75, 0.72, 0.65, 1.0)


@dataclass(frozen=True)
class StaticItem:
    """An immovable part of the arena.

    ``xyz`` is the centre of a box or cylinder, and the centre of the footprint at the
    base for ramps, stairs and step fields (which rise toward their local +x).
    ``size`` is (length x, width y, height z); a cylinder's diameter is size x.
    """

    kind: Literal["box", "cylinder", "ramp", "stairs", "step_field", "mesh", "prism"]
    xyz: Vec3
    size: Vec3 = (1.0, 1.0, 1.0)
    rpy: Vec3 = (0.0, 0.0, 0.0)
    name: str = ""
    surface: Surface = "default"
    friction: float = 1.0
    color: Rgba = GREY
    steps: int = 0  # stairs: number of steps (0: height / 0.18 m rounded)
    cell: float = 0.1  # step field: post width
    min_height: float = 0.0  # step field: lowest post
    seed: int = 0  # step field: post heights
    mesh: str = ""  # mesh: OBJ file relative to the world file
    scale: Vec3 = (1.0, 1.0, 1.0)
    # prism: footprint polygon (x, y) relative to xyz, extruded from xyz's z up by size z; holes inside it
    points: list[tuple[float, float]] = field(default_factory=list)
    holes: list[list[tuple[float, float]]] = field(default_factory=list)
    texture: str = ""  # procedural texture name (sim/textures.py); "" picks one by kind and colour

    def validate(self, source: str) -> None:
        """Reject sizes that cannot be built (zero, negative) with a message naming the item."""
        label = f"static item '{self.name or self.kind}'"
        if self.kind != "mesh" and min(self.size) <= 0:
            raise ConfigError(f"{source}: {label}: size must be positive, got {self.size}")
        if self.kind == "mesh" and not self.mesh:
            raise ConfigError(f"{source}: {label}: a mesh item needs 'mesh: file.obj'")
        if self.kind == "step_field" and not 0 < self.cell <= min(self.size[:2]):
            raise ConfigError(f"{source}: {label}: cell must be in (0, min(size x, size y)]")
        if self.kind == "step_field" and self.post_count > MAX_MESH_BOXES:
            raise ConfigError(f"{source}: {label}: {self.post_count} posts, at most {MAX_MESH_BOXES} "
                              "(use a larger cell or split the field)")
        if self.kind == "prism" and (len(self.points) < 3 or not _footprint(self).is_valid or _footprint(self).area <= 0):
            raise ConfigError(f"{source}: {label}: points must be a simple polygon of at least 3 corners")
        if self.kind == "stairs" and self.steps < 0:
            raise ConfigError(f"{source}: {label}: steps must be >= 0")
        if self.kind == "stairs" and self.step_count > MAX_STAIRS_STEPS:
            how = "steps" if self.steps else "steps (size z / 0.18 m; give steps)"
            raise ConfigError(f"{source}: {label}: {self.step_count} {how}, at most {MAX_STAIRS_STEPS}")

    @property
    def post_count(self) -> int:
        """Number of step-field posts."""
        return max(1, int(round(self.size[0] / self.cell))) * max(1, int(round(self.size[1] / self.cell)))

    @property
    def corner_count(self) -> int:
        """Corners of a prism's outline and holes together."""
        return len(self.points) + sum(len(hole) for hole in self.holes)

    @property
    def parts(self) -> int:
        """Boxes (steps, posts) or corners the item is built of; 1 for a single shape (after validate)."""
        return {"stairs": self.step_count, "step_field": self.post_count, "prism": self.corner_count}.get(self.kind, 1)

    @property
    def step_count(self) -> int:
        """Number of stairs steps."""
        return self.steps or max(1, round(self.size[2] / 0.18))


@dataclass(frozen=True)
class ObstacleSpec:
    """A movable physics object (brick, pipe, rubble); graspable ones can be picked up."""

    kind: Literal["box", "cylinder", "sphere"]
    xyz: Vec3
    size: Vec3 = (0.2, 0.1, 0.06)
    rpy: Vec3 = (0.0, 0.0, 0.0)
    mass: float = 1.0
    friction: float = 0.8
    color: Rgba = (0.6, 0.3, 0.2, 1.0)
    graspable: bool = False
    name: str = ""


# PyBullet keeps at most 16 children of a shape array (and drops the rest silently), and
# at most 8192 vertices of a mesh; larger box sets become one static triangle mesh.
MAX_COMPOUND_BOXES = 16
MAX_MESH_BOXES = 1024
MAX_STAIRS_STEPS = MAX_MESH_BOXES  # stairs, too, are one mesh of their steps
MAX_PRISM_CORNERS = 20_000  # of one prism, holes included (a city block's outline has hundreds); world_limits checks it
# the 10 outward triangles of a box's 8 corners (bottom z-, then top z+), bottom face left out
_BOX_FACES = (4, 5, 6, 4, 6, 7, 0, 1, 5, 0, 5, 4, 1, 2, 6, 1, 6, 5, 2, 3, 7, 2, 7, 6, 3, 0, 4, 3, 4, 7)


def _box_mesh(client: int, halves: list[Vec3], centres: list[Vec3]) -> tuple[int, int]:
    """Collision and visual triangle mesh of many axis-aligned boxes standing on the ground."""
    vertices: list[Vec3] = []
    indices: list[int] = []
    for (hx, hy, hz), (cx, cy, cz) in zip(halves, centres):
        base = len(vertices)
        for sz in (-1, 1):
            vertices += [(cx + sx * hx, cy + sy * hy, cz + sz * hz) for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1))]
        indices += [base + i for i in _BOX_FACES]
    col = p.createCollisionShape(p.GEOM_MESH, vertices=vertices, indices=indices,
                                 flags=p.GEOM_FORCE_CONCAVE_TRIMESH, physicsClientId=client)
    vis = mesh_visual(client, vertices, indices)
    return col, vis


def _boxes(client: int, halves: list[Vec3], centres: list[Vec3]) -> tuple[int, int]:
    """Collision and visual compound shapes of axis-aligned boxes."""
    if len(halves) > MAX_COMPOUND_BOXES:
        return _box_mesh(client, halves, centres)
    col = p.createCollisionShapeArray([p.GEOM_BOX] * len(halves), halfExtents=halves,
                                      collisionFramePositions=centres, physicsClientId=client)
    vis = p.createVisualShapeArray([p.GEOM_BOX] * len(halves), halfExtents=halves,
                                   visualFramePositions=centres, physicsClientId=client)
    return col, vis


def _stairs_boxes(item: StaticItem) -> tuple[list[Vec3], list[Vec3]]:
    length, width, height = item.size
    n = item.step_count
    run, rise = length / n, height / n
    halves, centres = [], []
    for i in range(n):
        top = rise * (i + 1)
        halves.append((run / 2, width / 2, top / 2))
        centres.append((-length / 2 + run * (i + 0.5), 0.0, top / 2))
    return halves, centres


def step_field_heights(item: StaticItem) -> np.ndarray:
    """Post heights (rows along x, columns along y), reproducible from the item's seed."""
    nx = max(1, int(round(item.size[0] / item.cell)))
    ny = max(1, int(round(item.size[1] / item.cell)))
    rng = np.random.default_rng(item.seed)
    return rng.uniform(item.min_height, item.size[2], size=(nx, ny))


def _step_field_boxes(item: StaticItem) -> tuple[list[Vec3], list[Vec3]]:
    heights = step_field_heights(item)
    nx, ny = heights.shape
    cx, cy = item.size[0] / nx, item.size[1] / ny
    halves, centres = [], []
    for i in range(nx):
        for j in range(ny):
            h = max(float(heights[i, j]), 0.005)
            halves.append((cx / 2, cy / 2, h / 2))
            centres.append((-item.size[0] / 2 + cx * (i + 0.5), -item.size[1] / 2 + cy * (j + 0.5), h / 2))
    return halves, centres


def _ramp_shapes(client: int, item: StaticItem) -> tuple[int, int]:
    length, width, height = item.size
    hx, hy = length / 2, width / 2
    vertices = [(-hx, -hy, 0.0), (hx, -hy, 0.0), (hx, hy, 0.0), (-hx, hy, 0.0),
                (hx, -hy, height), (hx, hy, height)]
    # triangles with outward normals: bottom, high end, slope, two sides
    indices = [0, 2, 1, 0, 3, 2,
               1, 2, 5, 1, 5, 4,
               0, 4, 5, 0, 5, 3,
               0, 1, 4,
               3, 5, 2]
    col = p.createCollisionShape(p.GEOM_MESH, vertices=vertices, physicsClientId=client)
    vis = mesh_visual(client, vertices, indices)
    return col, vis


def _mesh_shapes(client: int, item: StaticItem, world_dir: Path) -> tuple[int, int]:
    path = confined_path(world_dir, item.mesh, f"static item '{item.name or 'mesh'}'", "mesh")
    if not path.is_file():
        raise ConfigError(f"static item '{item.name or 'mesh'}': mesh file {path} not found")
    col = p.createCollisionShape(p.GEOM_MESH, fileName=str(path), meshScale=item.scale,
                                 flags=p.GEOM_FORCE_CONCAVE_TRIMESH, physicsClientId=client)
    vis = p.createVisualShape(p.GEOM_MESH, fileName=str(path), meshScale=item.scale, physicsClientId=client)
    return col, vis


TEXTURE_TILE = 2.0  # m of surface per texture image (PyBullet's own box stretches one image over any face)
# the six faces of a box: (axis of the normal, its sign, the two axes spanning the face)
_FACES = ((0, 1, 1, 2), (0, -1, 1, 2), (1, 1, 0, 2), (1, -1, 0, 2), (2, 1, 0, 1), (2, -1, 0, 1))


def textured_box_visual(client: int, half: Vec3, rgba: Rgba | None = None) -> int:
    """A box's visual shape as a mesh whose texture coordinates keep one image per TEXTURE_TILE metres."""
    vertices: list[Vec3] = []
    normals: list[Vec3] = []
    uvs: list[tuple[float, float]] = []
    indices: list[int] = []
    for axis, sign, a, b in _FACES:
        base = len(vertices)
        for sa, sb in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
            corner = [0.0, 0.0, 0.0]
            corner[axis], corner[a], corner[b] = sign * half[axis], sa * half[a], sb * half[b]
            vertices.append((corner[0], corner[1], corner[2]))
            normal = [0.0, 0.0, 0.0]
            normal[axis] = float(sign)
            normals.append((normal[0], normal[1], normal[2]))
            uvs.append((corner[a] / TEXTURE_TILE, corner[b] / TEXTURE_TILE))
        # counter-clockwise seen from outside: flip the winding on faces whose spanning axes are left-handed
        outward = sign * (1 if (axis, a, b) in ((0, 1, 2), (1, 2, 0), (2, 0, 1)) else -1)
        quad = (0, 1, 2, 0, 2, 3) if outward > 0 else (0, 2, 1, 0, 3, 2)
        indices += [base + i for i in quad]
    return mesh_visual(client, vertices, indices, uvs, normals, rgba)


def _footprint(item: StaticItem) -> Polygon:
    return Polygon(item.points, item.holes)


def _prism_shapes(client: int, item: StaticItem) -> tuple[int, int]:
    """Triangle mesh of the footprint extruded by size z (constrained Delaunay, so concave ones and holes work)."""
    polygon = shapely.geometry.polygon.orient(_footprint(item), 1.0)  # shell counter-clockwise, holes clockwise
    height = item.size[2]
    vertices: list[Vec3] = []
    indices: list[int] = []
    uvs: list[tuple[float, float]] = []  # texture coordinates: one texture tile per 2 m
    for triangle in shapely.constrained_delaunay_triangles(polygon).geoms:
        corners = list(shapely.geometry.polygon.orient(triangle, 1.0).exterior.coords)[:3]
        base = len(vertices)
        vertices += [(x, y, height) for x, y in corners] + [(x, y, 0.0) for x, y in corners]
        uvs += [(x / 2, y / 2) for x, y in corners] * 2
        indices += [base, base + 1, base + 2, base + 3, base + 5, base + 4]  # top up, bottom down
    for ring in [polygon.exterior, *polygon.interiors]:
        coords = list(ring.coords)
        for (x0, y0), (x1, y1) in zip(coords, coords[1:]):
            base = len(vertices)
            vertices += [(x0, y0, 0.0), (x1, y1, 0.0), (x1, y1, height), (x0, y0, height)]
            run = math.hypot(x1 - x0, y1 - y0) / 2
            uvs += [(0.0, 0.0), (run, 0.0), (run, height / 2), (0.0, height / 2)]
            indices += [base, base + 1, base + 2, base, base + 2, base + 3]  # outward for ccw shells, cw holes
    col = p.createCollisionShape(p.GEOM_MESH, vertices=vertices, indices=indices,
                                 flags=p.GEOM_FORCE_CONCAVE_TRIMESH, physicsClientId=client)
    vis = mesh_visual(client, vertices, indices, uvs)
    return col, vis


def _shapes(client: int, item: StaticItem, world_dir: Path) -> tuple[int, int]:
    """Collision and visual shape of ``item`` around its body origin."""
    if item.kind == "box":
        half = (item.size[0] / 2, item.size[1] / 2, item.size[2] / 2)
        return (p.createCollisionShape(p.GEOM_BOX, halfExtents=half, physicsClientId=client),
                textured_box_visual(client, half))
    if item.kind == "cylinder":
        radius, height = item.size[0] / 2, item.size[2]
        return (p.createCollisionShape(p.GEOM_CYLINDER, radius=radius, height=height, physicsClientId=client),
                p.createVisualShape(p.GEOM_CYLINDER, radius=radius, length=height, physicsClientId=client))
    if item.kind == "ramp":
        return _ramp_shapes(client, item)
    if item.kind == "stairs":
        return _boxes(client, *_stairs_boxes(item))
    if item.kind == "step_field":
        return _boxes(client, *_step_field_boxes(item))
    if item.kind == "prism":
        return _prism_shapes(client, item)
    return _mesh_shapes(client, item, world_dir)


def build_static(client: int, item: StaticItem, world_dir: Path) -> int:
    """Create the immovable body of ``item``; returns its body id."""
    col, vis = _shapes(client, item, world_dir)
    body = p.createMultiBody(0, col, vis, item.xyz, rotations.quaternion_from_euler(item.rpy),
                             physicsClientId=client)
    p.changeDynamics(body, -1, lateralFriction=item.friction, physicsClientId=client)
    p.changeVisualShape(body, -1, rgbaColor=build_color(item), physicsClientId=client)
    return body


def build_color(item: StaticItem) -> Rgba:
    """The colour a static item is drawn with: glass at most 35 % opaque (see-through for the camera)."""
    color = item.color
    if item.surface == "transparent":
        return (color[0], color[1], color[2], min(color[3], 0.35))
    return color


def texture_for(item: StaticItem) -> str:
    """The item's texture: its own, else plywood for arena walls and blocks (NIST builds them of
    plywood), a wire grid for fences, none for glass, cylinders and meshes (their colours or files say enough)."""
    if item.texture:
        return item.texture
    if item.surface == "mesh_fence":
        return "fence"
    if item.surface != "default" or item.kind in ("cylinder", "mesh"):
        return "none"
    return "plywood"


def build_obstacle(client: int, spec: ObstacleSpec) -> int:
    """Create a movable obstacle; returns its body id."""
    if spec.kind == "box":
        half = tuple(s / 2 for s in spec.size)
        col = p.createCollisionShape(p.GEOM_BOX, halfExtents=half, physicsClientId=client)
        vis = p.createVisualShape(p.GEOM_BOX, halfExtents=half, rgbaColor=spec.color, physicsClientId=client)
    elif spec.kind == "cylinder":
        col = p.createCollisionShape(p.GEOM_CYLINDER, radius=spec.size[0] / 2, height=spec.size[2],
                                     physicsClientId=client)
        vis = p.createVisualShape(p.GEOM_CYLINDER, radius=spec.size[0] / 2, length=spec.size[2],
                                  rgbaColor=spec.color, physicsClientId=client)
    else:
        col = p.createCollisionShape(p.GEOM_SPHERE, radius=spec.size[0] / 2, physicsClientId=client)
        vis = p.createVisualShape(p.GEOM_SPHERE, radius=spec.size[0] / 2, rgbaColor=spec.color,
                                  physicsClientId=client)
    body = p.createMultiBody(spec.mass, col, vis, spec.xyz, rotations.quaternion_from_euler(spec.rpy),
                             physicsClientId=client)
    # resting debris sleeps until something touches it, so it costs nothing per tick
    p.changeDynamics(body, -1, lateralFriction=spec.friction, activationState=p.ACTIVATION_STATE_ENABLE_SLEEPING,
                     physicsClientId=client)
    if spec.kind != "box":  # resting pipes and balls creep-roll on a flat floor without a little rolling friction
        p.changeDynamics(body, -1, rollingFriction=0.001, physicsClientId=client)
    return body
