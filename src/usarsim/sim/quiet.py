"""Silence PyBullet's C-level chatter on stdout (build banner, URDF merge notes).

`usarsim run` may write JSON lines to stdout, so nothing else may land there.
"""
from __future__ import annotations

import contextlib
import ctypes
import os
import sys
from typing import Iterator


def quiet_stdout() -> contextlib.AbstractContextManager[None]:
    """Redirect file descriptor 1 to /dev/null for the duration of the block."""
    return _quiet(sys.stdout)


def quiet_stderr() -> contextlib.AbstractContextManager[None]:
    """The same for file descriptor 2 (PyBullet's import banner goes there in some builds)."""
    return _quiet(sys.stderr)


@contextlib.contextmanager
def _quiet(stream: object) -> Iterator[None]:
    try:
        fd = stream.fileno()  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):  # stream replaced (pytest capture, IDEs)
        yield
        return
    stream.flush()  # type: ignore[attr-defined]
    saved = os.dup(fd)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), fd)
            yield
    finally:
        _flush_c_stdio()  # C printf output is buffered: drop it while the stream is still /dev/null
        os.dup2(saved, fd)
        os.close(saved)


def _flush_c_stdio() -> None:
    try:
        ctypes.CDLL(None).fflush(None)
    except (OSError, AttributeError):  # no C runtime symbols (unusual platforms)
        pass
