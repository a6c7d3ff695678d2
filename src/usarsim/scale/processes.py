"""A sweep's processes: workers that end with the sweep, and stop signals that end it cleanly.

A killed sweep must leave nothing running: a worker that outlived its sweep would go on writing
into the results folder while a resumed sweep runs the same trial. On Linux each worker asks the
kernel to kill it when its parent dies (``PR_SET_PDEATHSIG``), which holds even for SIGKILL; a
thread in the worker watching its parent covers other systems.
"""
from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import signal
import sys
import threading
import time
from typing import Iterator

PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>
PARENT_WATCH_PERIOD = 0.5  # s between checks where the kernel cannot watch the parent
# Signals that stop a sweep like Ctrl-C: the table of what finished is written, the rest is resumable.
STOP_SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")


class Stopped(KeyboardInterrupt):
    """The sweep was stopped by a signal (a KeyboardInterrupt, so it unwinds as Ctrl-C does)."""

    def __init__(self, signal_name: str) -> None:
        super().__init__(signal_name)
        self.signal_name = signal_name

    @property
    def exit_status(self) -> int:
        """128 + the signal's number, as a shell reports a command ended by that signal."""
        return 128 + int(getattr(signal, self.signal_name))


def die_with_parent(parent_pid: int) -> None:
    """End this process when ``parent_pid`` (its parent) ends, however the parent ended."""
    if sys.platform.startswith("linux") and _prctl_death_signal(signal.SIGKILL):
        if os.getppid() != parent_pid:  # the parent died before the request was in place
            os._exit(1)
        return
    threading.Thread(target=_watch_parent, args=(parent_pid,), daemon=True, name="parent-watch").start()


def _prctl_death_signal(signum: int) -> bool:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _watch_parent(parent_pid: int) -> None:
    while os.getppid() == parent_pid:
        time.sleep(PARENT_WATCH_PERIOD)
    os._exit(1)


@contextlib.contextmanager
def stop_signals_raise() -> Iterator[None]:
    """Within: SIGINT, SIGTERM and SIGHUP raise ``Stopped`` (naming the signal) in the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {}
    for name in STOP_SIGNALS:
        # a signal ignored on purpose (nohup, a background job's SIGINT) stays ignored
        if hasattr(signal, name) and signal.getsignal(getattr(signal, name)) is not signal.SIG_IGN:
            previous[name] = signal.signal(getattr(signal, name), _raise_stopped)
    try:
        yield
    finally:
        for name, handler in previous.items():
            signal.signal(getattr(signal, name), handler)


def _raise_stopped(signum: int, _frame: object) -> None:
    raise Stopped(signal.Signals(signum).name)
