"""Victims: articulated humanoids whose links carry body-part names, with simple animation.

The victim sensor reports which parts its rays hit (Head, Arm, Hand, Chest, Pelvis,
Leg, Foot); false-alarm objects are loose parts with the same names. Animated
segments swing between an initial and a final angle at a mean angular rate
(worlds-and-robots.md c.4); their tip speed and amplitude feed the human-motion
sensor, and ``sound_db`` the sound sensor.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal, Optional

import numpy as np
import pybullet as p

from usarsim import frames
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
class _Link:
    name: str
    part: str
    parent: int  # index into the link list, -1 = base (Chest)
    joint: str  # "" = fixed
    origin: Vec3  # joint position in the parent's link frame (standing pose)
    offset: Vec3  # shape centre in the link frame
    half: Vec3  # box half extents; a sphere when half[1] == 0 (radius half[0])
    color: tuple[float, float, float, float] = CLOTHES


CHEST_HALF: Vec3 = (0.1, 0.17, 0.22)
# The standing humanoid; the chest is the base at the origin, z up, facing +x.
HUMANOID = (
    _Link("pelvis", "Pelvis", -1, "", (0, 0, -0.22), (0, 0, -0.09), (0.09, 0.16, 0.09)),
    _Link("head", "Head", -1, "neck", (0, 0, 0.22), (0, 0, 0.13), (0.11, 0.0, 0.0), SKIN),
    _Link("arm_left", "Arm", -1, "shoulder_left", (0, 0.23, 0.18), (0, 0, -0.22), (0.05, 0.05, 0.22)),
    _Link("hand_left", "Hand", 2, "", (0, 0, -0.44), (0, 0, -0.06), (0.03, 0.05, 0.06), SKIN),
    _Link("arm_right", "Arm", -1, "shoulder_right", (0, -0.23, 0.18), (0, 0, -0.22), (0.05, 0.05, 0.22)),
    _Link("hand_right", "Hand", 4, "", (0, 0, -0.44), (0, 0, -0.06), (0.03, 0.05, 0.06), SKIN),
    _Link("leg_left", "Leg", 0, "hip_left", (0, 0.09, -0.18), (0, 0, -0.4), (0.07, 0.07, 0.4)),
    _Link("foot_left", "Foot", 6, "", (0, 0, -0.8), (0.05, 0, -0.04), (0.11, 0.05, 0.04), SKIN),
    _Link("leg_right", "Leg", 0, "hip_right", (0, -0.09, -0.18), (0, 0, -0.4), (0.07, 0.07, 0.4)),
    _Link("foot_right", "Foot", 8, "", (0, 0, -0.8), (0.05, 0, -0.04), (0.11, 0.05, 0.04), SKIN),
)
# Distance from each animated joint to the tip of what it moves (for the motion speed).
TIP_LENGTH = {"neck": 0.24, "shoulder_left": 0.56, "shoulder_right": 0.56, "hip_left": 0.88, "hip_right": 0.88}
# posture: (base height above the floor, base pitch, joint angles)
POSTURES: dict[str, tuple[float, float, dict[str, float]]] = {
    "standing": (1.28, 0.0, {}),
    "lying": (0.12, -math.pi / 2, {}),  # on the back, head toward -x before yaw
    "trapped": (0.12, math.pi / 2, {}),  # face down
    "sitting": (0.47, 0.0, {"hip_left": -math.pi / 2, "hip_right": -math.pi / 2}),
}
LINK_MASS = 2.0
HOLD_FORCE = 300.0


def _shape(client: int, link_half: Vec3, offset: Vec3, color) -> tuple[int, int]:
    if link_half[1] == 0.0:
        col = p.createCollisionShape(p.GEOM_SPHERE, radius=link_half[0], collisionFramePosition=offset,
                                     physicsClientId=client)
        vis = p.createVisualShape(p.GEOM_SPHERE, radius=link_half[0], visualFramePosition=offset,
                                  rgbaColor=color, physicsClientId=client)
        return col, vis
    col = p.createCollisionShape(p.GEOM_BOX, halfExtents=link_half, collisionFramePosition=offset,
                                 physicsClientId=client)
    vis = p.createVisualShape(p.GEOM_BOX, halfExtents=link_half, visualFramePosition=offset,
                              rgbaColor=color, physicsClientId=client)
    return col, vis


class Victim:
    """A victim or false alarm built in PyBullet."""

    def __init__(self, client: int, spec: VictimSpec, body_id: int, links: list[_Link],
                 base_part: str, base_offset: Vec3) -> None:
        self.client = client
        self.spec = spec
        self.id = spec.id
        self.false_alarm = spec.false_alarm
        self.sound_db = spec.sound_db
        self.body_id = body_id
        self._links = links
        self._base_part = base_part
        self._base_offset = base_offset
        self._joint_index = {link.joint: i for i, link in enumerate(links) if link.joint}
        posture = POSTURES[spec.posture] if not spec.false_alarm else (0.0, 0.0, {})
        self._rest = {joint: posture[2].get(joint, 0.0) for joint in self._joint_index}
        self._time = 0.0
        self.position: Vec3 = tuple(p.getBasePositionAndOrientation(body_id, physicsClientId=client)[0])
        self._hold(self._rest)

    def part_of_link(self, link_index: int) -> str | None:
        """Body-part name of link ``link_index`` (-1 = base)."""
        if link_index == -1:
            return self._base_part
        if 0 <= link_index < len(self._links):
            return self._links[link_index].part
        return None

    def parts(self) -> list[tuple[str, Vec3]]:
        """Each part's current world position (centre of its shape)."""
        pos, orn = p.getBasePositionAndOrientation(self.body_id, physicsClientId=self.client)
        out = [(self._base_part, _transform(pos, orn, self._base_offset))]
        if self._links:
            states = p.getLinkStates(self.body_id, list(range(len(self._links))), physicsClientId=self.client)
            for link, state in zip(self._links, states):
                out.append((link.part, _transform(state[4], state[5], link.offset)))
        return out

    def _angles(self, t: float) -> tuple[dict[str, float], float, float]:
        """Joint targets at time t, plus the fastest tip speed and the largest amplitude now."""
        angles = dict(self._rest)
        speed = amplitude = 0.0
        for seg in self.spec.segments:
            span = seg.final - seg.init
            if span == 0.0 or seg.rate <= 0.0 or seg.joint not in angles:
                continue
            omega = math.pi * seg.rate * self.spec.anim_timer / abs(span)
            angles[seg.joint] = self._rest[seg.joint] + seg.init + span * 0.5 * (1 - math.cos(omega * t))
            length = TIP_LENGTH[seg.joint]
            speed = max(speed, abs(span * 0.5 * omega * math.sin(omega * t)) * length)
            amplitude = max(amplitude, abs(span) * length)
        return angles, speed, amplitude

    def motion(self) -> tuple[float, float]:
        """(tip speed m/s, amplitude m) of the current animation; (0, 0) for a still victim."""
        _, speed, amplitude = self._angles(self._time)
        return speed, amplitude

    def update(self, t: float) -> None:
        """Drive the animated joints to their pose at sim time ``t``."""
        self._time = t
        if self.spec.segments:
            self._hold(self._angles(t)[0])

    def _hold(self, angles: dict[str, float]) -> None:
        if not angles:
            return
        joints = [self._joint_index[j] for j in angles]
        p.setJointMotorControlArray(self.body_id, joints, p.POSITION_CONTROL, targetPositions=list(angles.values()),
                                    forces=[HOLD_FORCE] * len(joints), physicsClientId=self.client)


