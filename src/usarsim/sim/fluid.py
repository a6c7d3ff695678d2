"""Bodies in a fluid: buoyancy and drag per link, from each link's own shape.

Used for robots in a world's water volumes (``water:`` in the world file) and for
the blimp's flight in air. The model (docs/robots.md, "Fluids"):

- A link's shape (box, cylinder, sphere of the catalogue body) gives its volume,
  its frontal area along each of its own axes and its extent along world z.
- Buoyancy: density * g * volume * submerged fraction, upward, at the centre of the
  submerged part. The fraction is how much of the shape's vertical extent lies
  below the surface and above the water's bottom (``water.submerged_fraction``; exact
  for an upright box, an approximation otherwise). In air the fluid fills all space.
- Drag: per shape axis, 1/2 * density * Cd * area * v (|v| + 0.1 m/s) on the velocity
  relative to the fluid (the water's current), Cd = 1 (a bluff face); turning is resisted
  by the strip-theory torque density * Cd * width * (l^4) / 64 * w (|w| + 0.1 rad/s) of each
  extent. The 0.1 terms are the linear (skin-friction) part of the damping.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Sequence

import numpy as np
import pybullet as p

from usarsim import rotations
from usarsim.sim.body import wheel_link_name
from usarsim.sim.water import WaterSpec, submerged_fraction

if TYPE_CHECKING:
    from usarsim.sim.robot import Robot

Vec3 = tuple[float, float, float]
DRAG_COEFFICIENT = 1.0
# Linear part of the drag (Fossen's linear + quadratic damping): slow drifts die out instead of
# coasting for minutes, as skin friction and added mass make them do in real water.
LINEAR_SPEED = 0.1  # m/s or rad/s


@dataclass(frozen=True)
class FluidElement:
    """One collision shape of a robot, in the frame of the (possibly merged) link that carries it."""

    link: str
    offset: Vec3  # shape centre in the link frame
    rotation: tuple[float, ...]  # 3x3 row-major: shape frame in the link frame
    extents: Vec3  # full extents along the shape's own axes
    volume: float
    areas: Vec3  # frontal area seen along each shape axis


def _element(link: str, shape: str, size: Sequence[float], xyz: Sequence[float],
             rpy: Sequence[float]) -> FluidElement | None:
    if shape == "box":
        ex, ey, ez = (float(size[0]), float(size[1]), float(size[2]))
        volume, areas = ex * ey * ez, (ey * ez, ex * ez, ex * ey)
    elif shape == "cylinder":  # URDF cylinders lie along their own z axis
        r, length = float(size[0]), float(size[1])
        ex, ey, ez = 2 * r, 2 * r, length
        volume, areas = math.pi * r * r * length, (2 * r * length, 2 * r * length, math.pi * r * r)
    elif shape == "sphere":
        r = float(size[0])
        ex = ey = ez = 2 * r
        volume, areas = 4.0 / 3.0 * math.pi * r ** 3, (math.pi * r * r,) * 3
    else:
        return None
    rot = rotations.rotation_matrix(rotations.quaternion_from_euler(tuple(rpy)))
    return FluidElement(link, (float(xyz[0]), float(xyz[1]), float(xyz[2])), tuple(rot.flatten().tolist()),
                        (ex, ey, ez), volume, areas)


def robot_elements(robot: "Robot") -> list[FluidElement]:
    """Every collision shape of a robot's catalogue body (chassis, wheels, links)."""
    body = robot.spec.body
    half_pi = math.pi / 2.0
    items = [_element("base_link", "box", body.chassis_size, (0, 0, 0), (0, 0, 0))]
    items += [_element(wheel_link_name(w.joint), "cylinder", (w.radius, w.width, 0), (0, 0, 0), (half_pi, 0, 0))
              for w in body.wheels]
    items += [_element(link.name, link.shape, link.size, link.shape_xyz, link.shape_rpy) for link in body.links]
    return [e for e in items if e is not None]


def total_volume(elements: Iterable[FluidElement]) -> float:
    """Displaced volume (m^3) when every element is submerged."""
    return sum(e.volume for e in elements)


@dataclass(frozen=True)
class FluidForce:
    """Force (N) at a world point and torque (N m), both in the world frame."""

    force: np.ndarray
    at: np.ndarray
    torque: np.ndarray


def element_forces(element: FluidElement, position: np.ndarray, rotation: np.ndarray, velocity: np.ndarray,
                   angular_velocity: np.ndarray, density: float, gravity: float, water: WaterSpec | None,
                   current: np.ndarray) -> FluidForce | None:
    """Buoyancy and drag on one element whose link frame is at ``position``/``rotation``.

    ``velocity`` is the world velocity of the element's centre; ``water`` the volume whose
    surface and bottom bound the fluid (None: the fluid fills all space, as air does). None
    when the element is out of the fluid.
    """
    shape_rot = rotation @ np.array(element.rotation).reshape(3, 3)
    centre = position + rotation @ np.array(element.offset)
    half = np.array(element.extents) / 2.0
    half_z = float(np.abs(shape_rot[2]) @ half)
    bottom, top = centre[2] - half_z, centre[2] + half_z
    if water is None:
        fraction, wet_bottom, wet_top = 1.0, bottom, top
    else:
        fraction = submerged_fraction(water, bottom, top)
        if fraction <= 0.0:
            return None
        wet_bottom, wet_top = max(bottom, water.bottom), min(top, water.surface)
    buoyancy = density * abs(gravity) * element.volume * fraction
    at = np.array([centre[0], centre[1], (wet_bottom + wet_top) / 2.0])
    drag_force, drag_torque = _drag(element, shape_rot, velocity - current, angular_velocity, density * fraction)
    return FluidForce(drag_force + np.array([0.0, 0.0, buoyancy]), at, drag_torque)


