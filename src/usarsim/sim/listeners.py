"""Callbacks the core hands its results to (front doors listening for readings, link tables ...)."""
from __future__ import annotations

import logging
import threading
from typing import Any, Callable, Generic, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


class Listeners(Generic[F]):
    """Callbacks added and removed from any thread, called from the stepping thread.

    A failing callback is logged and never stops the caller (a broken front door must
    not stop physics).
    """

    def __init__(self, what: str, log: logging.Logger) -> None:
        self._what = what  # "reading listener": for the log line
        self._log = log
        self._lock = threading.Lock()
        self._items: list[F] = []

    def add(self, listener: F) -> None:
        """Call ``listener`` from now on."""
        with self._lock:
            self._items.append(listener)

    def remove(self, listener: F) -> None:
        """Stop calling ``listener`` (no error if it was not added)."""
        with self._lock:
            if listener in self._items:
                self._items.remove(listener)

    def snapshot(self) -> list[F]:
        """The listeners now, to call outside any lock."""
        with self._lock:
            return list(self._items)

    def call(self, listeners: list[F], *args: Any) -> None:
        """Call each of ``listeners`` (a snapshot) with ``args``; log and go on when one fails."""
        for listener in listeners:
            try:
                listener(*args)
            except Exception:  # noqa: BLE001
                self._log.exception("%s failed", self._what)
