"""RFID reader: detects the world's tags and reads/writes their memory (spec sensors.md §11).

Three sensing modes as in USARSim:

- ``Radius``: every tag within ``max_range`` (``max_single_shot_range`` for
  single-shot tags), walls ignored;
- ``Obstacle``: the same, but only with a clear line of sight;
- ``Attenuation`` (default): a two-way indoor path-loss budget,
  ``P_rx = tx_power - 2 * L(d) - (obstacle ? obstacle_attenuation : 0)`` with
  ``L(d) = path_loss_1m + 10 * n * log10(d)``; readable when
  ``P_rx >= rx_sensitivity``. USARSim's formula is garbled in the only source;
  this is a reconstruction (sensors.md §11) whose constants give a read range of
  about 6.9 m in the open and 5.9 m behind one obstacle. Only one obstacle is
  counted, as in the original.

Optional Gaussian shadowing: ``sigma`` (dB) is added to each tag's received
power before the threshold, so tags near the edge of range flicker.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from usarsim import rotations
from usarsim.sim.readings import RfidReading, RfidTagSeen
from usarsim.sim.sensors.base import CommandResult, CommonParams, Sensor
from usarsim.sim.sensors.registry import register
from usarsim.sim.sensors.sight import line_of_sight

MODES = ("Radius", "Obstacle", "Attenuation")
# Below this distance the path-loss law is not evaluated (log10 of ~0).
MIN_DISTANCE = 0.05


@dataclass
class RfidParams(CommonParams):
    """USARBot.RFIDSensor keys (metres, dBm, dB)."""

    with_timestamp: bool = True
    sensing_mode: str = "Attenuation"
    max_range: float = 3.0  # Radius / Obstacle
    max_single_shot_range: float = 6.0  # Radius / Obstacle, single-shot tags
    tx_power_dbm: float = 36.0
    rx_sensitivity_dbm: float = -88.0
    obstacle_attenuation_db: float = 3.5
    path_loss_1m_db: float = 40.0  # 20*log10(4*pi/lambda) at 2.4 GHz
    path_loss_exponent: float = 2.625
    always_read_memory: bool = False  # bAlwaysReadRFIDmem: report Mem with every detection
    report_location: bool = False  # older SEN form: tag Location per detection
    memory_size: int = 256  # characters a tag can hold

    def mode(self) -> str:
        """The sensing mode's canonical spelling (the catalogue may use any case)."""
        mode = next((m for m in MODES if m.lower() == self.sensing_mode.lower()), None)
        if mode is None:
            raise ValueError(f"sensing_mode must be one of {', '.join(MODES)}, got {self.sensing_mode!r}")
        return mode

    def check(self) -> None:
        super().check()
        self.mode()
        if self.memory_size < 1:
            raise ValueError("memory_size must be >= 1")


def received_power(distance: np.ndarray | float, obstructed: np.ndarray | bool, prm: RfidParams) -> np.ndarray:
    """Two-way received power (dBm) of a passive tag at ``distance`` m (reconstructed model)."""
    d = np.maximum(np.asarray(distance, dtype=float), MIN_DISTANCE)
    one_way = prm.path_loss_1m_db + 10.0 * prm.path_loss_exponent * np.log10(d)
    return prm.tx_power_dbm - 2.0 * one_way - np.where(obstructed, prm.obstacle_attenuation_db, 0.0)


def attenuation_range(prm: RfidParams, obstructed: bool = False, margin_db: float = 0.0) -> float:
    """Distance (m) at which the received power (plus ``margin_db``) falls to the sensitivity."""
    budget = (prm.tx_power_dbm - (prm.obstacle_attenuation_db if obstructed else 0.0) - prm.rx_sensitivity_dbm
              + margin_db)
    return 10.0 ** ((budget / 2.0 - prm.path_loss_1m_db) / (10.0 * prm.path_loss_exponent))


def split_params(params: Sequence[Any]) -> tuple[str, str]:
    """SET Params as (first token, rest): ``(7,)``, ``("7,hello",)`` and ``("7", "hello")`` all work."""
    parts: list[str] = []
    for value in params:
        if isinstance(value, (list, tuple)):
            parts.append(",".join(_param_text(v) for v in value))
        elif value is not None:
            parts.append(_param_text(value))
    pieces = re.split(r"[,\s]+", ",".join(parts).strip(", \t"), maxsplit=1)
    return pieces[0], (pieces[1] if len(pieces) > 1 else "")


