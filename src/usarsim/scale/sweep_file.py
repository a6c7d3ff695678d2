"""The sweep file: a grid of worlds x robots x seeds, how each trial is driven and what it records.

Loaded with the project's strict YAML loader, so a typo is reported with file, line and key.
``trials()`` expands the grid in a fixed order; each trial has a stable id made from its
grid coordinates, which is what resuming a killed sweep keys on.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Optional

from usarsim.config_loading import ConfigError, load_dataclass


@dataclass(frozen=True)
class DriveSegment:
    """Drive script step: wheel speeds (rad/s, as DRIVE) held until sim time ``until``."""

    until: float
    drive: tuple[float, float]


@dataclass(frozen=True)
class RecordSpec:
    """What every trial writes besides its summary."""

    readings: bool = True  # readings.jsonl: one JSON object per reading, as `usarsim run`
    bag: bool = False  # bag.mcap: what the ROS bridge would publish (needs the [ros] extra)
    cameras: bool = False  # render camera images (slow)


@dataclass(frozen=True)
class SweepSpec:
    """One sweep file. Exactly one of ``controller``, ``script`` or ``drive`` says how robots move."""

    worlds: list[str]
    robots: list[str]
    seeds: list[int]
    duration: float
    name: str = "sweep"
    start: Optional[str] = None  # start pose tag (default: each world's first)
    physics_rate: float = 200.0
    control_period: float = 0.1  # sim seconds between controller calls
    controller: Optional[str] = None  # module:function (or module:Class, instantiated per trial)
    script: list[DriveSegment] = field(default_factory=list)
    drive: Optional[tuple[float, float]] = None  # constant wheel speeds
    record: RecordSpec = field(default_factory=RecordSpec)
    base_dir: str = ""  # folder of the sweep file (set by the loader): controllers are imported from there too

    def fingerprint(self) -> str:
        """Hash of the settings every trial shares (not the grid: a grid can grow and resume)."""
        content = {k: v for k, v in asdict(self).items() if k not in _NOT_FINGERPRINTED}
        return hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()[:16]


_NOT_FINGERPRINTED = frozenset({"base_dir", "name", "worlds", "robots", "seeds"})


@dataclass(frozen=True)
class TrialSpec:
    """One cell of the grid: everything a worker needs to run it, picklable."""

    trial_id: str
    world: str  # as the sweep file names it (the table's column)
    robot: str
    seed: int
    sweep: SweepSpec
    world_file: str  # what the simulator loads: a shipped world's name or a world file's path


def load_sweep(path: str | Path) -> SweepSpec:
    """Load and check a sweep file; ConfigError names the file and what is wrong."""
    path = Path(path)
    spec = load_dataclass(SweepSpec, path)
    _validate(spec, str(path))
    from dataclasses import replace

    return replace(spec, base_dir=str(path.resolve().parent))


def _validate(spec: SweepSpec, source: str) -> None:
    from usarsim.sim.catalogue import load_robot
    from usarsim.sim.world import load_world

    for key in ("worlds", "robots", "seeds"):
        if not getattr(spec, key):
            raise ConfigError(f"{source}: '{key}' must list at least one entry")
        if len(set(getattr(spec, key))) != len(getattr(spec, key)):
            raise ConfigError(f"{source}: '{key}' lists an entry twice")
    if not spec.duration > 0:
        raise ConfigError(f"{source}: duration must be positive, got {spec.duration}")
    if not spec.physics_rate > 0 or not spec.control_period > 0:
        raise ConfigError(f"{source}: physics_rate and control_period must be positive")
    ways = [w for w in ("controller", "script", "drive") if getattr(spec, w)]
    if len(ways) != 1:
        raise ConfigError(f"{source}: give exactly one of controller, script or drive (got {', '.join(ways) or 'none'})")
    if spec.controller is not None and not re.fullmatch(r"[\w.]+:[\w.]+", spec.controller):
        raise ConfigError(f"{source}: controller must be 'module:function', got {spec.controller!r}")
    ends = [s.until for s in spec.script]
    if ends != sorted(ends) or any(e <= 0 for e in ends):
        raise ConfigError(f"{source}: script 'until' times must be positive and increasing")
    base = Path(source).resolve().parent
    for world in spec.worlds:  # unknown names fail here, before any trial starts
        load_world(_world_ref(base, world))
    for robot in spec.robots:
        load_robot(robot)




def _world_ref(base: Path, world: str) -> str:
    candidate = base / world
    return str(candidate) if candidate.suffix in (".yaml", ".yml") and candidate.exists() else world


def trial_id(world: str, robot: str, seed: int) -> str:
    """Stable, file-name-safe id of a grid cell."""
    stem = re.sub(r"[^\w.-]+", "_", Path(world).stem if world.endswith((".yaml", ".yml")) else world)
    return f"{stem}__{robot}__seed{seed}"


def trials(spec: SweepSpec) -> list[TrialSpec]:
    """The grid in file order: worlds, then robots, then seeds."""
    base = Path(spec.base_dir)
    return [TrialSpec(trial_id(w, r, s), w, r, s, spec, _world_ref(base, w))
            for w in spec.worlds for r in spec.robots for s in spec.seeds]
