"""Robot bodies: the ``body`` section of a catalogue entry (chassis, wheels, links).

base_link is the chassis box centre. The URDF built from a body is ``usarsim.sim.urdf``'s.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Vec3 = tuple[float, float, float]


@dataclass
class WheelSpec:
    """A wheel (or track roller) on a continuous joint about its y axis."""

    joint: str
    xyz: Vec3
    radius: float
    width: float
    mass: float = 0.5
    parent: str = "base_link"


@dataclass
class LinkSpec:
    """Any other link: flipper, arm segment, pan-tilt stage, rotor ..."""

    name: str
    parent: str = "base_link"
    joint_type: Literal["fixed", "revolute", "continuous", "prismatic"] = "fixed"
    xyz: Vec3 = (0.0, 0.0, 0.0)
    rpy: Vec3 = (0.0, 0.0, 0.0)
    axis: Vec3 = (0.0, 0.0, 1.0)
    shape: Literal["box", "cylinder", "sphere", "none"] = "box"
    size: Vec3 = (0.05, 0.05, 0.05)  # box extents; cylinder (radius, length, 0); sphere (radius, 0, 0)
    shape_xyz: Vec3 = (0.0, 0.0, 0.0)  # geometry offset inside the link
    shape_rpy: Vec3 = (0.0, 0.0, 0.0)
    mass: float = 0.2
    lower: float = 0.0
    upper: float = 0.0
    effort: float = 20.0
    velocity: float = 1.0
    joint: str = ""  # default "<name>_joint"

    @property
    def joint_name(self) -> str:
        """Name of the joint connecting this link to its parent."""
        return self.joint or f"{self.name}_joint"


@dataclass
class BodySpec:
    """Chassis, wheels and extra links of a robot."""

    chassis_size: Vec3
    chassis_mass: float
    wheels: list[WheelSpec] = field(default_factory=list)
    links: list[LinkSpec] = field(default_factory=list)
    color: tuple[float, float, float, float] = (0.8, 0.3, 0.1, 1.0)
    wheel_friction: float = 1.0
    spinning_friction: float = 0.01

    def lowest_point(self) -> float:
        """Lowest z (below base_link) of the chassis and wheels, for spawning on the ground."""
        z = -self.chassis_size[2] / 2.0
        for w in self.wheels:
            z = min(z, w.xyz[2] - w.radius)
        by_name = {link.name: link for link in self.links}

        def origin_z(link: LinkSpec) -> float:
            # Chains (legs) sum their parents' offsets at zero joint angles.
            parent = by_name.get(link.parent)
            return link.xyz[2] + (origin_z(parent) if parent is not None and parent is not link else 0.0)

        for link in self.links:
            if link.shape != "none":
                z = min(z, origin_z(link) + link.shape_xyz[2] - _half_height(link))
        return z


def _half_height(link: LinkSpec) -> float:
    if link.shape == "box":
        return link.size[2] / 2.0
    if link.shape == "cylinder" and link.shape_rpy[0] == 0.0 and link.shape_rpy[1] == 0.0:
        return link.size[1] / 2.0  # upright: URDF cylinders lie along their z axis
    return link.size[0]


def wheel_link_name(joint: str) -> str:
    """Link name of a wheel joint (``left_front_wheel_joint`` -> ``left_front_wheel``)."""
    return joint[: -len("_joint")] if joint.endswith("_joint") else f"{joint}_link"
