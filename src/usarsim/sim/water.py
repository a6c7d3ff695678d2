"""Water volumes of a world: what the world declares and how the camera sees it.

A water volume is an axis-aligned box of water in the world frame: its top is the
surface, ``density`` is the fluid's density and ``current`` the water's velocity.
The world only declares the water and draws it; robots that float, dive or fly read
it through :func:`water_at` to compute their own buoyancy and drag. Everything is in
the core world frame (x north, y west, z up), SI units.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Iterable, Sequence

import pybullet as p

from usarsim.config_loading import ConfigError

Vec3 = tuple[float, float, float]
Rgba = tuple[float, float, float, float]

FRESH_WATER_DENSITY = 1000.0  # kg/m^3
SEA_WATER_DENSITY = 1025.0  # kg/m^3
AIR_DENSITY = 1.225  # kg/m^3 at sea level, 15 degC (ISA): what a blimp displaces outside water


@dataclass(frozen=True)
class WaterSpec:
    """One water volume: ``center`` (x, y) and ``size`` (x, y) of its footprint, from ``bottom`` to ``surface`` (z)."""

    center: tuple[float, float]
    size: tuple[float, float]
    surface: float  # world z of the water surface
    bottom: float  # world z of the lowest water (the bed; solid geometry below it is up to the world)
    density: float = FRESH_WATER_DENSITY  # kg/m^3
    current: Vec3 = (0.0, 0.0, 0.0)  # m/s, world frame: the water's own velocity
    color: Rgba = (0.12, 0.35, 0.5, 0.45)  # the veiling light's colour under water (sim/underwater.py)
    name: str = ""
    # 1/m per red, green, blue channel: coastal water, green carries furthest (sim/underwater.py)
    attenuation: Vec3 = (0.6, 0.2, 0.3)

    def validate(self, source: str) -> None:
        """Reject a volume that cannot hold water, naming the file and the key."""
        label = f"water '{self.name}'" if self.name else "water"
        if min(self.size) <= 0:
            raise ConfigError(f"{source}: {label}: size must be positive, got {list(self.size)}")
        if not self.surface > self.bottom:
            raise ConfigError(f"{source}: {label}: surface ({self.surface}) must be above bottom ({self.bottom})")
        if not self.density > 0:
            raise ConfigError(f"{source}: {label}: density must be positive, got {self.density}")
        if not all(c >= 0 and math.isfinite(c) for c in self.attenuation):
            raise ConfigError(f"{source}: {label}: attenuation must be three finite numbers >= 0 (1/m), "
                              f"got {list(self.attenuation)}")

    def contains(self, point: Sequence[float]) -> bool:
        """True when ``point`` (world x, y, z) lies in the water (surface included)."""
        x, y, z = point[0], point[1], point[2]
        return (abs(x - self.center[0]) <= self.size[0] / 2 and abs(y - self.center[1]) <= self.size[1] / 2
                and self.bottom <= z <= self.surface)

    def depth(self, point: Sequence[float]) -> float:
        """Depth of ``point`` below the surface (negative above it); ignores the footprint."""
        return self.surface - point[2]

    def moved(self, offset: Vec3) -> "WaterSpec":
        """This volume shifted by ``offset`` (the world file's placement)."""
        dx, dy, dz = offset
        return replace(self, center=(self.center[0] + dx, self.center[1] + dy), surface=self.surface + dz,
                       bottom=self.bottom + dz)


def water_at(volumes: Iterable[WaterSpec], point: Sequence[float]) -> WaterSpec | None:
    """The water volume ``point`` lies in, or None in air."""
    return next((w for w in volumes if w.contains(point)), None)


def build_water(client: int, spec: WaterSpec) -> int:
    """The water's body: a box with no collision shape (robots pass into it), drawn fully
    transparent: the camera applies the water's optics itself (sim/underwater.py)."""
    half = (spec.size[0] / 2, spec.size[1] / 2, (spec.surface - spec.bottom) / 2)
    visual = p.createVisualShape(p.GEOM_BOX, halfExtents=half, rgbaColor=(*spec.color[:3], 0.0), physicsClientId=client)
    centre = (spec.center[0], spec.center[1], (spec.surface + spec.bottom) / 2)
    return p.createMultiBody(0, -1, visual, centre, physicsClientId=client)


def submerged_fraction(spec: WaterSpec, z_low: float, z_high: float) -> float:
    """Share (0..1) of a vertical extent z_low..z_high that lies below the surface and above the bottom."""
    if not z_high > z_low or not math.isfinite(z_low + z_high):
        return 0.0
    wet = min(z_high, spec.surface) - max(z_low, spec.bottom)
    return max(0.0, min(1.0, wet / (z_high - z_low)))


__all__ = ["AIR_DENSITY", "FRESH_WATER_DENSITY", "SEA_WATER_DENSITY", "WaterSpec", "build_water",
           "submerged_fraction", "water_at"]
