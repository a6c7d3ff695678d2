"""URDF of a catalogue entry: its body, wheels, links and sensor frames.

The URDF in ``urdf/<Class>.urdf`` is generated from the catalogue (``usarsim urdf``) so
that PyBullet and robot_state_publisher load the same model; sensors get fixed frames
from their mounts.
"""
from __future__ import annotations

from typing import TYPE_CHECKING
from xml.sax.saxutils import quoteattr

from usarsim.sim.body import Vec3, wheel_link_name
from usarsim.sim.ros2_control import ros2_control_xml

if TYPE_CHECKING:
    from usarsim.sim.catalogue import RobotSpec


def _fmt(v: tuple[float, ...]) -> str:
    return " ".join(f"{x:.6g}" for x in v)


def _inertia(shape: str, size: Vec3, mass: float) -> tuple[float, float, float]:
    if shape == "box":
        x, y, z = size
        return (mass * (y * y + z * z) / 12.0, mass * (x * x + z * z) / 12.0, mass * (x * x + y * y) / 12.0)
    if shape == "cylinder":
        r, h = size[0], size[1]
        side = mass * (3 * r * r + h * h) / 12.0
        return (side, side, mass * r * r / 2.0)
    if shape == "sphere":
        i = 0.4 * mass * size[0] ** 2
        return (i, i, i)
    return (1e-5, 1e-5, 1e-5)


def _geometry(shape: str, size: Vec3) -> str:
    if shape == "box":
        return f'<box size="{_fmt(size)}"/>'
    if shape == "cylinder":
        return f'<cylinder radius="{size[0]:.6g}" length="{size[1]:.6g}"/>'
    return f'<sphere radius="{size[0]:.6g}"/>'


def _link_xml(name: str, shape: str, size: Vec3, mass: float, color: str,
              shape_xyz: Vec3 = (0.0, 0.0, 0.0), shape_rpy: Vec3 = (0.0, 0.0, 0.0)) -> str:
    ixx, iyy, izz = _inertia(shape, size, mass)
    origin = f'<origin xyz="{_fmt(shape_xyz)}" rpy="{_fmt(shape_rpy)}"/>'
    parts = [f"  <link name={quoteattr(name)}>",
             f'    <inertial>{origin}<mass value="{mass:.6g}"/>'
             f'<inertia ixx="{ixx:.6g}" ixy="0" ixz="0" iyy="{iyy:.6g}" iyz="0" izz="{izz:.6g}"/></inertial>']
    if shape != "none":
        geom = _geometry(shape, size)
        parts.append(f"    <visual>{origin}<geometry>{geom}</geometry>"
                     f'<material name="{name}_mat"><color rgba="{color}"/></material></visual>')
        parts.append(f"    <collision>{origin}<geometry>{geom}</geometry></collision>")
    parts.append("  </link>")
    return "\n".join(parts)


def _joint_xml(name: str, jtype: str, parent: str, child: str, xyz: Vec3, rpy: Vec3,
               axis: Vec3 | None = None, limits: tuple[float, float, float, float] | None = None) -> str:
    parts = [f"  <joint name={quoteattr(name)} type={quoteattr(jtype)}>",
             f"    <parent link={quoteattr(parent)}/><child link={quoteattr(child)}/>",
             f'    <origin xyz="{_fmt(xyz)}" rpy="{_fmt(rpy)}"/>']
    if axis is not None:
        parts.append(f'    <axis xyz="{_fmt(axis)}"/>')
    if limits is not None:
        lower, upper, effort, velocity = limits
        # A continuous joint has no position limits; writing lower = upper = 0 would make PyBullet
        # clamp every position target (a wheel brake's hold) to 0.
        bounds = "" if jtype == "continuous" else f'lower="{lower:.6g}" upper="{upper:.6g}" '
        parts.append(f'    <limit {bounds}effort="{effort:.6g}" velocity="{velocity:.6g}"/>')
    parts.append("  </joint>")
    return "\n".join(parts)


def generate_urdf(spec: "RobotSpec") -> str:
    """URDF text for a catalogue entry: chassis, wheels, links, sensor frames and the ros2_control block."""
    body = spec.body
    rgba = _fmt(body.color)
    out = ['<?xml version="1.0"?>',
           f"<!-- Generated from config/robots/{spec.class_name}.yaml by `usarsim urdf`; do not edit. -->",
           f"<robot name={quoteattr(spec.class_name)}>",
           _link_xml("base_link", "box", body.chassis_size, body.chassis_mass, rgba)]
    for wheel in body.wheels:
        wheel_link = wheel_link_name(wheel.joint)
        out.append(_link_xml(wheel_link, "cylinder", (wheel.radius, wheel.width, 0.0), wheel.mass, "0.1 0.1 0.1 1",
                             shape_rpy=(1.5707963267948966, 0.0, 0.0)))
        out.append(_joint_xml(wheel.joint, "continuous", wheel.parent, wheel_link, wheel.xyz, (0.0, 0.0, 0.0),
                              axis=(0.0, 1.0, 0.0),
                              limits=(0.0, 0.0, spec.drive.max_torque, max(spec.drive.max_wheel_speed, 1.0))))
    for link in body.links:
        out.append(_link_xml(link.name, link.shape, link.size, link.mass, rgba, link.shape_xyz, link.shape_rpy))
        movable = link.joint_type != "fixed"
        limits = (link.lower, link.upper, link.effort, link.velocity) if movable else None
        out.append(_joint_xml(link.joint_name, link.joint_type, link.parent, link.name, link.xyz, link.rpy,
                              axis=link.axis if movable else None, limits=limits))
    existing = {"base_link", *(wheel_link_name(w.joint) for w in body.wheels), *(link.name for link in body.links)}
    for sensor in spec.sensors:
        frame = sensor.frame_id
        if frame in existing:  # e.g. odometry reported in base_link: no extra frame
            continue
        existing.add(frame)
        out.append(_link_xml(frame, "none", (0.0, 0.0, 0.0), 0.0, rgba))
        out.append(_joint_xml(f"{frame}_joint", "fixed", sensor.mount.parent, frame, sensor.mount.xyz, sensor.mount.rpy))
    out += ros2_control_xml(spec)
    out.append("</robot>")
    return "\n".join(out) + "\n"
