"""MISPKG's terminal-pose mode: the package's end link is given a pose, its joints are solved by
PyBullet's inverse kinematics (``calculateInverseKinematics``) on a fixed-base copy of the robot.

The copy lives in its own DIRECT client (one per robot body and simulation), starts from the robot's current
joint positions and is iterated: each round solves, keeps only the package's joints (clamped to
their limits) and measures the end link by forward kinematics. The pose counts as reached when
the end link is within ``POSITION_TOLERANCE`` of the target (and ``ANGLE_TOLERANCE`` of a given
orientation); otherwise nothing moves and the command fails.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import numpy as np
import pybullet as p

from usarsim import rotations
from usarsim.sim.catalogue import JointGroupSpec, RobotSpec
from usarsim.sim.commands import CommandError
from usarsim.sim.quiet import quiet_stdout

if TYPE_CHECKING:
    from usarsim.sim.robot import Robot

POSITION_TOLERANCE = 0.01  # m
ANGLE_TOLERANCE = 0.05  # rad
ROUNDS = 40


@dataclass(frozen=True)
class Solution:
    """Joint targets of the package's links (1-based order) and the remaining end-link error."""

    values: tuple[float, ...]
    position_error: float
    angle_error: float

    @property
    def reached(self) -> bool:
        """True when the pose is within tolerance."""
        return self.position_error <= POSITION_TOLERANCE and self.angle_error <= ANGLE_TOLERANCE


class ReachSolver:
    """Inverse kinematics of one robot class's joint groups."""

    def __init__(self, spec: RobotSpec) -> None:
        self.spec = spec
        with quiet_stdout():
            self.client = p.connect(p.DIRECT)
            self.body = p.loadURDF(str(spec.urdf_path), (0, 0, 0), (0, 0, 0, 1), useFixedBase=True,
                                   physicsClientId=self.client)
        self.joints: dict[str, int] = {}
        self.links: dict[str, int] = {}
        self.movable: list[int] = []
        for i in range(p.getNumJoints(self.body, physicsClientId=self.client)):
            info = p.getJointInfo(self.body, i, physicsClientId=self.client)
            self.joints[info[1].decode()] = i
            self.links[info[12].decode()] = i
            if info[2] != p.JOINT_FIXED:
                self.movable.append(i)

    def end_link(self, group: JointGroupSpec) -> int:
        """Index of the link moved by the group's last joint."""
        last = group.links[-1].joint
        for link in self.spec.body.links:
            if link.joint_name == last:
                return self.links[link.name]
        raise CommandError(f"{group.name}: its last joint '{last}' moves no link of the body")

    def end_pose(self, group: JointGroupSpec, positions: dict[str, float]) -> tuple[np.ndarray, np.ndarray]:
        """Base-frame position and rotation of the group's end link with the joints at ``positions``."""
        self._set(positions)
        state = p.getLinkState(self.body, self.end_link(group), computeForwardKinematics=True,
                               physicsClientId=self.client)
        return np.array(state[4]), rotations.rotation_matrix(tuple(state[5]))

    def solve(self, group: JointGroupSpec, current: dict[str, float], position: Sequence[float],
              rpy: Sequence[float] | None = None) -> Solution:
        """Joint values putting the end link at ``position`` (base frame, m) [and ``rpy``]."""
        end = self.end_link(group)
        self._set(current)
        target = [float(v) for v in position]
        orientation = rotations.quaternion_from_euler(tuple(rpy)) if rpy is not None else None
        best: Solution | None = None
        values = [current.get(link.joint, 0.0) for link in group.links]
        for _ in range(ROUNDS):
            if orientation is None:
                result = p.calculateInverseKinematics(self.body, end, target, maxNumIterations=100,
                                                      residualThreshold=1e-5, physicsClientId=self.client)
            else:
                result = p.calculateInverseKinematics(self.body, end, target, orientation, maxNumIterations=100,
                                                      residualThreshold=1e-5, physicsClientId=self.client)
            by_index = dict(zip(self.movable, result))
            values = [link.clamp(by_index[self.joints[link.joint]]) for link in group.links]
            self._set({link.joint: v for link, v in zip(group.links, values)})
            solution = self._error(end, target, orientation, values)
            if best is None or solution.position_error + solution.angle_error < best.position_error + best.angle_error:
                best = solution
            if best.position_error < POSITION_TOLERANCE / 10 and best.angle_error < ANGLE_TOLERANCE / 10:
                break
        assert best is not None
        return best

    def _error(self, end: int, target: list[float], orientation: tuple[float, ...] | None,
               values: list[float]) -> Solution:
        state = p.getLinkState(self.body, end, computeForwardKinematics=True, physicsClientId=self.client)
        position_error = float(np.linalg.norm(np.array(state[4]) - np.array(target)))
        angle_error = 0.0
        if orientation is not None:
            dot = abs(float(np.dot(np.array(state[5]), np.array(orientation))))
            angle_error = 2.0 * math.acos(min(1.0, dot))
        return Solution(tuple(values), position_error, angle_error)

    def _set(self, positions: dict[str, float]) -> None:
        for name, value in positions.items():
            if name in self.joints:
                p.resetJointState(self.body, self.joints[name], value, physicsClientId=self.client)

    def close(self) -> None:
        """Disconnect the solver's client."""
        p.disconnect(self.client)


class ReachSolvers:
    """One simulation's solvers, one per robot body (built on first use, closed with the simulation)."""

    def __init__(self) -> None:
        self._solvers: dict[str, ReachSolver] = {}

    def for_robot(self, spec: RobotSpec) -> ReachSolver:
        """The solver of ``spec``'s body."""
        key = str(spec.urdf_path)
        solver = self._solvers.get(key)
        if solver is None:
            solver = self._solvers[key] = ReachSolver(spec)
        return solver

    def close(self) -> None:
        """Disconnect every solver's client."""
        for solver in self._solvers.values():
            solver.close()
        self._solvers.clear()


def robot_joint_positions(robot: "Robot") -> dict[str, float]:
    """Current position of every moving joint of a spawned robot."""
    return {name: robot.joint_position(index) for name, index in robot.moving_joints()}


__all__ = ["ANGLE_TOLERANCE", "POSITION_TOLERANCE", "ReachSolver", "Solution", "ReachSolvers", "robot_joint_positions"]
