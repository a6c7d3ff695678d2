"""``usarsim sweep``: run a sweep file (see docs/scale.md)."""
from __future__ import annotations

import argparse
import sys

from usarsim.scale.ray_cluster import DEFAULT_TIMEOUT


def add_subcommand(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Register ``usarsim sweep``."""
    from usarsim.live.options import add_live_arguments

    sweep = subparsers.add_parser(
        "sweep", help="run a grid of trials (worlds x robots x seeds) in parallel into one results folder",
        description="Run every trial of SWEEP.yaml not yet finished in OUTPUT (a killed sweep resumes), on the "
                    "local cores or a Ray cluster; write OUTPUT/summary.csv and summary.parquet. See docs/scale.md.")
    sweep.add_argument("sweep_file", metavar="SWEEP.yaml")
    sweep.add_argument("--output", "-o", default=None, help="results folder (default: results/<sweep name>)")
    sweep.add_argument("--workers", "-j", type=int, default=0, help="local worker processes (default: every core)")
    sweep.add_argument("--ray", metavar="ADDRESS", default=None,
                       help="run on the Ray cluster at ADDRESS (ray://HEAD:10001 through Ray Client, HEAD:6379 or "
                            "auto on a node of the cluster; 'local': a local Ray)")
    sweep.add_argument("--ray-timeout", metavar="SECONDS", type=float, default=DEFAULT_TIMEOUT,
                       help=f"give up connecting to the Ray cluster and checking its nodes after SECONDS "
                            f"(default {DEFAULT_TIMEOUT:g})")
    sweep.add_argument("--retry-failed", action="store_true", help="run failed trials again")
    sweep.add_argument("--live-trial", metavar="TRIAL", default=None,
                       help="run this trial first, in real time, with the live view (see --live-port)")
    add_live_arguments(sweep, flag=False, pacing=True)
    sweep.set_defaults(func=cmd_sweep)


def cmd_sweep(args: argparse.Namespace) -> int:
    """usarsim sweep."""
    from usarsim.live.options import live_attach
    from usarsim.scale.sweep import SweepOptions, SweepStopped, run_sweep
    from usarsim.scale.sweep_file import load_sweep

    if args.workers < 0:
        print("usarsim sweep: --workers must be 0 (every core) or more", file=sys.stderr)
        return 2
    if not args.ray_timeout > 0:
        print("usarsim sweep: --ray-timeout must be a positive number of seconds", file=sys.stderr)
        return 2
    output = args.output or f"results/{load_sweep(args.sweep_file).name}"
    try:
        with live_attach(args, enabled=args.live_trial is not None) as attach:
            report = run_sweep(args.sweep_file, SweepOptions(output=output, workers=args.workers, ray=args.ray,
                                                             ray_timeout=args.ray_timeout,
                                                             retry_failed=args.retry_failed,
                                                             live_trial=args.live_trial, live_attach=attach))
    except SweepStopped as stopped:
        print(f"usarsim sweep: {stopped}", file=sys.stderr)
        return stopped.exit_status
    assert report.table is not None  # run_sweep writes the table even when interrupted
    csv_path, parquet_path = report.table
    print(f"{report.ran} trials run, {report.skipped} already done, {report.failed} failed; "
          f"{csv_path} and {parquet_path}", file=sys.stderr)
    return 0  # failed trials are results (rows with status failed), not a failure of the sweep
