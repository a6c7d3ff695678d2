"""How the example clients connect and end: one clear line and an exit status, never a traceback.

Standard library only; the examples import it from their own folder (``python3 examples/x.py`` puts
that folder on the path). A controller of your own wants the same two things: say which address
refused and what to start, and leave quietly on Ctrl-C.
"""
from __future__ import annotations

import socket
import sys
from typing import Callable

INTERRUPTED = 130  # 128 + SIGINT, what a shell reports for a command stopped by Ctrl-C
FAILED = 1


class ClientError(Exception):
    """A failure the user can act on, already worded as one line."""


def connect(host: str, port: int, what: str, timeout: float | None = 10.0) -> socket.socket:
    """A TCP connection to ``what`` (e.g. "protocol server") at host:port, or a ClientError that says so."""
    try:
        return socket.create_connection((host, port), timeout=timeout)
    except OSError as exc:
        reason = exc.strerror or str(exc) or type(exc).__name__
        raise ClientError(f"cannot connect to the {what} at {host}:{port}: {reason} "
                          f"(is the simulator running? start it with scripts/serve.sh or usarsim serve)") from None


def run_client(main: Callable[[], int | None], name: str) -> int:
    """Run ``main``; a refused or lost connection, or Ctrl-C, ends it with one line on stderr."""
    try:
        return main() or 0
    except KeyboardInterrupt:
        print(f"{name}: interrupted", file=sys.stderr)
        return INTERRUPTED
    except ClientError as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        return FAILED
    except OSError as exc:  # the server went away mid-run, a timeout, a file that cannot be written
        print(f"{name}: {exc.strerror or exc or type(exc).__name__}", file=sys.stderr)
        return FAILED
