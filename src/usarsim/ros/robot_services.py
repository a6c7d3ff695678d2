"""Per-robot services for what the text protocol does with opcodes (usarsim_interfaces/srv).

Under the robot's namespace: ``rfid/read``, ``rfid/write``, ``release_tag``, ``set_headlight``,
``flip``, ``reset_odometry`` and ``scan``. Each queues the same core command the protocol would
and answers once the tick has applied it, with the device's own refusal message when it declines.
"""
from __future__ import annotations

from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import TYPE_CHECKING, Any, Callable

from rclpy.callback_groups import ReentrantCallbackGroup
from usarsim_interfaces import srv

from usarsim.ros.effecters import RELEASE_TAG, types_on_service
from usarsim.sim.commands import Command, CommandError, Flip, SensorCommand, SetLight
from usarsim.sim.sensors import CommandResult

if TYPE_CHECKING:
    from usarsim.ros.node import UsarsimNode
    from usarsim.sim.robot import Robot

RESETTABLE = ("Odometry", "Encoder")
TIMEOUT_S = 10.0  # wall time to wait for the next tick to apply a command


def _first(names: list[str], kind: str, robot: str) -> str:
    if not names:
        raise CommandError(f"robot '{robot}' has no {kind}")
    return names[0]


class RobotServices:
    """The usarsim_interfaces services of one robot."""

    def __init__(self, node: "UsarsimNode", robot: "Robot", topic: Callable[[str], str]) -> None:
        self.node = node
        self.robot = robot
        group = ReentrantCallbackGroup()  # handlers wait for a tick: never block the executor's other work
        table: dict[str, tuple[Any, Callable]] = {
            "rfid/read": (srv.ReadRfidTag, self.read_tag),
            "rfid/write": (srv.WriteRfidTag, self.write_tag),
            RELEASE_TAG: (srv.ReleaseTag, self.release_tag),
            "set_headlight": (srv.SetHeadlight, self.set_headlight),
            "flip": (srv.Flip, self.flip),
            "reset_odometry": (srv.ResetOdometry, self.reset_odometry),
            "scan": (srv.Scan, self.scan),
        }
        self.services = [node.create_service(kind, topic(name), callback, callback_group=group)
                         for name, (kind, callback) in table.items()]

    def destroy(self) -> None:
        """Remove this robot's services."""
        for service in self.services:
            self.node.destroy_service(service)

    def _run(self, cmd: Command) -> CommandResult:
        """Queue ``cmd``, step once if nothing else advances the simulation, and wait for the result."""
        future: Future = self.node.sim.submit(cmd)
        self.node.advance_if_paused()
        try:
            outcome = future.result(timeout=TIMEOUT_S)
        except FutureTimeout:
            return CommandResult(False, message="the simulation did not advance to apply the command")
        except (CommandError, ValueError) as exc:
            return CommandResult(False, message=str(exc))
        return outcome if isinstance(outcome, CommandResult) else CommandResult(True)

    @staticmethod
    def _answer(response: Any, outcome: CommandResult) -> Any:
        response.success, response.message = outcome.ok, outcome.message
        return response

    def _sensor_names(self, *types: str) -> list[str]:
        return [s.name for s in self.robot.sensors if s.type_name in types]

    def _device(self, given: str, kind: str, names: list[str]) -> str:
        return given or _first(names, kind, self.robot.name)

    def read_tag(self, request: Any, response: Any) -> Any:
        try:
            reader = self._device(request.sensor, "RFID reader", self._sensor_names("RFID"))
        except CommandError as exc:
            return self._answer(response, CommandResult(False, message=str(exc)))
        outcome = self._run(SensorCommand(self.robot.name, reader, "Read", (str(request.tag_id),)))
        response.memory = str(dict(outcome.fields).get("Mem", ""))
        return self._answer(response, outcome)

    def write_tag(self, request: Any, response: Any) -> Any:
        try:
            reader = self._device(request.sensor, "RFID reader", self._sensor_names("RFID"))
        except CommandError as exc:
            return self._answer(response, CommandResult(False, message=str(exc)))
        if request.memory:
            opcode, params = "Write", (f"{request.tag_id},{request.memory}",)
        else:  # empty memory: erase, as the protocol's Erase opcode
            opcode, params = "Erase", (str(request.tag_id),)
        return self._answer(response, self._run(SensorCommand(self.robot.name, reader, opcode, params)))

    def release_tag(self, request: Any, response: Any) -> Any:
        releasers = [e.name for e in self.robot.spec.effecters if e.type in types_on_service(RELEASE_TAG)]
        try:
            releaser = self._device(request.releaser, "RFID releaser", releasers)
        except CommandError as exc:
            return self._answer(response, CommandResult(False, message=str(exc)))
        outcome = self._run(SensorCommand(self.robot.name, releaser, "Release"))
        response.tag_id = int(dict(outcome.fields).get("ID", 0))
        effecter = self.robot.effecters.get(releaser)
        response.tags_remaining = max(0, int(getattr(effecter, "remaining", 0)))
        return self._answer(response, outcome)

    def set_headlight(self, request: Any, response: Any) -> Any:
        return self._answer(response, self._run(SetLight(self.robot.name, bool(request.on))))

    def flip(self, request: Any, response: Any) -> Any:
        return self._answer(response, self._run(Flip(self.robot.name)))

    def reset_odometry(self, request: Any, response: Any) -> Any:
        names = [request.sensor] if request.sensor else self._sensor_names(*RESETTABLE)
        if not names:
            missing = f"robot '{self.robot.name}' has no odometry or encoders"
            return self._answer(response, CommandResult(False, message=missing))
        failures = []
        for name in names:
            outcome = self._run(SensorCommand(self.robot.name, name, "RESET"))
            if outcome.ok:
                response.reset.append(name)
            else:
                failures.append(outcome.message)
        return self._answer(response, CommandResult(not failures, message="; ".join(failures)))

    def scan(self, request: Any, response: Any) -> Any:
        if not request.sensor:
            return self._answer(response, CommandResult(False, message="name the sensor to scan"))
        return self._answer(response, self._run(SensorCommand(self.robot.name, request.sensor, "SCAN")))
