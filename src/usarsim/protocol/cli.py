"""``usarsim serve``: run a world with the USARSim text-protocol server (and the image server)."""
from __future__ import annotations

import argparse
import contextlib
import logging
import signal
import socket
import sys
import threading
from typing import TYPE_CHECKING

from usarsim.arguments import positive_float, positive_int, seed_number
from usarsim.protocol.dialect import AUTO, SERVER_DIALECTS
from usarsim.protocol.server import DEFAULT_IMAGE_PORT, DEFAULT_PORT, INIT_TIMEOUT, MAX_CONNECTIONS
from usarsim.protocol.truth_server import TRUTH_HOST
from usarsim.protocol.truth_wire import DEFAULT_TRUTH_PORT
from usarsim.protocol.udk_wss_wire import DEFAULT_UDK_WSS_PORT
from usarsim.protocol.units import UNITS
from usarsim.protocol.wss import DEFAULT_WSS_PORT
from usarsim.sim.noise import NO_NOISE_HELP

if TYPE_CHECKING:
    from usarsim.protocol.image_server import ImageOptions
    from usarsim.protocol.server import ProtocolServer
    from usarsim.sim.simulator import Simulator

WSS_DIALECTS = ("ut2004", "udk")
WSS_PORTS = {"ut2004": DEFAULT_WSS_PORT, "udk": DEFAULT_UDK_WSS_PORT}

log = logging.getLogger(__name__)


def add_subcommand(subparsers: "argparse._SubParsersAction") -> argparse.ArgumentParser:
    """Register ``serve`` on the ``usarsim`` command line."""
    from usarsim.live.options import add_live_arguments
    from usarsim.sim.simulator import PACINGS
    from usarsim.sim.world import DEFAULT_WORLD

    serve = subparsers.add_parser("serve", help="serve a world over the USARSim text protocol (TCP)")
    serve.add_argument("--world", default=DEFAULT_WORLD, help=f"world name or YAML file (default: {DEFAULT_WORLD})")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (0.0.0.0: every interface)")
    serve.add_argument("--port", type=_port, default=DEFAULT_PORT, help="protocol port (default 3000; 0: any free)")
    serve.add_argument("--image-port", type=_image_port, default=DEFAULT_IMAGE_PORT,
                       help="image server port (default 5003; -1: no image server)")
    serve.add_argument("--max-clients", type=positive_int, default=MAX_CONNECTIONS,
                       help=f"protocol connections served at once (default {MAX_CONNECTIONS}, the manual's "
                            "MaxConnections); more are answered ERR and closed")
    serve.add_argument("--init-timeout", type=positive_float, default=INIT_TIMEOUT,
                       help=f"seconds a connection may stay without INIT before it is closed (default {INIT_TIMEOUT:g})")
    serve.add_argument("--wss-port", type=_image_port, default=None,
                       help=f"wireless server port (default {DEFAULT_WSS_PORT}, or {DEFAULT_UDK_WSS_PORT} with "
                            "--wss-dialect udk; -1: none)")
    serve.add_argument("--wss-dialect", choices=WSS_DIALECTS, default="ut2004",
                       help="wireless server: ut2004 (the 3.1.3 ComServer: REGISTER, LISTEN, OPEN, GETSS; default) "
                            "or udk (the UDK-era WSS: INIT, GETSS, DNS, REVERSEDNS, relays through allocated ports)")
    serve.add_argument("--truth-port", type=_image_port, default=-1,
                       help=f"ground-truth (USARTruth) server port, e.g. {DEFAULT_TRUTH_PORT} (default -1: none; "
                            "it tells every robot's and victim's true pose)")
    serve.add_argument("--truth-host", default=TRUTH_HOST,
                       help=f"address the ground-truth server listens on (default {TRUTH_HOST}, whatever --host is)")
    serve.add_argument("--pacing", choices=PACINGS, default="realtime",
                       help="realtime: sim time follows the wall clock; fast: as fast as possible; "
                            "lockstep: as fast as the slowest client reads (no dropped SEN)")
    serve.add_argument("--seed", type=seed_number, default=0, help="noise seed")
    serve.add_argument("--units", choices=UNITS, default="si",
                       help="si: metres and radians (USARSim 3.x, default); unreal: Unreal units "
                            "(250 UU = 1 m) and integer rotations (32768 = pi) as UU-era clients send them")
    serve.add_argument("--dialect", choices=SERVER_DIALECTS, default=AUTO,
                       help="wire forms: auto (default: each connection its own, UT2004 unless its INIT "
                            "names a UDK-only class such as USARBot.P3AT), ut2004 (USARSim 3.x, the manual) "
                            "or udk (the UDK release) for every connection")
    add_image_arguments(serve)
    add_live_arguments(serve)
    serve.add_argument("--no-noise", dest="noise", action="store_false", help=NO_NOISE_HELP)
    serve.set_defaults(func=cmd_serve)
    return serve


def add_image_arguments(parser: argparse.ArgumentParser) -> None:
    """The image server's options (format, size, frame rate, start mode, MultiView)."""
    group = parser.add_argument_group("image server (--image-port)")
    group.add_argument("--image-type", type=_image_type, default=3, metavar="TYPE",
                       help="raw, or JPEG: super, good, normal, fair, bad (or 0..5, the ImageType byte; "
                            "default normal)")
    group.add_argument("--jpeg-quality", type=int, default=None, metavar="Q",
                       help="JPEG quality 1..100 instead of the one of --image-type")
    group.add_argument("--image-size", type=_size, default=None, metavar="WxH",
                       help="scale camera frames to fit WxH, aspect kept (default: as the camera renders)")
    group.add_argument("--image-fps", type=float, default=10.0, metavar="FPS",
                       help="frames per second at most per client; streamed cameras render at this rate "
                            "(default 10)")
    group.add_argument("--image-on-request", action="store_true",
                       help="send a frame only when asked (OK or U), not one at connect (UDK LegacyMode=false)")
    group.add_argument("--image-max-clients", type=int, default=16, metavar="N",
                       help="image connections at once (default 16)")
    group.add_argument("--multiview", type=int, default=0, metavar="N",
                       help="MultiView: tile the first camera of up to N robots in one image (CameraNum; "
                            "0: off)")
    group.add_argument("--multiview-columns", type=int, default=0, metavar="C",
                       help="MultiView tiles per row (WideMode; 0: as square as possible)")
    group.add_argument("--multiview-tile", type=_size, default=(320, 240), metavar="WxH",
                       help="MultiView tile size (CameraXres x CameraYres; default 320x240)")


