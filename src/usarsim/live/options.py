"""The live view's command-line options, shared by ``serve``, ``run`` and ``sweep``."""
from __future__ import annotations

import argparse
import contextlib
import sys
from typing import Callable, Iterator

from usarsim.config_loading import ConfigError

DEFAULT_PORT = 8765  # Foxglove's default WebSocket port
DEFAULT_MAX_VIEWERS = 8


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return value


def add_live_arguments(parser: argparse.ArgumentParser, *, flag: bool = True, pacing: bool = False) -> None:
    """``--live`` (when ``flag``), ``--live-host``, ``--live-port`` and (when ``pacing``) ``--live-pacing``."""
    if flag:
        parser.add_argument("--live", action="store_true",
                            help="stream world, robots, TF, scans, images, trails and markers to Foxglove "
                                 "(ws://HOST:PORT, see docs/scale.md)")
    parser.add_argument("--live-host", default="127.0.0.1", help="live view address (0.0.0.0: every interface)")
    parser.add_argument("--live-port", type=int, default=DEFAULT_PORT,
                        help=f"live view WebSocket port (default {DEFAULT_PORT}; 0: any free port)")
    parser.add_argument("--live-max-viewers", type=_positive, default=DEFAULT_MAX_VIEWERS, metavar="N",
                        help=f"live view connections at once (default {DEFAULT_MAX_VIEWERS}; "
                             "the next one gets HTTP 503)")
    if pacing:
        parser.add_argument("--live-pacing", choices=("realtime", "fast"), default="realtime",
                            help="pace of the live trial (results do not depend on it)")


@contextlib.contextmanager
def live_attach(args: argparse.Namespace, enabled: bool) -> Iterator[Callable | None]:
    """A running live view's ``attach(sim) -> pacer`` for the duration of the block (None when not enabled)."""
    if not enabled:
        yield None
        return
    from usarsim.live.view import LiveView
    from usarsim.runner import Pacer

    try:
        view = LiveView(host=args.live_host, port=args.live_port,
                        max_viewers=getattr(args, "live_max_viewers", DEFAULT_MAX_VIEWERS))
    except Exception as exc:  # noqa: BLE001 - the SDK raises its own error types for a taken port
        raise ConfigError(f"live view: cannot listen on {args.live_host}:{args.live_port}: {exc}") from None
    print(f"usarsim: live view on {view.url} (Foxglove: Open connection -> Foxglove WebSocket; "
          "layout config/foxglove_layout.json)", file=sys.stderr, flush=True)

    def attach(sim):  # noqa: ANN001, ANN202 - Simulator -> pacer
        view.attach(sim)
        pacer = Pacer(getattr(args, "live_pacing", "fast"))
        return lambda: pacer.wait_until(sim.time)

    try:
        yield attach
    finally:
        view.stop()
