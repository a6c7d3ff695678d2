"""Turning in place: yaw rate against heading, open loop and with the drive's yaw-rate loop.

For every skid-steer, differential and tracked class, spins the robot through a full turn
on a flat floor with wheels at -w/+w (0.1 m/s surface speed) and times each of 16 heading
sectors (``usarsim.sim.calibration.turn_in_place``). Prints the slowest, mean and fastest
rate and their spread, open loop (the contact model alone) and closed loop (the drive's
yaw-rate loop), and the wheel track width of each turn: r * (right - left odometry wheel
angle) / yaw. The closed-loop wheel track width is what the catalogue's
``drive.effective_track_width`` must be for odometry to read a turn as the robot made it;
``--calibrate`` writes it there (repeat until it stops changing, usually one or two rounds).

    .venv/bin/python bench/turning.py [--classes P2AT,Kenaf] [--calibrate]
"""
from __future__ import annotations

import argparse
import re

from usarsim.sim.calibration import turn_in_place
from usarsim.sim.catalogue import available_robots, load_robot, robots_dir
from usarsim.sim.drives import SkidSteerDrive

SKID_TYPES = ("skid", "differential", "tracked")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--classes", default="")
    parser.add_argument("--calibrate", action="store_true", help="write the closed-loop wheel track width to the catalogue")
    args = parser.parse_args()
    classes = [c for c in args.classes.split(",") if c] or [
        c for c in available_robots() if load_robot(c).drive.type in SKID_TYPES]
    print(f"{'class':11s} {'loop':6s} {'min':>6s} {'mean':>6s} {'max':>6s} {'max/min':>8s}  track width (m)")
    for name in classes:
        drive = load_robot(name).drive
        for closed in (False, True):
            SkidSteerDrive.yaw_control = closed
            try:
                turn = turn_in_place(name)
            finally:
                SkidSteerDrive.yaw_control = True
            print(f"{name:11s} {'closed' if closed else 'open':6s} {min(turn.sector_rates):6.3f} {turn.mean_rate:6.3f} "
                  f"{max(turn.sector_rates):6.3f} {turn.spread:8.3f}  {turn.wheel_track_width:.3f} "
                  f"(catalogue {drive.track_width:.3f}, wheel separation {drive.wheel_separation})")
        if args.calibrate:
            write_track_width(name, round(turn.wheel_track_width, 3))


def write_track_width(class_name: str, width: float) -> None:
    """Set ``drive.effective_track_width`` in the class's catalogue file (the line must exist)."""
    path = robots_dir() / f"{class_name}.yaml"
    text, n = re.subn(r"(effective_track_width:\s*)[0-9.]+", rf"\g<1>{width}", path.read_text())
    if n != 1:
        raise SystemExit(f"{path}: add an 'effective_track_width:' line under drive first")
    path.write_text(text)


if __name__ == "__main__":
    main()
