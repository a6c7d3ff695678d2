"""Robot bodies kept for reuse after their robot is removed.

PyBullet does not give back all the memory of a body: every ``loadURDF`` +
``removeBody`` of a P2AT leaves about 32 kB behind natively, so a server whose
clients come and go grows without bound (3,000 cycles: +100 MB). Instead, a removed
robot's body is *parked*: held by a fixed constraint far below the world (out of
reach of every sensor ray, camera and contact; put back there now and then by
:meth:`BodyPool.hold`, as it falls freely: a fixed constraint would hold it, but PyBullet
leaks on removeConstraint too, and a base made static by mass 0 does not move quite as
before once its mass is restored), its joints limp and still, and the
next spawn of the same model takes it back instead of loading a new one. Memory then
stays at the most robots of each model that existed at once.

A body taken from the pool is put in the same state as a freshly loaded one (pose,
zero velocities, joints at 0 and without motors); fresh bodies are given the same
joint state, so a robot behaves the same whichever it got.
"""
from __future__ import annotations

from typing import Callable, Sequence

import pybullet as p

PARK_DEPTH = -10_000.0  # m: far below any world, beyond every sensor's range
PARK_SPACING = 100.0  # m between parked bodies, so they never touch


class BodyPool:
    """Parked robot bodies of one PyBullet client, by model file."""

    def __init__(self, client: int) -> None:
        self.client = client
        self._parked: dict[str, list[int]] = {}  # model -> bodies
        self._slots: dict[int, int] = {}  # body -> its parking place, kept for the body's life

    def take(self, model: str, position: Sequence[float], orientation: Sequence[float],
             load: Callable[[], int]) -> int:
        """A body of ``model`` at the pose: a parked one if there is one, else ``load()``."""
        parked = self._parked.get(model)
        if parked:
            body = parked.pop()
            p.resetBasePositionAndOrientation(body, position, orientation, physicsClientId=self.client)
        else:
            body = load()
        self._still(body)
        return body

    def park(self, model: str, body: int) -> None:
        """Move a removed robot's body out of the world and keep it for the next spawn of ``model``."""
        client = self.client
        for uid in _constraints_of(body, client):  # e.g. a gripper holding an object
            p.removeConstraint(uid, physicsClientId=client)
        self._put_away(body)
        self._still(body)
        self._parked.setdefault(model, []).append(body)

    def hold(self) -> None:
        """Put parked bodies back at their places (call every few sim seconds at most: they fall 5 m in 1 s)."""
        for bodies in self._parked.values():
            for body in bodies:
                self._put_away(body)
                p.resetBaseVelocity(body, (0, 0, 0), (0, 0, 0), physicsClientId=self.client)

    def _put_away(self, body: int) -> None:
        slot = self._slots.setdefault(body, len(self._slots) + 1)
        p.resetBasePositionAndOrientation(body, (slot * PARK_SPACING, 0.0, PARK_DEPTH), (0.0, 0.0, 0.0, 1.0),
                                          physicsClientId=self.client)

    def parked(self) -> int:
        """Number of bodies waiting for reuse."""
        return sum(len(bodies) for bodies in self._parked.values())

    def _still(self, body: int) -> None:
        """Zero velocities, joints at 0 and limp (no motor): the state of a body just loaded."""
        client = self.client
        p.resetBaseVelocity(body, (0, 0, 0), (0, 0, 0), physicsClientId=client)
        moving = [j for j in range(p.getNumJoints(body, physicsClientId=client))
                  if p.getJointInfo(body, j, physicsClientId=client)[2] != p.JOINT_FIXED]
        for j in moving:
            p.resetJointState(body, j, 0.0, 0.0, physicsClientId=client)
        if moving:
            p.setJointMotorControlArray(body, moving, p.VELOCITY_CONTROL, targetVelocities=[0.0] * len(moving),
                                        forces=[0.0] * len(moving), physicsClientId=client)


def _constraints_of(body: int, client: int) -> list[int]:
    found = []
    for i in range(p.getNumConstraints(physicsClientId=client)):
        uid = p.getConstraintUniqueId(i, physicsClientId=client)
        info = p.getConstraintInfo(uid, physicsClientId=client)
        if body in (info[0], info[2]):
            found.append(uid)
    return found


__all__ = ["BodyPool", "PARK_DEPTH"]
