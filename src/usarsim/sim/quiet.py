"""Silence PyBullet's C-level chatter on stdout (build banner, URDF merge notes).

`usarsim run` may write JSON lines to stdout, so nothing else may land there.
"""
from __future__ import annotations

import contextlib
import ctypes
import os
import sys
from typing import Iterator


@contextlib.contextmanager
def quiet_stdout() -> Iterator[None]:
    """Redirect file descriptor 1 to /dev/null for the duration of the block."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # stdout replaced (pytest capture, IDEs)
        yield
        return
    sys.stdout.flush()
    saved = os.dup(fd)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), fd)
            yield
    finally:
        _flush_c_stdio()  # C printf output is buffered: drop it while stdout is still /dev/null
        os.dup2(saved, fd)
        os.close(saved)


def _flush_c_stdio() -> None:
    try:
        ctypes.CDLL(None).fflush(None)
    except (OSError, AttributeError):  # no C runtime symbols (unusual platforms)
        pass
