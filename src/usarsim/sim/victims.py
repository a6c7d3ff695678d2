"""Victims: articulated low-poly humanoids (one static body per part), dressed by the seed, with simple animation.

A body is 15 parts: head, chest, pelvis, and per side upper arm, forearm, hand, thigh, shin
and foot (capsules for the limbs, boxes for trunk, hands and feet, a sphere for the head),
jointed at the neck, shoulders, elbows, hips and knees. Postures pose those joints (lying on
the back, sitting on the floor, face down with the legs under rubble); clothes (shirt,
sleeves, trousers, shoes) and skin are drawn per victim from the simulator's seed.

The victim sensor reports which parts its rays hit (Head, Arm, Hand, Chest, Pelvis,
Leg, Foot); false-alarm objects are loose parts with the same names. Animated
segments swing between an initial and a final angle at a mean angular rate
(worlds-and-robots.md c.4); their tip speed and amplitude feed the human-motion
sensor, and ``sound_db`` the sound sensor.

Parts are massless (static) bodies posed by forward kinematics: an articulated
multibody per victim would cost the physics solver more than a robot does, and
victims only need to be seen and touched, not simulated.
"""
from __future__ import annotations

import math
import zlib
from dataclasses import dataclass, field
from typing import Any, Literal, Optional

import numpy as np
import pybullet as p

from usarsim import rotations
from usarsim.config_loading import ConfigError

Vec3 = tuple[float, float, float]
PARTS = ("Head", "Arm", "Hand", "Chest", "Pelvis", "Leg", "Foot")
Rgba = tuple[float, float, float, float]

JointName = Literal["neck", "shoulder_left", "shoulder_right", "elbow_left", "elbow_right",
                    "hip_left", "hip_right", "knee_left", "knee_right"]


@dataclass(frozen=True)
class SegmentSpec:
    """An animated joint: swings between ``init`` and ``final`` (rad) at mean speed ``rate`` (rad/s)."""

    joint: JointName
    init: float
    final: float
    rate: float = 0.5


@dataclass(frozen=True)
class VictimSpec:
    """A victim (or a false-alarm object) in a world file."""

    id: str
    xyz: Vec3  # on the floor under the victim's chest
    yaw: float = 0.0
    posture: Literal["lying", "sitting", "standing", "trapped"] = "lying"
    false_alarm: bool = False
    parts: list[str] = field(default_factory=list)  # false alarms: the loose parts (default Arm)
    segments: list[SegmentSpec] = field(default_factory=list)
    anim_timer: float = 1.0  # speed scale of every segment
    sound_db: Optional[float] = None  # loudness at 1 m; None: silent

    def validate(self, source: str) -> None:
        """Reject unknown part names, too many segments and animation on false alarms."""
        for part in self.parts:
            if part not in PARTS:
                raise ConfigError(f"{source}: victim '{self.id}': unknown part '{part}' "
                                  f"(known: {', '.join(PARTS)})")
        if len(self.segments) > 8:
            raise ConfigError(f"{source}: victim '{self.id}': at most 8 segments, got {len(self.segments)}")
        if self.false_alarm and self.segments:
            raise ConfigError(f"{source}: victim '{self.id}': a false alarm cannot be animated")
        if self.anim_timer <= 0:
            raise ConfigError(f"{source}: victim '{self.id}': anim_timer must be positive")


# What people wear, drawn per victim from the world's seed (linear RGB)
SKINS = ((0.94, 0.78, 0.66), (0.87, 0.68, 0.55), (0.72, 0.53, 0.4), (0.55, 0.38, 0.27), (0.36, 0.24, 0.17))
SHIRTS = ((0.75, 0.12, 0.1), (0.92, 0.5, 0.1), (0.12, 0.18, 0.42), (0.16, 0.42, 0.2), (0.9, 0.9, 0.86),
          (0.45, 0.45, 0.47), (0.85, 0.85, 0.15), (0.42, 0.18, 0.45), (0.2, 0.55, 0.7))
TROUSERS = ((0.18, 0.25, 0.42), (0.55, 0.48, 0.32), (0.1, 0.1, 0.11), (0.35, 0.35, 0.36), (0.32, 0.22, 0.14))
SHOES = ((0.08, 0.07, 0.07), (0.3, 0.2, 0.12), (0.85, 0.85, 0.85))
DEBRIS = (0.55, 0.53, 0.5, 1.0)
Layer = Literal["skin", "shirt", "sleeve", "trousers", "shoes"]


