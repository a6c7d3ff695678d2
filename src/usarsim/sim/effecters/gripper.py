"""Two-finger gripper (spec sensors.md §18, protocol.md §9 ``[USARBot.Gripper]``).

``SET {Type Gripper} {Name Gripper} {Opcode Open} {Params x}``: x is the
angle between the fingers in rad (0 closed, ``max_angle`` fully open; the
manual's ``Params 1`` opens, ``Params 0`` closes). ``Close`` is ``Open 0``.
Each finger turns outward by half the opening.

Grasping: physics friction alone makes held objects slip and jitter in a
position-controlled hand, so, as USARSim's gripper did with its KActors,
an object touched by both fingers while the hand closes is attached to the
palm by a fixed constraint. Opening wider than the grasp releases it. Only
movable objects (mass > 0) can be grasped.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import pybullet as p

from usarsim.sim.effecters import Effecter, register
from usarsim.sim.devices import CommandResult

if TYPE_CHECKING:
    from usarsim.sim.catalogue import EffecterSpec
    from usarsim.sim.robot import JointGroup, Robot

# Opening more than this beyond the grasped width releases the object.
RELEASE_MARGIN = 0.02


@register("Gripper")
class Gripper(Effecter):
    """Opens and closes two finger joints; grasps what both fingers touch while closing."""

    opcodes: dict[str, tuple[float, float]] = {"Open": (0.0, 1.57), "Close": (0.0, 0.0)}
    defaults: ClassVar[dict[str, Any]] = {"left_finger": "", "right_finger": "", "min_angle": 0.0, "max_angle": 1.57,
                                          "max_speed": 1.0, "max_torque": 10.0, "max_force": 500.0, "weight": 0.4}

    @classmethod
    def checked_params(cls, spec: "EffecterSpec") -> dict[str, Any]:
        prm = super().checked_params(spec)
        if not prm["left_finger"] or not prm["right_finger"]:
            raise ValueError(f"effecter '{spec.name}' (Gripper): left_finger and right_finger joints are required")
        return prm

    def __init__(self, spec: "EffecterSpec", robot: "Robot") -> None:
        super().__init__(spec, robot)
        prm = self.checked_params(spec)
        self.left = robot.joint_index(str(prm["left_finger"]))
        self.right = robot.joint_index(str(prm["right_finger"]))
        self.min_angle = float(prm["min_angle"])
        self.max_angle = float(prm["max_angle"])
        self.max_speed = float(prm["max_speed"])
        self.max_torque = float(prm["max_torque"])
        self.max_force = float(prm["max_force"])
        self.opcodes = {"Open": (self.min_angle, self.max_angle), "Close": (0.0, 0.0)}
        # the palm is the fingers' common parent link
        self.palm = p.getJointInfo(robot.body_id, self.left, physicsClientId=robot.client)[16]
        self._finger_group = self._find_group()  # the robot's joint groups are made before its effecters
        self.target = self.opening()
        self.grasped: int | None = None  # body id held
        self._constraint: int | None = None
        self._grasp_width = 0.0

    # --- state ------------------------------------------------------------------------------
    def opening(self) -> float:
        """Current angle between the fingers, rad."""
        left, right = p.getJointStates(self.robot.body_id, (self.left, self.right), physicsClientId=self.robot.client)
        return left[0] + right[0]

    def _find_group(self) -> tuple["JointGroup", int, int] | None:
        """The joint group both fingers belong to, with their link numbers in it (None if none)."""
        for group in self.robot.joint_groups.values():
            if self.left in group.indices and self.right in group.indices:
                return group, group.indices.index(self.left) + 1, group.indices.index(self.right) + 1
        return None

    # --- commands ---------------------------------------------------------------------------
    def command(self, opcode: str, params: tuple[Any, ...]) -> CommandResult:
        op = opcode.upper()
        if op == "CLOSE":
            angle = self.min_angle
        elif op == "OPEN":
            try:
                angle = float(params[0]) if params else self.max_angle
            except (TypeError, ValueError):
                return CommandResult(False, message="Open needs the finger opening in rad")
            if angle != angle or angle in (float("inf"), float("-inf")):
                return CommandResult(False, message="Open needs a finite opening")
        else:
            return super().command(opcode, params)
        self.set_opening(angle)
        return CommandResult(True, (("Open", self.target),))

    def set_opening(self, angle: float) -> None:
        """Drive the fingers towards ``angle`` between them (clamped to the gripper's range)."""
        self.target = max(self.min_angle, min(self.max_angle, angle))
        if self.grasped is not None and self.target > self._grasp_width + RELEASE_MARGIN:
            self.release()
        half = self.target / 2.0
        found = self._finger_group
        if found is not None:  # keep the joint group's targets (MISSTA, PTZ) consistent
            group, ln, rn = found
            group.command(ln, half)
            group.command(rn, half)
            return
        for index in (self.left, self.right):
            p.setJointMotorControl2(self.robot.body_id, index, p.POSITION_CONTROL, targetPosition=half,
                                    maxVelocity=self.max_speed, force=self.max_torque, physicsClientId=self.robot.client)

    def release(self) -> None:
        """Let go of the held object."""
        if self._constraint is not None:
            try:
                p.removeConstraint(self._constraint, physicsClientId=self.robot.client)
            except p.error:  # the object was removed from the world
                pass
        self._constraint = None
        self.grasped = None

    # --- per tick ---------------------------------------------------------------------------
    def commanded_opening(self) -> float:
        """The opening the fingers are driven to: the joint group's targets when the fingers form
        one (a MISPKG or ROS group command moves them without an Open opcode), else the last Open."""
        found = self._finger_group
        if found is None:
            return self.target
        group, ln, rn = found
        return group.targets[ln - 1] + group.targets[rn - 1]

    def update(self, dt: float) -> None:
        """Attach an object squeezed between both fingers while closing; let go when opened wider."""
        commanded = self.commanded_opening()
        if self.grasped is not None:
            if commanded > self._grasp_width + RELEASE_MARGIN:
                self.release()
            return
        if commanded > self.opening() + 1e-3:  # opening: nothing to catch
            return
        left = self._touching(self.left)
        touched = left & self._touching(self.right) if left else left  # one contact query while nothing is near
        if touched:
            self._attach(min(touched))

    def _touching(self, link: int) -> set[int]:
        client, body = self.robot.client, self.robot.body_id
        out = set()
        for cp in p.getContactPoints(bodyA=body, linkIndexA=link, physicsClientId=client):
            other = cp[2]
            if other != body and p.getDynamicsInfo(other, -1, physicsClientId=client)[0] > 0:
                out.add(other)
        return out

    def _attach(self, other: int) -> None:
        client, body = self.robot.client, self.robot.body_id
        palm = p.getLinkState(body, self.palm, physicsClientId=client) if self.palm >= 0 else None
        palm_pos, palm_orn = (palm[0], palm[1]) if palm else p.getBasePositionAndOrientation(body, physicsClientId=client)
        obj_pos, obj_orn = p.getBasePositionAndOrientation(other, physicsClientId=client)
        inv_pos, inv_orn = p.invertTransform(palm_pos, palm_orn)
        rel_pos, rel_orn = p.multiplyTransforms(inv_pos, inv_orn, obj_pos, obj_orn)
        # constraint frames are relative to the centres of mass, which getLinkState[0:2] give
        self._constraint = p.createConstraint(body, self.palm, other, -1, p.JOINT_FIXED, (0, 0, 0),
                                              rel_pos, (0, 0, 0), rel_orn, (0, 0, 0, 1), physicsClientId=client)
        p.changeConstraint(self._constraint, maxForce=self.max_force, physicsClientId=client)
        self.grasped = other
        self._grasp_width = self.opening()
        # hold the fingers where they closed on the object instead of squeezing through it
        self.set_opening(self._grasp_width)
