"""Stopping a long command cleanly on SIGINT (Ctrl-C) or SIGTERM, so that its output is finished."""
from __future__ import annotations

import signal
import threading
from typing import Any


class StopOnSignal:
    """SIGINT and SIGTERM set :attr:`event` instead of killing the process, so the output can be finished.

    :attr:`exit_code` is then 130 for SIGINT (as a shell reports Ctrl-C) and 0 for SIGTERM (a
    requested stop whose output is complete).
    """

    EXIT_CODES = {signal.SIGINT: 130, signal.SIGTERM: 0}

    def __init__(self) -> None:
        self.event = threading.Event()
        self.signal_name: str | None = None
        self.exit_code = 0
        self._previous: dict[int, Any] = {}

    def _handle(self, signum: int, _frame: object) -> None:
        if self.event.is_set() and signum == signal.SIGINT:  # a second Ctrl-C: the user insists
            raise KeyboardInterrupt
        self.signal_name = signal.Signals(signum).name
        self.exit_code = self.EXIT_CODES.get(signal.Signals(signum), 0)
        self.event.set()

    def __enter__(self) -> "StopOnSignal":
        if threading.current_thread() is threading.main_thread():
            self._previous = {sig: signal.signal(sig, self._handle) for sig in self.EXIT_CODES}
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)


def ignore_further_sigints() -> None:
    """Ignore SIGINT from now until the process exits: its stop is already under way.

    Ctrl-C under ``ros2 launch`` reaches a node twice, from the terminal (the whole process group)
    and forwarded by launch; the second one must neither cut the clean stop short nor kill the
    interpreter while it exits (launch would report the node as died). SIGTERM still ends it.
    """
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


__all__ = ["StopOnSignal", "ignore_further_sigints"]