@dataclass(frozen=True)
class Clothes:
    """One victim's colours, by what each part wears."""

    skin: Rgba
    shirt: Rgba
    sleeve: Rgba  # forearms: the shirt's colour (long sleeves) or skin
    trousers: Rgba
    shoes: Rgba

    def colour(self, layer: Layer) -> Rgba:
        """The colour of ``layer``."""
        return getattr(self, layer)


def clothes_for(seed: int, victim_id: str) -> Clothes:
    """The colours of victim ``victim_id`` in a world run with ``seed`` (same pair, same clothes)."""
    rng = np.random.default_rng([seed, zlib.crc32(victim_id.encode())])

    def pick(palette: tuple[tuple[float, float, float], ...]) -> Rgba:
        r, g, b = palette[int(rng.integers(len(palette)))]
        return (r, g, b, 1.0)
    skin, shirt = pick(SKINS), pick(SHIRTS)
    return Clothes(skin, shirt, shirt if rng.random() < 0.5 else skin, pick(TROUSERS), pick(SHOES))


# A shape: ("box", (hx, hy, hz)), ("sphere", (r,)) or ("capsule", (r, length of the straight part along z))
Shape = tuple[Literal["box", "sphere", "capsule"], tuple[float, ...]]


@dataclass(frozen=True)
class _Part:
    name: str
    part: str  # the victim sensor's name of it (PARTS)
    parent: int  # index into HUMANOID of the parent part; -1 for the chest (root)
    joint: str  # revolute joint about the parent's y axis at ``origin``; "" = rigid
    origin: Vec3  # joint position in the parent's joint frame (standing pose)
    offset: Vec3  # shape centre in this part's joint frame
    shape: Shape
    layer: Layer = "skin"
    lay: float = 0.0  # pitch of the shape about y in the joint frame (loose parts lie flat)


def _side(name: str, y: float, parent_offset: int) -> tuple[_Part, ...]:
    """One arm and one leg of a side (``y`` > 0: left): indices after the chest, pelvis and head."""
    upper_arm, forearm, thigh, shin = (parent_offset + i for i in (3, 4, 6, 7))
    sign = 1.0 if y > 0 else -1.0
    return (
        _Part(f"upper_arm_{name}", "Arm", 0, f"shoulder_{name}", (0, sign * 0.22, 0.16), (0, 0, -0.15),
              ("capsule", (0.045, 0.21)), "shirt"),
        _Part(f"forearm_{name}", "Arm", upper_arm, f"elbow_{name}", (0, 0, -0.3), (0, 0, -0.13), ("capsule", (0.038, 0.19)),
              "sleeve"),
        _Part(f"hand_{name}", "Hand", forearm, "", (0, 0, -0.27), (0, 0, -0.07), ("box", (0.022, 0.045, 0.07))),
        _Part(f"thigh_{name}", "Leg", 1, f"hip_{name}", (0, sign * 0.09, -0.12), (0, 0, -0.21),
              ("capsule", (0.07, 0.29)), "trousers"),
        _Part(f"shin_{name}", "Leg", thigh, f"knee_{name}", (0, 0, -0.43), (0, 0, -0.2), ("capsule", (0.052, 0.3)),
              "trousers"),
        _Part(f"foot_{name}", "Foot", shin, f"ankle_{name}", (0, 0, -0.42), (0.05, 0, -0.035), ("box", (0.11, 0.05, 0.035)),
              "shoes"),
    )


# The standing humanoid (1.70 m), chest at the origin, z up, facing +x; parents before children.
HUMANOID = (
    _Part("chest", "Chest", -1, "", (0, 0, 0), (0, 0, 0), ("box", (0.1, 0.17, 0.2)), "shirt"),
    _Part("pelvis", "Pelvis", 0, "", (0, 0, -0.2), (0, 0, -0.1), ("box", (0.1, 0.16, 0.1)), "trousers"),
    _Part("head", "Head", 0, "neck", (0, 0, 0.2), (0.01, 0, 0.15), ("sphere", (0.11,))),
    *_side("left", 0.22, 0),
    *_side("right", -0.22, 6),
)
# Distance from each animated joint to the tip of what it moves (for the motion speed).
TIP_LENGTH = {"neck": 0.26, "shoulder_left": 0.71, "shoulder_right": 0.71, "elbow_left": 0.41,
              "elbow_right": 0.41, "hip_left": 0.93, "hip_right": 0.93, "knee_left": 0.5, "knee_right": 0.5}
