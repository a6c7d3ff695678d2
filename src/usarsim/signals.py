"""Stopping a long command cleanly on SIGINT (Ctrl-C) or SIGTERM, so that its output is finished."""
from __future__ import annotations

import contextlib
import signal
import threading
from typing import Any, Iterator

_starting_up = 0  # depth of starting_up() blocks in the main thread
_stop_events: list[threading.Event] = []  # those of the StopOnSignal blocks active now


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
        if _starting_up:  # nothing to finish yet: stop now rather than after a long world build
            self.exit_code = 130
            raise KeyboardInterrupt

    def __enter__(self) -> "StopOnSignal":
        if threading.current_thread() is threading.main_thread():
            self._previous = {sig: signal.signal(sig, self._handle) for sig in self.EXIT_CODES}
            _stop_events.append(self.event)
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        if self.event in _stop_events:
            _stop_events.remove(self.event)


@contextlib.contextmanager
def starting_up() -> Iterator[None]:
    """A phase with no output to finish (loading and building a world): while it lasts, a stop signal
    caught by :class:`StopOnSignal` raises KeyboardInterrupt at once instead of waiting for its end."""
    global _starting_up
    main = threading.current_thread() is threading.main_thread()
    _starting_up += main
    try:
        if main and any(event.is_set() for event in _stop_events):  # a stop came just before: honour it
            raise KeyboardInterrupt
        yield
    finally:
        _starting_up -= main


def ignore_further_sigints() -> None:
    """Ignore SIGINT from now until the process exits: its stop is already under way.

    Ctrl-C under ``ros2 launch`` reaches a node twice, from the terminal (the whole process group)
    and forwarded by launch; the second one must neither cut the clean stop short nor kill the
    interpreter while it exits (launch would report the node as died). SIGTERM still ends it.
    """
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


__all__ = ["StopOnSignal", "ignore_further_sigints", "starting_up"]
