"""Turning in place: yaw rate against heading, open loop and with the drive's yaw-rate loop.

For every skid-steer, differential and tracked class, spins the robot through a full turn
on a flat floor with wheels at -w/+w (surface speed ``--speed``) and bins its yaw rate by
heading (16 bins). Prints min/mean/max and max/min of the open loop (the contact model
alone) and of the closed loop, and the effective track width the open-loop mean implies
(``drive.effective_track_width`` in the catalogue: r * 2w / mean rate).

    .venv/bin/python bench/turning.py [--classes P2AT,Kenaf] [--speed 0.2]
"""
from __future__ import annotations

import argparse
import math

import numpy as np

from usarsim import frames
from usarsim.sim.catalogue import available_robots, load_robot
from usarsim.sim.commands import WheelDrive
from usarsim.sim.drives import SkidSteerDrive
from usarsim.sim.simulator import Simulator

SKID_TYPES = ("skid", "differential", "tracked")


def rates_by_heading(class_name: str, spin: float, bins: int = 16) -> list[float]:
    """Mean yaw rate (rad/s) in each heading bin over one full turn in place."""
    with Simulator("empty", seed=1) as sim:
        sim.spawn(class_name, "r", position=(0.0, 0.0, 0.0))
        sim.run_for(0.5)
        sim.submit(WheelDrive("r", -spin, spin))
        sim.run_for(1.0)
        headings, rates, turned, last = [], [], 0.0, None
        while turned < 2 * math.pi + 0.3 and sim.time < 120:
            sim.step(4)
            truth = sim.ground_truth("r")
            yaw = frames.euler_from_quaternion(truth.orientation)[2]
            if last is not None:
                turned += abs(math.remainder(yaw - last, 2 * math.pi))
            last = yaw
            headings.append(yaw)
            rates.append(truth.angular_velocity[2])
    index = ((np.degrees(headings) % 360.0) // (360.0 / bins)).astype(int)
    values = np.array(rates)
    return [float(values[index == b].mean()) for b in range(bins) if (index == b).any()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--classes", default="")
    parser.add_argument("--speed", type=float, default=0.2, help="wheel surface speed per side, m/s")
    args = parser.parse_args()
    classes = [c for c in args.classes.split(",") if c] or [
        c for c in available_robots() if load_robot(c).drive.type in SKID_TYPES]
    print(f"{'class':11s} {'loop':6s} {'min':>6s} {'mean':>6s} {'max':>6s} {'max/min':>8s}  "
          f"{'ideal':>6s}  effective track width (m)")
    for name in classes:
        drive = load_robot(name).drive
        spin = min(args.speed / drive.wheel_radius, drive.max_wheel_speed)
        ideal = 2 * spin * drive.wheel_radius / drive.wheel_separation
        for closed in (False, True):
            SkidSteerDrive.yaw_control = closed
            try:
                r = rates_by_heading(name, spin)
            finally:
                SkidSteerDrive.yaw_control = True
            mean = float(np.mean(r))
            width = 2 * spin * drive.wheel_radius / mean if not closed else drive.track_width
            print(f"{name:11s} {'closed' if closed else 'open':6s} {min(r):6.3f} {mean:6.3f} {max(r):6.3f} "
                  f"{max(r) / min(r):8.3f}  {ideal:6.3f}  {width:.3f} (wheel separation {drive.wheel_separation})")


if __name__ == "__main__":
    main()