# posture: (chest height above the floor, body pitch, joint angles). Negative angles swing a limb
# forward (flexion at shoulders and hips, a bent elbow); positive ones bend a knee back and point
# the toes along the shin (the ankles move only in postures, not in animation segments).
POSTURES: dict[str, tuple[float, float, dict[str, float]]] = {
    "standing": (1.24, 0.0, {"elbow_left": -0.2, "elbow_right": -0.2}),
    # on the back, head toward -x before yaw, arms by the sides, the right knee drawn up
    "lying": (0.11, -math.pi / 2, {"hip_right": -0.5, "knee_right": 1.0}),
    # face down, head toward +x and raised a little, arms by the sides, feet stretched back along
    # the floor, legs under rubble (DEBRIS_ON_LEGS)
    "trapped": (0.11, math.pi / 2, {"shoulder_left": 0.25, "shoulder_right": 0.15, "neck": -0.3,
                                    "ankle_left": 1.57, "ankle_right": 1.5}),
    # upright on the floor, one knee drawn up, hands in the lap
    "sitting": (0.41, 0.0, {"hip_left": -1.57, "hip_right": -1.97, "knee_right": 0.8,
                            "shoulder_left": -0.35, "shoulder_right": -0.35, "elbow_left": -1.1, "elbow_right": -1.1}),
}
# A trapped victim's rubble, in the root's frame before the body pitch (x toward the head, y left,
# z up from the floor): a slab across the legs leaning on them, and a beam across the back of the knees.
DEBRIS_ON_LEGS: tuple[tuple[Vec3, Vec3, Vec3], ...] = (  # (centre, half extents, roll pitch yaw)
    ((-0.95, 0.0, 0.3), (0.3, 0.45, 0.035), (0.6, 0.0, 0.1)),
    ((-0.66, 0.05, 0.24), (0.06, 0.45, 0.06), (0.0, 0.0, 0.0)),
)


IDENTITY = (0.0, 0.0, 0.0, 1.0)
POSE_PERIOD = 0.05  # s; animated parts are re-posed at 20 Hz, plenty for a waving arm
Pose = tuple[Vec3, tuple[float, float, float, float]]


def _pitch_quaternion(angle: float) -> tuple[float, float, float, float]:
    return rotations.axis_angle_quaternion((0.0, 1.0, 0.0), angle)


def _shape(client: int, shape: Shape, color: Rgba) -> tuple[int, int]:
    kind, size = shape
    if kind == "sphere":
        geometry: dict[str, Any] = {"shapeType": p.GEOM_SPHERE, "radius": size[0]}
        visual = geometry
    elif kind == "capsule":  # the collision shape calls its straight part "height", the visual "length"
        geometry = {"shapeType": p.GEOM_CAPSULE, "radius": size[0], "height": size[1]}
        visual = {"shapeType": p.GEOM_CAPSULE, "radius": size[0], "length": size[1]}
    else:
        geometry = {"shapeType": p.GEOM_BOX, "halfExtents": size}
        visual = geometry
    return (p.createCollisionShape(**geometry, physicsClientId=client),
            p.createVisualShape(**visual, rgbaColor=color, physicsClientId=client))


def _debris(client: int, spec: VictimSpec) -> list[int]:
    """The rubble pinning a trapped victim's legs (static bodies that are not the victim)."""
    bodies = []
    turn = rotations.quaternion_from_euler((0.0, 0.0, spec.yaw))
    for centre, half, rpy in DEBRIS_ON_LEGS:
        pos, orn = p.multiplyTransforms(spec.xyz, turn, centre, rotations.quaternion_from_euler(rpy))
        col = p.createCollisionShape(p.GEOM_BOX, halfExtents=half, physicsClientId=client)
        vis = p.createVisualShape(p.GEOM_BOX, halfExtents=half, rgbaColor=DEBRIS, physicsClientId=client)
        bodies.append(p.createMultiBody(0.0, col, vis, pos, orn, physicsClientId=client))
    return bodies


