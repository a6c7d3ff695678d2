"""Victims: humanoids made of body parts (one static body per part), with simple animation.

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
from dataclasses import dataclass, field
from typing import Literal, Optional

import pybullet as p

from usarsim import rotations
from usarsim.config_loading import ConfigError

Vec3 = tuple[float, float, float]
PARTS = ("Head", "Arm", "Hand", "Chest", "Pelvis", "Leg", "Foot")
SKIN = (0.87, 0.68, 0.55, 1.0)
CLOTHES = (0.2, 0.3, 0.6, 1.0)

JointName = Literal["neck", "shoulder_left", "shoulder_right", "hip_left", "hip_right"]


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


@dataclass(frozen=True)
class _Part:
    name: str
    part: str
    parent: int  # index into HUMANOID of the parent part; -1 for the chest (root)
    joint: str  # revolute joint about the parent's y axis at ``origin``; "" = rigid
    origin: Vec3  # joint position in the parent's joint frame (standing pose)
    offset: Vec3  # shape centre in this part's joint frame
    half: Vec3  # box half extents; a sphere when half[1] == 0 (radius half[0])
    color: tuple[float, float, float, float] = CLOTHES


# The standing humanoid, chest at the origin, z up, facing +x; parents before children.
HUMANOID = (
    _Part("chest", "Chest", -1, "", (0, 0, 0), (0, 0, 0), (0.1, 0.17, 0.22)),
    _Part("pelvis", "Pelvis", 0, "", (0, 0, -0.22), (0, 0, -0.09), (0.09, 0.16, 0.09)),
    _Part("head", "Head", 0, "neck", (0, 0, 0.22), (0, 0, 0.13), (0.11, 0.0, 0.0), SKIN),
    _Part("arm_left", "Arm", 0, "shoulder_left", (0, 0.23, 0.18), (0, 0, -0.22), (0.05, 0.05, 0.22)),
    _Part("hand_left", "Hand", 3, "", (0, 0, -0.44), (0, 0, -0.06), (0.03, 0.05, 0.06), SKIN),
    _Part("arm_right", "Arm", 0, "shoulder_right", (0, -0.23, 0.18), (0, 0, -0.22), (0.05, 0.05, 0.22)),
    _Part("hand_right", "Hand", 5, "", (0, 0, -0.44), (0, 0, -0.06), (0.03, 0.05, 0.06), SKIN),
    _Part("leg_left", "Leg", 1, "hip_left", (0, 0.09, -0.18), (0, 0, -0.4), (0.07, 0.07, 0.4)),
    _Part("foot_left", "Foot", 7, "", (0, 0, -0.8), (0.05, 0, -0.04), (0.11, 0.05, 0.04), SKIN),
    _Part("leg_right", "Leg", 1, "hip_right", (0, -0.09, -0.18), (0, 0, -0.4), (0.07, 0.07, 0.4)),
    _Part("foot_right", "Foot", 9, "", (0, 0, -0.8), (0.05, 0, -0.04), (0.11, 0.05, 0.04), SKIN),
)
# Distance from each animated joint to the tip of what it moves (for the motion speed).
TIP_LENGTH = {"neck": 0.24, "shoulder_left": 0.56, "shoulder_right": 0.56, "hip_left": 0.88, "hip_right": 0.88}
# posture: (chest height above the floor, body pitch, joint angles)
POSTURES: dict[str, tuple[float, float, dict[str, float]]] = {
    "standing": (1.28, 0.0, {}),
    "lying": (0.11, -math.pi / 2, {}),  # on the back, head toward -x before yaw
    "trapped": (0.11, math.pi / 2, {}),  # face down
    "sitting": (0.47, 0.0, {"hip_left": -math.pi / 2, "hip_right": -math.pi / 2}),
}


IDENTITY = (0.0, 0.0, 0.0, 1.0)
POSE_PERIOD = 0.05  # s; animated parts are re-posed at 20 Hz, plenty for a waving arm
Pose = tuple[Vec3, tuple[float, float, float, float]]


def _pitch_quaternion(angle: float) -> tuple[float, float, float, float]:
    return rotations.axis_angle_quaternion((0.0, 1.0, 0.0), angle)


def _shape(client: int, half: Vec3, color) -> tuple[int, int]:
    if half[1] == 0.0:
        return (p.createCollisionShape(p.GEOM_SPHERE, radius=half[0], physicsClientId=client),
                p.createVisualShape(p.GEOM_SPHERE, radius=half[0], rgbaColor=color, physicsClientId=client))
    return (p.createCollisionShape(p.GEOM_BOX, halfExtents=half, physicsClientId=client),
            p.createVisualShape(p.GEOM_BOX, halfExtents=half, rgbaColor=color, physicsClientId=client))


class Victim:
    """A victim or false alarm: static part bodies posed from a root pose and joint angles."""

    def __init__(self, client: int, spec: VictimSpec, parts: list[_Part], root: Pose,
                 rest: dict[str, float]) -> None:
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
            col, vis = _shape(client, part.half, part.color)
            self.body_ids.append(p.createMultiBody(0.0, col, vis, pos, orn, physicsClientId=client))
        self.body_id = self.body_ids[0]
        self._part_by_body = {b: part.part for b, part in zip(self.body_ids, parts)}
        self.position: Vec3 = rotations.vec3(self._poses[0][0])

    def _forward(self, angles: dict[str, float]) -> list[Pose]:
        """World pose of every part's shape for the given joint angles."""
        joints: list[Pose] = []
        shapes: list[Pose] = []
        for part in self._parts:
            parent = self._root if part.parent < 0 else joints[part.parent]
            turn = _pitch_quaternion(angles.get(part.joint, 0.0)) if part.joint else IDENTITY
            joint = p.multiplyTransforms(parent[0], parent[1], part.origin, turn)
            joints.append(joint)
            shapes.append(p.multiplyTransforms(joint[0], joint[1], part.offset, IDENTITY))
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


def _humanoid(client: int, spec: VictimSpec) -> Victim:
    height, pitch, angles = POSTURES[spec.posture]
    root = ((spec.xyz[0], spec.xyz[1], spec.xyz[2] + height), rotations.quaternion_from_euler((0.0, pitch, spec.yaw)))
    return Victim(client, spec, list(HUMANOID), root, dict(angles))


def _loose_parts(client: int, spec: VictimSpec) -> Victim:
    """A false alarm: the named parts lying side by side on the floor, 0.3 m apart."""
    by_part = {part.part: part for part in HUMANOID}
    parts = []
    for i, name in enumerate(spec.parts or ["Arm"]):
        half = by_part[name].half
        flat = half if half[1] == 0.0 else (half[2], half[1], half[0])  # long axis along x
        parts.append(_Part(f"part_{i}", name, -1, "", (0.0, 0.3 * i, flat[0] if half[1] == 0.0 else flat[2]),
                           (0, 0, 0), flat, SKIN))
    root = (rotations.vec3(spec.xyz), rotations.quaternion_from_euler((0.0, 0.0, spec.yaw)))
    return Victim(client, spec, parts, root, {})


def build_victim(client: int, spec: VictimSpec) -> Victim:
    """Create a victim (humanoid) or a false alarm (loose parts) in the world."""
    return _loose_parts(client, spec) if spec.false_alarm else _humanoid(client, spec)