def _param_text(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def parse_tag_id(token: str) -> int | None:
    """A tag id from a token ('7' or '7.0'), None when it is not an integer."""
    try:
        number = float(token)
    except ValueError:
        return None
    return int(number) if math.isfinite(number) and number.is_integer() else None


@register("RFID")
class RfidReader(Sensor):
    """Reports every readable tag; ``Read``/``Write`` opcodes act on one tag in range."""

    Params = RfidParams

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        prm: RfidParams = self.params  # type: ignore[assignment]
        self.mode = prm.mode()

    # --- detection -------------------------------------------------------------------------
    def detect(self) -> list[tuple[Any, np.ndarray, float]]:
        """Readable tags now: (tag, position in the sensor frame, received power dBm), sorted by id."""
        prm: RfidParams = self.params  # type: ignore[assignment]
        tags = list(self.env.world.rfid_tags.values())
        if not tags:
            return []
        origin, rot = self.robot.mount_pose(self.spec.mount)
        positions = np.array([t.position for t in tags], dtype=float)
        distance = np.linalg.norm(positions - origin, axis=1)
        if self.mode == "Attenuation":
            # beyond the unobstructed range (plus a generous shadowing margin) nothing can be read
            margin = max(prm.mean, 0.0) + 5.0 * max(prm.sigma, 0.0)
            candidates = distance <= attenuation_range(prm, margin_db=margin)
        else:
            limit = np.array([prm.max_single_shot_range if t.single_shot else prm.max_range for t in tags])
            candidates = distance <= limit
        obstructed = np.zeros(len(tags), dtype=bool)
        index = np.flatnonzero(candidates)
        if self.mode != "Radius" and len(index):
            clear = line_of_sight(self.env.client, origin, positions[index], ignore={self.robot.body_id})
            obstructed[index] = ~clear
        power = received_power(distance, obstructed, prm)
        if prm.sigma > 0 or prm.mean != 0:
            power = power + self.rng.normal(prm.mean, max(prm.sigma, 0.0), size=len(tags))
        if self.mode == "Attenuation":
            readable = candidates & (power >= prm.rx_sensitivity_dbm)
        elif self.mode == "Obstacle":
            readable = candidates & ~obstructed
        else:
            readable = candidates
        found = [(tags[i], rot.T @ (positions[i] - origin), float(power[i])) for i in np.flatnonzero(readable)]
        return sorted(found, key=lambda item: item[0].id)

    def read(self, now: float) -> RfidReading:
        prm: RfidParams = self.params  # type: ignore[assignment]
        seen = tuple(RfidTagSeen(tag_id=int(tag.id), memory=str(tag.memory), position=rotations.vec3(local),
                                 signal_dbm=power, single_shot=bool(tag.single_shot))
                     for tag, local, power in self.detect())
        return RfidReading(**self.header(now), tags=seen, memory_read=prm.always_read_memory,
                           report_location=prm.report_location)

    # --- opcodes ---------------------------------------------------------------------------
    def command(self, opcode: str, params: tuple[Any, ...]) -> CommandResult:
        """``Read <id>`` -> ID, Mem; ``Write <id>[,<content>]`` (no content or "0" erases); ``Erase <id>``."""
        op = opcode.upper()
        if op not in ("READ", "WRITE", "ERASE"):
            return super().command(opcode, params)
        first, rest = split_params(params)
        tag_id = parse_tag_id(first) if first else None
        if tag_id is None:
            return CommandResult(False, message=f"{opcode} needs a tag id")
        tag = next((t for t, _, _ in self.detect() if t.id == tag_id), None)
        if tag is None:
            return CommandResult(False, (("ID", tag_id),), message=f"tag {tag_id} is not in range")
        if op == "READ":
            return CommandResult(True, (("ID", tag_id), ("Mem", str(tag.memory))))
        content = "0" if op == "ERASE" else rest.strip() or "0"
        prm: RfidParams = self.params  # type: ignore[assignment]
        if len(content) > prm.memory_size:
            return CommandResult(False, (("ID", tag_id),), message=f"memory holds {prm.memory_size} characters")
        if not content.isprintable() or any(c in content for c in "{} \t"):
            # the text protocol cannot carry braces or spaces inside a value
            return CommandResult(False, (("ID", tag_id),), message="memory must be printable text without spaces or braces")
        tag.memory = content
        return CommandResult(True, (("ID", tag_id),))