def _drag(element: FluidElement, shape_rot: np.ndarray, velocity: np.ndarray, angular_velocity: np.ndarray,
          density: float) -> tuple[np.ndarray, np.ndarray]:
    """World drag force and torque of one element moving at ``velocity`` through still fluid."""
    local_v = shape_rot.T @ velocity
    force = -0.5 * density * DRAG_COEFFICIENT * np.array(element.areas) * local_v * (np.abs(local_v) + LINEAR_SPEED)
    ex, ey, ez = element.extents
    local_w = shape_rot.T @ angular_velocity
    # strip theory: rotation about one axis drags the two other extents through the fluid
    arms = np.array([ex * (ey ** 4 + ez ** 4), ey * (ex ** 4 + ez ** 4), ez * (ex ** 4 + ey ** 4)]) / 64.0
    torque = -density * DRAG_COEFFICIENT * arms * local_w * (np.abs(local_w) + LINEAR_SPEED)
    return shape_rot @ force, shape_rot @ torque


def rigid_drag(elements: Iterable[FluidElement], rotation: np.ndarray, velocity: np.ndarray,
               angular_velocity: np.ndarray, density: float) -> tuple[np.ndarray, np.ndarray]:
    """Total drag force and torque (about each element's centre) of a rigid body's elements at
    orientation ``rotation``: what a controller must overcome to hold that motion."""
    force, torque = np.zeros(3), np.zeros(3)
    for element in elements:
        shape_rot = rotation @ np.array(element.rotation).reshape(3, 3)
        f, t = _drag(element, shape_rot, velocity, angular_velocity, density)
        force, torque = force + f, torque + t
    return force, torque


def water_column_at(volumes: Sequence[WaterSpec], point: "Sequence[float] | np.ndarray") -> WaterSpec | None:
    """The water volume whose column holds ``point``: within its footprint and above its bottom, also
    above the surface (a floating body's dry parts are found and given no buoyancy; ``water.water_at``
    answers whether the point is in the water itself), or None."""
    return next((v for v in volumes if v.contains((point[0], point[1], min(point[2], v.surface)))), None)


class FluidBody:
    """Applies fluid forces to every shape of one robot each tick."""

    def __init__(self, robot: "Robot") -> None:
        self.robot = robot
        self.elements = robot_elements(robot)

    def apply(self, density: float, gravity: float, water: WaterSpec | None, current: np.ndarray) -> None:
        """Buoyancy (none with ``gravity`` 0) and drag on each element in the fluid: ``water``'s volume
        (elements outside its footprint or below its bottom are skipped), or with None a fluid that
        fills all space (air). ``current`` is the fluid's velocity (world frame)."""
        robot = self.robot
        for element in self.elements:
            link_index, position, rotation, lin, ang, com = robot.link_motion(element.link)
            centre = position + rotation @ np.array(element.offset)
            if water is not None and water_column_at([water], centre) is None:
                continue
            velocity = lin + np.cross(ang, centre - com)
            result = element_forces(element, position, rotation, velocity, ang, density, gravity, water, current)
            if result is None:
                continue
            p.applyExternalForce(robot.body_id, link_index, result.force.tolist(), result.at.tolist(), p.WORLD_FRAME,
                                 physicsClientId=robot.client)
            p.applyExternalTorque(robot.body_id, link_index, result.torque.tolist(), p.WORLD_FRAME,
                                  physicsClientId=robot.client)


class Water:
    """The world's water volumes acting on every robot."""

    def __init__(self, volumes: Sequence[WaterSpec], gravity: float) -> None:
        self.volumes = list(volumes)
        self.gravity = gravity
        self._bodies: dict[int, FluidBody] = {}  # by PyBullet body id: this tick's robots only

    def apply(self, robots: Iterable["Robot"]) -> None:
        """Forces for this tick (PyBullet clears external forces after each step)."""
        if not self.volumes:
            return
        bodies: dict[int, FluidBody] = {}
        for robot in robots:
            body = self._bodies.get(robot.body_id)
            if body is None or body.robot is not robot:
                body = FluidBody(robot)
            bodies[robot.body_id] = body
            volume = water_column_at(self.volumes, robot.base.position)
            if volume is None:
                continue
            body.apply(volume.density, self.gravity, volume, np.array(volume.current))
        self._bodies = bodies  # removed robots are let go

    def at(self, point: "Sequence[float] | np.ndarray") -> WaterSpec | None:
        """The water volume over or around ``point``, if any."""
        return water_column_at(self.volumes, point)

    def depth(self, point: "Sequence[float] | np.ndarray") -> float | None:
        """Depth below the surface of the water at ``point`` (negative above it; None outside any water)."""
        volume = self.at(point)
        return None if volume is None else float(volume.depth(tuple(point)))


__all__ = ["FluidBody", "FluidElement", "Water", "element_forces", "rigid_drag", "robot_elements",
           "total_volume", "water_column_at"]
