"""``usarsim serve``: run a world with the USARSim text-protocol server (and the image server)."""
from __future__ import annotations

import argparse
import logging
import signal
import threading

from usarsim.protocol.server import DEFAULT_IMAGE_PORT, DEFAULT_PORT
from usarsim.protocol.wss import DEFAULT_WSS_PORT

log = logging.getLogger(__name__)


def add_subcommand(subparsers: "argparse._SubParsersAction") -> argparse.ArgumentParser:
    """Register ``serve`` on the ``usarsim`` command line."""
    from usarsim.sim.simulator import PACINGS

    serve = subparsers.add_parser("serve", help="serve a world over the USARSim text protocol (TCP)")
    serve.add_argument("--world", default="yellow", help="world name or YAML file (default: yellow)")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (0.0.0.0: every interface)")
    serve.add_argument("--port", type=int, default=DEFAULT_PORT, help="protocol port (default 3000; 0: any free)")
    serve.add_argument("--image-port", type=int, default=DEFAULT_IMAGE_PORT,
                       help="image server port (default 5003; -1: no image server)")
    serve.add_argument("--wss-port", type=int, default=DEFAULT_WSS_PORT,
                       help=f"wireless communication server port (default {DEFAULT_WSS_PORT}; -1: none)")
    serve.add_argument("--pacing", choices=PACINGS, default="realtime",
                       help="realtime: sim time follows the wall clock; fast: as fast as possible; "
                            "lockstep: as fast as the slowest client reads (no dropped SEN)")
    serve.add_argument("--seed", type=int, default=0, help="noise seed")
    serve.set_defaults(func=cmd_serve)
    return serve


def cmd_serve(args: argparse.Namespace) -> int:
    """Run until Ctrl-C (SIGINT) or SIGTERM."""
    from usarsim.protocol.server import ProtocolServer
    from usarsim.protocol.wss import WirelessServer
    from usarsim.sim.simulator import Simulator

    sim = Simulator(args.world, pacing=args.pacing, seed=args.seed)
    image_port = None if args.image_port is not None and args.image_port < 0 else args.image_port
    server = ProtocolServer(sim, host=args.host, port=args.port, image_port=image_port)
    wss = WirelessServer(sim, host=args.host, port=args.wss_port) if args.wss_port >= 0 else None
    done = threading.Event()

    def on_signal(signum: int, _frame: object) -> None:
        done.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        server.start()
        if wss is not None:
            wss.start()
        images = f", images on port {server.image_server.port}" if server.image_server is not None else ""
        images += f", wireless on port {wss.port}" if wss is not None else ""
        print(f"usarsim: world '{sim.spec.name}' on {args.host}:{server.port}{images} "
              f"({args.pacing} pacing); Ctrl-C stops", flush=True)
        while not done.wait(0.5):
            pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if wss is not None:
            wss.stop()
        server.stop()
        sim.close()
    log.info("server stopped")
    return 0


__all__ = ["add_subcommand", "cmd_serve"]