class Victim:
    """A victim or false alarm: static part bodies posed from a root pose and joint angles."""

    def __init__(self, client: int, spec: VictimSpec, parts: list[_Part], root: Pose,
                 rest: dict[str, float], clothes: Clothes) -> None:
        self.client = client
        self.spec = spec
        self.id = spec.id
        self.false_alarm = spec.false_alarm
        self.sound_db = spec.sound_db
        self._parts = parts
        self._root = root
        self._rest = rest
        self._time = 0.0
        self._posed_at = -math.inf
        self._poses = self._forward(rest)
        self.body_ids: list[int] = []
        for part, (pos, orn) in zip(parts, self._poses):
            col, vis = _shape(client, part.shape, clothes.colour(part.layer))
            self.body_ids.append(p.createMultiBody(0.0, col, vis, pos, orn, physicsClientId=client))
        self.body_id = self.body_ids[0]
        self._part_by_body = {b: part.part for b, part in zip(self.body_ids, parts)}
        self.position: Vec3 = rotations.vec3(self._poses[0][0])
        # rubble on a trapped victim: bodies of the world, not parts the victim sensor reports
        self.debris_ids: list[int] = _debris(client, spec) if spec.posture == "trapped" else []

    def _forward(self, angles: dict[str, float]) -> list[Pose]:
        """World pose of every part's shape for the given joint angles."""
        joints: list[Pose] = []
        shapes: list[Pose] = []
        for part in self._parts:
            parent = self._root if part.parent < 0 else joints[part.parent]
            turn = _pitch_quaternion(angles.get(part.joint, 0.0)) if part.joint else IDENTITY
            joint = p.multiplyTransforms(parent[0], parent[1], part.origin, turn)
            joints.append(joint)
            shapes.append(p.multiplyTransforms(joint[0], joint[1], part.offset, _pitch_quaternion(part.lay)))
        return shapes

    def part_of_body(self, body_id: int) -> str | None:
        """Body-part name of one of this victim's bodies."""
        return self._part_by_body.get(body_id)

    def parts(self) -> list[tuple[str, Vec3]]:
        """Each part's current world position (centre of its shape)."""
        return [(part.part, rotations.vec3(pos)) for part, (pos, _) in zip(self._parts, self._poses)]

    def _angles(self, t: float) -> tuple[dict[str, float], float, float]:
        """Joint angles at time t, plus the fastest tip speed and the largest amplitude now."""
        angles = dict(self._rest)
        speed = amplitude = 0.0
        for seg in self.spec.segments:
            span = seg.final - seg.init
            if span == 0.0 or seg.rate <= 0.0:
                continue
            omega = math.pi * seg.rate * self.spec.anim_timer / abs(span)
            angles[seg.joint] = self._rest.get(seg.joint, 0.0) + seg.init + span * 0.5 * (1 - math.cos(omega * t))
            length = TIP_LENGTH[seg.joint]
            speed = max(speed, abs(span * 0.5 * omega * math.sin(omega * t)) * length)
            amplitude = max(amplitude, abs(span) * length)
        return angles, speed, amplitude

    def motion(self) -> tuple[float, float]:
        """(tip speed m/s, amplitude m) of the current animation; (0, 0) for a still victim."""
        _, speed, amplitude = self._angles(self._time)
        return speed, amplitude

    def update(self, t: float) -> None:
        """Pose the animated parts for sim time ``t``."""
        self._time = t
        if not self.spec.segments or t - self._posed_at < POSE_PERIOD:
            return
        self._posed_at = t
        self._poses = self._forward(self._angles(t)[0])
        for body, (pos, orn) in zip(self.body_ids, self._poses):
            p.resetBasePositionAndOrientation(body, pos, orn, physicsClientId=self.client)


def _humanoid(client: int, spec: VictimSpec, clothes: Clothes) -> Victim:
    height, pitch, angles = POSTURES[spec.posture]
    root = ((spec.xyz[0], spec.xyz[1], spec.xyz[2] + height), rotations.quaternion_from_euler((0.0, pitch, spec.yaw)))
    return Victim(client, spec, list(HUMANOID), root, dict(angles), clothes)


def _resting_height(shape: Shape) -> float:
    """Height of a shape's centre when it lies on the floor with its long axis level."""
    kind, size = shape
    return size[0] if kind in ("sphere", "capsule") else min(size)


def _loose_parts(client: int, spec: VictimSpec, clothes: Clothes) -> Victim:
    """A false alarm: the named parts lying side by side on the floor, 0.3 m apart, long axis along x."""
    by_part = {part.part: part for part in HUMANOID}
    parts = []
    for i, name in enumerate(spec.parts or ["Arm"]):
        model = by_part[name]
        kind, size = model.shape
        if kind == "box":  # the longest side along x, the shortest up
            order = sorted(size, reverse=True)
            shape: Shape = ("box", (order[0], order[1], order[2]))
            lay = 0.0
        else:
            shape, lay = model.shape, math.pi / 2
        parts.append(_Part(f"part_{i}", name, -1, "", (0.0, 0.3 * i, _resting_height(shape)), (0, 0, 0), shape,
                           "skin", lay))
    root = (rotations.vec3(spec.xyz), rotations.quaternion_from_euler((0.0, 0.0, spec.yaw)))
    return Victim(client, spec, parts, root, {}, clothes)


def build_victim(client: int, spec: VictimSpec, seed: int = 0) -> Victim:
    """Create a victim (humanoid) or a false alarm (loose parts) in the world, dressed by ``seed``."""
    clothes = clothes_for(seed, spec.id)
    return _loose_parts(client, spec, clothes) if spec.false_alarm else _humanoid(client, spec, clothes)