def _transform(pos, orn, offset: Vec3) -> Vec3:
    rot = np.array(p.getMatrixFromQuaternion(orn)).reshape(3, 3)
    return tuple(float(v) for v in np.asarray(pos) + rot @ np.asarray(offset))


def _in_pybullet_order(client: int, body: int, links: list[_Link]) -> list[_Link]:
    """``links`` re-indexed as PyBullet stores them (it sorts links depth-first by parent;
    createMultiBody names the joint of our i-th link 'joint<i+1>')."""
    names = [p.getJointInfo(body, i, physicsClientId=client)[1].decode() for i in range(len(links))]
    return [links[int(name.removeprefix("joint")) - 1] for name in names]


def _humanoid(client: int, spec: VictimSpec) -> Victim:
    height, pitch, angles = POSTURES[spec.posture]
    base_col, base_vis = _shape(client, CHEST_HALF, (0, 0, 0), CLOTHES)
    shapes = [_shape(client, link.half, link.offset, link.color) for link in HUMANOID]
    body = p.createMultiBody(
        0.0, base_col, base_vis, (spec.xyz[0], spec.xyz[1], spec.xyz[2] + height),
        frames.quaternion_from_euler((0.0, pitch, spec.yaw)),
        linkMasses=[LINK_MASS] * len(HUMANOID),
        linkCollisionShapeIndices=[s[0] for s in shapes],
        linkVisualShapeIndices=[s[1] for s in shapes],
        linkPositions=[link.origin for link in HUMANOID],
        linkOrientations=[(0, 0, 0, 1)] * len(HUMANOID),
        linkInertialFramePositions=[(0, 0, 0)] * len(HUMANOID),
        linkInertialFrameOrientations=[(0, 0, 0, 1)] * len(HUMANOID),
        linkParentIndices=[link.parent + 1 for link in HUMANOID],  # PyBullet counts the base as 0 here
        linkJointTypes=[p.JOINT_REVOLUTE if link.joint else p.JOINT_FIXED for link in HUMANOID],
        linkJointAxis=[(0, 1, 0)] * len(HUMANOID),
        physicsClientId=client)
    links = _in_pybullet_order(client, body, list(HUMANOID))
    for i, link in enumerate(links):
        if link.joint:
            p.resetJointState(body, i, angles.get(link.joint, 0.0), physicsClientId=client)
    return Victim(client, spec, body, links, "Chest", (0.0, 0.0, 0.0))


