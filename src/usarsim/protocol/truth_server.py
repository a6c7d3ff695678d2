"""The ground-truth server (``usarsim serve --truth-port 3989``; off unless asked for).

Scoring and metric tools ask it where every robot, victim and object truly is (USARTruth,
UDK ``USARTruth.uc``): wire forms in :mod:`usarsim.protocol.truth_wire`. It tells what no
robot's sensors may know, so it is off by default and listens on 127.0.0.1 unless another
address is given explicitly (docs/wireless.md).

Limits: at most ``max_clients`` connections; one that sends no request within
``idle_timeout`` is closed; requests are answered one at a time, and a client that does not
read its answers within ``write_timeout`` is closed (nothing queues up for it).
"""
from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

import pybullet as p

from usarsim import rotations
from usarsim.protocol import truth_wire as tw
from usarsim.protocol.frames import to_sae_euler, to_sae_vector
from usarsim.protocol.line_splitter import LineSplitter
from usarsim.protocol.loop_thread import SESSION_ENDS, LoopThread, cancel_other_tasks
from usarsim.protocol.session_guard import IdleDeadline, SessionSlots

if TYPE_CHECKING:
    from usarsim.sim.simulator import Simulator

log = logging.getLogger(__name__)

TRUTH_HOST = "127.0.0.1"
MAX_CLIENTS = 16
IDLE_TIMEOUT = 60.0  # s a connection may stay without a request
WRITE_TIMEOUT = 10.0  # s a client has to take an answer


def world_things(sim: "Simulator") -> list[tw.Thing]:
    """Robots, victims, movable obstacles and props with their true poses now (SAE frame)."""
    with sim.lock:
        now = sim.time
        things = []
        for name, robot in sim.robots.items():
            truth = sim.ground_truth(name)
            kinds = (robot.spec.class_name, robot.spec.vehicle_type, "USARVehicle", "Pawn", "Actor")
            things.append(_thing(name, kinds, now, truth.position, truth.orientation))
        for victim in sim.world.victims:
            things.append(tw.Thing(victim.id, ("Victim", "Actor"), now, to_sae_vector(victim.spec.xyz),
                                   to_sae_euler((0.0, 0.0, victim.spec.yaw))))
        bodies = [(o.name or f"{o.kind}_{i}", "Obstacle", body)
                  for i, (o, body) in enumerate(zip(sim.spec.obstacles, sim.world.obstacle_ids))]
        bodies += [(name, "Prop", prop.body_id) for name, prop in sim.props.items()]
        for name, kind, body in bodies:
            position, orientation = p.getBasePositionAndOrientation(body, physicsClientId=sim.client)
            things.append(_thing(name, (kind, "KActor", "Actor"), now, position, orientation))
        return things


def _thing(name: str, kinds: tuple[str, ...], now: float, position, orientation) -> tw.Thing:
    rpy = rotations.euler_from_quaternion(rotations.quat(orientation))
    return tw.Thing(name, kinds, now, to_sae_vector(position), to_sae_euler(rpy))


class TruthServer:
    """The USARTruth front door of a :class:`~usarsim.sim.simulator.Simulator` (``port=0``: any free)."""

    def __init__(self, sim: "Simulator", host: str = TRUTH_HOST, port: int = tw.DEFAULT_TRUTH_PORT, *,
                 max_clients: int = MAX_CLIENTS, idle_timeout: float = IDLE_TIMEOUT,
                 write_timeout: float = WRITE_TIMEOUT) -> None:
        if not (idle_timeout > 0 and write_timeout > 0):
            raise ValueError("idle_timeout and write_timeout must be positive")
        self.sim = sim
        self.host = host
        self.port = port
        self.idle_timeout = idle_timeout
        self.write_timeout = write_timeout
        self.slots = SessionSlots(max_clients)
        self.answered = 0  # requests answered (for tests and the log)
        self._serving = LoopThread("usarsim-truth")

    def start(self) -> None:
        """Bind and serve from a background thread (raises OSError if the port is taken)."""
        if self._serving.running:
            return
        self.port = self._serving.start(self._session, self.host, self.port, cancel_other_tasks)
        log.info("ground-truth server on %s:%d", self.host, self.port)

    def stop(self) -> None:
        """Close every connection and stop serving."""
        self._serving.stop()

    def _answer(self, line: str) -> bytes:
        try:
            return tw.answer(world_things(self.sim), tw.parse_request(line))
        except Exception:  # noqa: BLE001 - one failed answer never drops the client
            log.exception("ground truth: cannot answer %r", line)
            return tw.error("Internal.Error")

    async def _session(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if not self.slots.take():
            writer.write(tw.error(f"Too.Many.Connections.(at.most.{self.slots.limit})"))
            writer.close()
            return
        splitter = LineSplitter(tw.MAX_REQUEST, ends=b"\r\n")
        loop = asyncio.get_running_loop()
        try:
            while True:
                deadline = IdleDeadline(self.idle_timeout)  # renewed by every request
                data = await deadline.read(reader, 4096)
                if not data:
                    break
                for line in splitter.feed(data):
                    if line is None:
                        answer = tw.error(f"Request.Longer.Than.{tw.MAX_REQUEST}.Bytes")
                    else:
                        answer = await loop.run_in_executor(None, self._answer, line)
                    writer.write(answer)
                    self.answered += 1
                    await asyncio.wait_for(writer.drain(), self.write_timeout)
        except SESSION_ENDS + (asyncio.TimeoutError,):
            pass
        finally:
            self.slots.give_back()
            writer.close()


__all__ = ["TRUTH_HOST", "TruthServer", "world_things"]
