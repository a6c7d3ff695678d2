"""The files a sweep names, packed to travel with a Ray job, so a node needs only usarsim installed.

A sweep names world files (with the meshes and height maps they reference, all inside the world
file's folder) and a controller module. ``stage`` copies them into one folder, which becomes the
job's Ray ``working_dir``: Ray uploads it once and unpacks it on each node as the task's working
directory. The trials are rewritten to name the copies relative to that directory; ``localize``
turns them back into paths on the node that runs the trial. Robots are catalogue classes and
shipped worlds are names: both come with usarsim.
"""
from __future__ import annotations

import importlib.util
import os
import shutil
import sysconfig
from dataclasses import replace
from pathlib import Path
from typing import Sequence

from usarsim.scale.sweep_file import SweepSpec, TrialSpec

WORLD_SUFFIXES = (".yaml", ".yml")
STAGED_WORLDS = "worlds"  # staged world file k lives in worlds/<k>/


def stage(trials: Sequence[TrialSpec], folder: Path) -> list[TrialSpec]:
    """Copy what ``trials`` need into ``folder``; the trials as they name the copies (relative paths)."""
    staged_worlds: dict[str, str] = {}
    for trial in trials:
        if _is_world_file(trial.world_file) and trial.world_file not in staged_worlds:
            staged_worlds[trial.world_file] = _stage_world(Path(trial.world_file), folder,
                                                           f"{STAGED_WORLDS}/{len(staged_worlds)}")
    sweeps: dict[int, SweepSpec] = {}
    for trial in trials:
        if id(trial.sweep) not in sweeps:
            _stage_controller(trial.sweep, folder)
            sweeps[id(trial.sweep)] = replace(trial.sweep, base_dir="")  # "": the node's working directory
    return [replace(t, sweep=sweeps[id(t.sweep)], world_file=staged_worlds.get(t.world_file, t.world_file))
            for t in trials]


def localize(trial: TrialSpec, working_dir: str) -> TrialSpec:
    """A staged trial as it runs in ``working_dir`` (where Ray unpacked the staged folder)."""
    if trial.sweep.base_dir:  # not staged
        return trial
    world_file = trial.world_file
    if _is_world_file(world_file) and not os.path.isabs(world_file):
        world_file = os.path.join(working_dir, world_file)
    return replace(trial, sweep=replace(trial.sweep, base_dir=working_dir), world_file=world_file)


def _is_world_file(ref: str) -> bool:
    return ref.endswith(WORLD_SUFFIXES)


def _stage_world(path: Path, folder: Path, into: str) -> str:
    """Copy a world file and the files it references, keeping their layout relative to it."""
    from usarsim.sim.world import load_world_file

    spec = load_world_file(path)
    target = folder / into
    referenced = [item.mesh for item in spec.static if item.kind == "mesh"]
    if spec.terrain is not None and spec.terrain.heightmap:
        referenced.append(spec.terrain.heightmap)
    for relative in [path.name, *referenced]:
        destination = target / relative
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path.parent / relative, destination)
    return f"{into}/{path.name}"


def _stage_controller(sweep: SweepSpec, folder: Path) -> None:
    """Copy the controller's top-level module (a file or a package folder) unless nodes have it installed."""
    if not sweep.controller:
        return
    top = sweep.controller.partition(":")[0].split(".")[0]
    origin = _module_origin(top, sweep.base_dir)
    if origin is None or _installed(origin):
        return  # not found here (its trials fail alike everywhere) or installed with a package
    source = origin.parent if origin.name == "__init__.py" else origin
    destination = folder / source.name
    if source.is_dir():
        shutil.copytree(source, destination, ignore=shutil.ignore_patterns("__pycache__"), dirs_exist_ok=True)
    else:
        shutil.copy2(source, destination)


def _module_origin(name: str, base_dir: str) -> Path | None:
    """Where module ``name`` would be imported from by a trial (the sweep's folder first, then sys.path)."""
    candidates = [Path(base_dir) / f"{name}.py", Path(base_dir) / name / "__init__.py"] if base_dir else []
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    return Path(spec.origin) if spec is not None and spec.origin and os.path.isfile(spec.origin) else None


def _installed(origin: Path) -> bool:
    """True for modules of the standard library or an installed distribution (usarsim included)."""
    import usarsim

    roots = {sysconfig.get_paths()[key] for key in ("stdlib", "platstdlib", "purelib", "platlib")}
    roots.add(str(Path(usarsim.__file__).parent))
    resolved = origin.resolve()
    return any(resolved.is_relative_to(Path(root).resolve()) for root in roots)