def _loose_parts(client: int, spec: VictimSpec) -> Victim:
    """A false alarm: the named parts lying side by side on the floor, as one static body."""
    by_part = {link.part: link for link in HUMANOID}
    names = spec.parts or ["Arm"]
    halves = [CHEST_HALF if n == "Chest" else by_part[n].half for n in names]
    # lie each part down along x: swap its long z extent into x
    flat = [(h[0], 0.0, 0.0) if h[1] == 0.0 else (h[2], h[1], h[0]) for h in halves]
    heights = [h[0] if h[1] == 0.0 else h[2] for h in flat]
    base_col, base_vis = _shape(client, flat[0], (0, 0, 0), SKIN)
    rest = [_shape(client, h, (0, 0, 0), SKIN) for h in flat[1:]]
    links = [_Link(f"part_{i}", n, -1, "", (0, 0.3 * i, heights[i] - heights[0]), (0, 0, 0), flat[i])
             for i, n in enumerate(names) if i > 0]
    body = p.createMultiBody(
        0.0, base_col, base_vis, (spec.xyz[0], spec.xyz[1], spec.xyz[2] + heights[0]),
        frames.quaternion_from_euler((0.0, 0.0, spec.yaw)),
        linkMasses=[0.0] * len(links), linkCollisionShapeIndices=[s[0] for s in rest],
        linkVisualShapeIndices=[s[1] for s in rest], linkPositions=[link.origin for link in links],
        linkOrientations=[(0, 0, 0, 1)] * len(links), linkInertialFramePositions=[(0, 0, 0)] * len(links),
        linkInertialFrameOrientations=[(0, 0, 0, 1)] * len(links), linkParentIndices=[0] * len(links),
        linkJointTypes=[p.JOINT_FIXED] * len(links), linkJointAxis=[(0, 0, 1)] * len(links),
        physicsClientId=client)
    return Victim(client, spec, body, _in_pybullet_order(client, body, links), names[0], (0.0, 0.0, 0.0))


def build_victim(client: int, spec: VictimSpec) -> Victim:
    """Create a victim (humanoid) or a false alarm (loose parts) in the world."""
    return _loose_parts(client, spec) if spec.false_alarm else _humanoid(client, spec)
