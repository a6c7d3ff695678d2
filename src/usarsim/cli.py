"""The ``usarsim`` command line."""
from __future__ import annotations

import argparse
import logging
import math
import os
import sys
from pathlib import Path
from typing import Any, Sequence

from usarsim.arguments import OneLineParser, positive_float, seed_number
from usarsim.config_loading import ConfigError
from usarsim.sim.commands import CommandError
from usarsim.sim.noise import NO_NOISE_HELP
from usarsim.whole_file import all_or_nothing


def parse_drive_pair(text: str) -> tuple[float, float]:
    """argparse type of ``--drive LEFT,RIGHT`` (finite wheel speeds, rad/s)."""
    try:
        left, right = (float(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected LEFT,RIGHT (two numbers), got {text!r}") from None
    if not (math.isfinite(left) and math.isfinite(right)):
        raise argparse.ArgumentTypeError("drive values must be finite numbers")
    return left, right


def parse_trace(text: str) -> tuple[float, str]:
    """argparse type of ``--trace INTERVAL[,COLOR]`` (seconds between trail points, TRACE colour)."""
    from usarsim.sim.commands import TRACE_COLORS

    interval_text, _, color = text.partition(",")
    try:
        interval = float(interval_text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected INTERVAL[,COLOR], got {text!r}") from None
    if not (math.isfinite(interval) and interval >= 0):
        raise argparse.ArgumentTypeError("the trace interval must be a number of seconds >= 0")
    match = next((c for c in TRACE_COLORS if c.lower() == (color or "Red").lower()), None)
    if match is None:
        raise argparse.ArgumentTypeError(f"trace colour must be one of {', '.join(TRACE_COLORS)}")
    return interval, match


def cmd_run(args: argparse.Namespace) -> int:
    """usarsim run: a headless scenario to JSON lines."""
    from usarsim.live.options import live_attach
    from usarsim.runner import Scenario, open_output, run_scenario
    from usarsim.signals import StopOnSignal

    scenario = Scenario(world=args.world, robot=args.robot, start=args.start, seed=args.seed, pacing=args.pacing,
                        duration=args.duration, drive=args.drive, physics_rate=args.physics_rate, cameras=args.camera,
                        trace=args.trace, noise=args.noise)
    out = open_output(args.output)
    with StopOnSignal() as stopper:
        try:
            with live_attach(args, enabled=args.live) as attach:
                count = run_scenario(scenario, out, progress=True, attach=attach, stop=stopper.event)
        finally:
            if out is not sys.stdout:
                out.close()
    how = f" (stopped by {stopper.signal_name})" if stopper.signal_name else ""
    print(f"wrote {count} readings{how}", file=sys.stderr)
    return stopper.exit_code


def cmd_worlds(args: argparse.Namespace) -> int:
    """usarsim worlds: list the shipped worlds."""
    from usarsim.sim.world import available_worlds, load_world

    for name in available_worlds():
        spec = load_world(name)
        print(f"{name:10s} {len(spec.start_poses)} start poses  {spec.description}")
    return 0


def cmd_robots(args: argparse.Namespace) -> int:
    """usarsim robots: list the robot catalogue."""
    from usarsim.sim.catalogue import available_robots, load_robot

    for name in available_robots():
        spec = load_robot(name)
        sensors = ", ".join(sorted({s.type for s in spec.sensors}))
        print(f"{name:12s} {spec.vehicle_type:14s} {spec.drive.type:12s} {spec.description} [{sensors}]")
    return 0


def cmd_urdf(args: argparse.Namespace) -> int:
    """usarsim urdf: regenerate urdf/<Class>.urdf and config/controllers/<Class>.yaml from the catalogue.

    Both are written because both come from the entry's body and joint groups: a model regenerated
    without its controllers would leave ros2_control driving joints that moved or vanished.
    """
    from usarsim.paths import share_dir
    from usarsim.sim.urdf import generate_urdf
    from usarsim.sim.catalogue import available_robots, load_robot

    specs = [load_robot(name) for name in args.robots or available_robots()]  # every name checked before writing
    out_dir = Path(args.output) if args.output else share_dir() / "urdf"
    controllers_dir = Path(args.output) if args.output else share_dir() / "config" / "controllers"
    for folder in (out_dir, controllers_dir):
        folder.mkdir(parents=True, exist_ok=True)
    for spec in specs:
        for path, text in ((out_dir / f"{spec.class_name}.urdf", generate_urdf(spec)),
                           (controllers_dir / f"{spec.class_name}.yaml", controllers_file(spec))):
            path.write_text(text, encoding="utf-8")
            print(path)
    return 0


def controllers_file(spec: Any) -> str:
    """config/controllers/<Class>.yaml: the controller_manager parameters of the robot's joint groups."""
    import yaml

    from usarsim.sim.ros2_control import controllers

    header = (f"# Generated from config/robots/{spec.class_name}.yaml by `usarsim urdf`; do not edit.\n"
              "# ros2_control controllers of the robot's joint groups (docs/ros.md, ros2_control).\n")
    return header + yaml.safe_dump(controllers(spec), sort_keys=False)


def cmd_map(args: argparse.Namespace) -> int:
    """usarsim map: occupancy maps for Nav2's map_server."""
    from usarsim.paths import share_dir
    from usarsim.sim.mapgen import write_map
    from usarsim.sim.world import available_worlds, load_world

    out_dir = Path(args.output) if args.output else share_dir() / "worlds"
    for name in args.worlds or available_worlds():
        try:
            spec = load_world(name)
            with all_or_nothing(out_dir) as scratch:
                written = write_map(spec, scratch, resolution=args.resolution or spec.map_resolution)
        except KeyboardInterrupt:
            return _stopped("map", f"while mapping '{name}'; its maps are as they were")
        for path in written:
            print(out_dir / path.name)
    return 0


def _stopped(command: str, what: str) -> int:
    """Ctrl-C: one line saying what was left undone (the exit status a shell gives Ctrl-C)."""
    print(f"{' '.join(filter(None, ('usarsim', command)))}: stopped by Ctrl-C {what}", file=sys.stderr)
    return 130


def cmd_arena(args: argparse.Namespace) -> int:
    """usarsim arena: a new NIST-style arena (world YAML and its Nav2 map)."""
    from usarsim.sim.mapgen import write_map
    from usarsim.sim.world import load_world_file
    from usarsim.worldgen.arena import generate

    width, height = args.size
    out_dir = Path(args.output)
    name = args.name or f"arena_{args.difficulty}_{args.seed}"
    try:
        with all_or_nothing(out_dir) as scratch:  # the arena and its map, or nothing
            generate(args.seed, width, height, args.difficulty, scratch / f"{name}.yaml", name)
            written = [scratch / f"{name}.yaml", *write_map(load_world_file(scratch / f"{name}.yaml"), scratch)]
    except KeyboardInterrupt:
        return _stopped("arena", f"while drawing '{name}'; nothing written")
    for path in written:
        print(out_dir / path.name)
    return 0


def cmd_osm(args: argparse.Namespace) -> int:
    """usarsim osm: a street world (YAML and Nav2 map) from an OpenStreetMap extract."""
    from usarsim.sim.mapgen import write_map
    from usarsim.sim.world import load_world_file
    from usarsim.worldgen.osm import convert

    source = Path(args.file)
    out = Path(args.output) if args.output else source.with_suffix(".yaml")
    try:
        with all_or_nothing(out.parent) as scratch:  # the world and its map, or nothing
            convert(source, scratch / out.name, args.name or out.stem, args.building_height)
            written = [scratch / out.name]
            if not args.no_map:
                spec = load_world_file(scratch / out.name)
                written += write_map(spec, scratch, resolution=spec.map_resolution)
    except KeyboardInterrupt:
        return _stopped("osm", f"while converting {source.name}; nothing written")
    for path in written:
        print(out.parent / path.name)
    return 0


def _size_pair(text: str) -> tuple[float, float]:
    """W,H in metres, both finite and positive."""
    try:
        width, height = (float(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected W,H in metres, got {text!r}") from None
    if not (math.isfinite(width) and math.isfinite(height) and width > 0 and height > 0):
        raise argparse.ArgumentTypeError(f"W and H must be finite and positive, got {text!r}")
    return width, height


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for tests and docs)."""
    from usarsim.console import add_subcommand as add_console
    from usarsim.live.options import add_live_arguments
    from usarsim.sim.simulator import PACINGS
    from usarsim.sim.world import DEFAULT_WORLD

    parser = OneLineParser(prog="usarsim", description="USARSim on PyBullet: simulator, protocol server, tools")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run a headless scenario and write readings as JSON lines")
    run.add_argument("--world", default=DEFAULT_WORLD, help=f"world name or YAML file (default: {DEFAULT_WORLD})")
    run.add_argument("--robot", default="P2AT")
    run.add_argument("--start", default=None, help="start pose tag (default: the world's first)")
    run.add_argument("--seed", type=seed_number, default=0)
    run.add_argument("--no-noise", dest="noise", action="store_false", help=NO_NOISE_HELP)
    run.add_argument("--pacing", choices=PACINGS, default="fast")
    run.add_argument("--duration", type=positive_float, default=10.0, help="sim seconds")
    run.add_argument("--drive", type=parse_drive_pair, default=(0.0, 0.0), metavar="LEFT,RIGHT",
                     help="wheel spin speeds in rad/s (as DRIVE {Left} {Right})")
    run.add_argument("--physics-rate", type=positive_float, default=200.0, help="physics steps per sim second")
    run.add_argument("--camera", action="store_true", help="also render camera images (slow)")
    run.add_argument("--trace", type=parse_trace, default=None, metavar="INTERVAL[,COLOR]",
                     help="keep the robot's path trace (as TRACE): a Trace record every INTERVAL s")
    run.add_argument("--output", "-o", default=None, help="JSONL file (default: stdout)")
    add_live_arguments(run)
    run.set_defaults(func=cmd_run)

    sub.add_parser("worlds", help="list the shipped worlds").set_defaults(func=cmd_worlds)
    sub.add_parser("robots", help="list the robot catalogue").set_defaults(func=cmd_robots)

    urdf_help = "regenerate urdf/<Class>.urdf and config/controllers/<Class>.yaml from config/robots/<Class>.yaml"
    urdf = sub.add_parser("urdf", help=urdf_help, description=urdf_help)
    urdf.add_argument("robots", nargs="*", metavar="CLASS", help="robot classes (default: the whole catalogue)")
    urdf.add_argument("--output", default=None, metavar="DIR",
                      help="write both files of each class into DIR instead (created if missing)")
    urdf.set_defaults(func=cmd_urdf)

    mapper = sub.add_parser("map", help="write Nav2 occupancy maps (pgm + yaml) of worlds")
    mapper.add_argument("worlds", nargs="*")
    mapper.add_argument("--resolution", type=positive_float, default=None,
                        help="m per pixel (default: the world's map_resolution, 0.05 unless it says)")
    mapper.add_argument("--output", default=None)
    mapper.set_defaults(func=cmd_map)

    arena = sub.add_parser("arena", help="generate a NIST-style arena (world YAML + Nav2 map)")
    arena.add_argument("--seed", type=seed_number, required=True)
    arena.add_argument("--size", type=_size_pair, default=(20.0, 20.0), metavar="W,H",
                       help="arena size in metres along x (north) and y (west), default 20,20")
    arena.add_argument("--difficulty", choices=("yellow", "orange", "red"), default="yellow")
    arena.add_argument("--name", default="", help="world name (default arena_<difficulty>_<seed>)")
    arena.add_argument("--output", default=".", help="directory for the YAML and the map (default .)")
    arena.set_defaults(func=cmd_arena)

    osm = sub.add_parser("osm", help="turn an OpenStreetMap extract into a street world (YAML + Nav2 map)")
    osm.add_argument("file", help="OSM file (.osm XML or .pbf)")
    osm.add_argument("--output", "-o", default=None, help="world YAML (default: FILE with .yaml)")
    osm.add_argument("--name", default="", help="world name (default: the output file's stem)")
    osm.add_argument("--building-height", type=positive_float, default=9.0,
                     help="m, for buildings without height or building:levels tags (default 9)")
    osm.add_argument("--no-map", action="store_true", help="write the world only")
    osm.set_defaults(func=cmd_osm)

    add_console(sub)
    for register in _optional_subcommands():
        register(sub)
    return parser


def _optional_subcommands() -> list:
    """Subcommands of front doors (serve, record) that register themselves if importable."""
    found = []
    for module, attr in (("usarsim.protocol.cli", "add_subcommand"), ("usarsim.record", "add_subcommand"),
                         ("usarsim.scale.cli", "add_subcommand")):
        try:
            mod = __import__(module, fromlist=[attr])
        except ImportError:  # that front door is not installed
            continue
        if hasattr(mod, attr):
            found.append(getattr(mod, attr))
    return found


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``usarsim`` console script."""
    try:
        args = build_parser().parse_args(argv)  # imports the front doors: a second or two
    except KeyboardInterrupt:
        return _stopped("", "while starting up")
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        return args.func(args)
    except BrokenPipeError:
        # the reader of our output left early (usarsim run ... | head): stop without a traceback
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nothing left to flush at exit
        print("usarsim: output closed by its reader (broken pipe); stopped", file=sys.stderr)
        return 141  # 128 + SIGPIPE, as a shell reports a command ended by a broken pipe
    except (ConfigError, CommandError, OSError) as exc:  # bad files, ports in use, unknown hosts
        print(f"usarsim: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return _stopped(args.command, "while starting up; nothing was left half done")


if __name__ == "__main__":
    sys.exit(main())