def image_options(args: argparse.Namespace) -> "ImageOptions":
    """ImageOptions from the parsed ``serve`` arguments (ValueError names the bad one)."""
    from usarsim.protocol.image_server import ImageOptions
    from usarsim.protocol.image_wire import Encoding
    from usarsim.protocol.multiview import MultiViewConfig

    multiview = None
    if args.multiview:
        multiview = MultiViewConfig(cameras=args.multiview, wide_mode=args.multiview_columns,
                                    tile_width=args.multiview_tile[0], tile_height=args.multiview_tile[1])
    return ImageOptions(encoding=Encoding(args.image_type, args.jpeg_quality), frame_rate=args.image_fps,
                        size=args.image_size, legacy=not args.image_on_request,
                        max_clients=args.image_max_clients, multiview=multiview)


def _image_type(text: str) -> int:
    from usarsim.protocol.image_wire import parse_image_type

    try:
        return parse_image_type(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _port(text: str, lowest: int = 0) -> int:
    try:
        port = int(text)
    except ValueError:
        port = lowest - 1
    if not lowest <= port <= 65535:
        raise argparse.ArgumentTypeError(f"a port is {lowest}..65535 (0: any free one), got {text!r}")
    return port


def _image_port(text: str) -> int:
    """A port of an optional server: -1 means none."""
    return _port(text, lowest=-1)


def _size(text: str) -> tuple[int, int]:
    try:
        width, height = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected WIDTHxHEIGHT (e.g. 320x240), got {text!r}") from None
    if not (0 < width <= 4096 and 0 < height <= 4096):
        raise argparse.ArgumentTypeError(f"width and height must be 1..4096, got {text!r}")
    return width, height


def cmd_serve(args: argparse.Namespace) -> int:
    """Run until Ctrl-C (SIGINT) or SIGTERM."""
    from usarsim.live.options import live_attach
    from usarsim.protocol.server import ProtocolServer
    from usarsim.sim.simulator import Simulator

    try:
        options = image_options(args)
    except ValueError as exc:
        print(f"usarsim serve: error: {exc}", file=sys.stderr)
        return 2
    sim = Simulator(args.world, pacing=args.pacing, seed=args.seed, noise=args.noise)
    image_port = None if args.image_port < 0 else args.image_port
    server = ProtocolServer(sim, host=args.host, port=args.port, image_port=image_port, image_options=options,
                            dialect=args.dialect, units=args.units, max_connections=args.max_clients,
                            init_timeout=args.init_timeout)
    side_servers: dict = {}
    done = threading.Event()

    def on_signal(signum: int, _frame: object) -> None:
        done.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    live = contextlib.ExitStack()
    try:
        attach = live.enter_context(live_attach(args, enabled=args.live))
        if attach is not None:
            attach(sim)
        try:
            server.start()
            side_servers = _side_servers(args, sim, server)
            for side in side_servers.values():
                side.start()
        except socket.gaierror as exc:
            print(f"usarsim serve: error: cannot resolve host {args.host!r}: {exc.strerror}", file=sys.stderr)
            return 2
        except OSError as exc:  # port in use, address not on this machine
            print(f"usarsim serve: error: {exc}", file=sys.stderr)
            return 2
        images = f", images on port {server.image_server.port}" if server.image_server is not None else ""
        images += "".join(f", {what} on port {side.port}" for what, side in side_servers.items())
        print(f"usarsim: world '{sim.spec.name}' on {args.host}:{server.port}{images} "
              f"({args.pacing} pacing); Ctrl-C stops", flush=True)
        while not done.wait(0.5):
            pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for side in side_servers.values():
            side.stop()
        server.stop()
        live.close()
        sim.close()
    log.info("server stopped")
    return 0


def _side_servers(args: argparse.Namespace, sim: "Simulator", server: "ProtocolServer") -> dict:
    """The wireless and ground-truth servers the arguments ask for, by what the banner calls them."""
    from usarsim.protocol.truth_server import TruthServer
    from usarsim.protocol.udk_wss import UdkWirelessServer
    from usarsim.protocol.wss import WirelessServer

    sides: dict = {}
    wss_port = WSS_PORTS[args.wss_dialect] if args.wss_port is None else args.wss_port
    image_port = server.image_server.port if server.image_server is not None else -1
    own_ports = {port for port in (server.port, image_port, args.truth_port) if port > 0}
    if wss_port >= 0 and args.wss_dialect == "udk":
        sides["UDK wireless"] = UdkWirelessServer(sim, host=args.host, port=wss_port)
    elif wss_port >= 0:
        sides["wireless"] = WirelessServer(sim, host=args.host, port=wss_port, reserved_ports=own_ports)
    if args.truth_port >= 0:
        sides[f"ground truth ({args.truth_host})"] = TruthServer(sim, host=args.truth_host, port=args.truth_port)
    return sides


__all__ = ["WSS_DIALECTS", "add_subcommand", "cmd_serve"]
