"""An asyncio TCP server that runs in a thread of its own (the side servers' event loop)."""
from __future__ import annotations

import asyncio
import threading
from typing import Any, Awaitable, Callable


async def cancel_other_tasks() -> None:
    """Cancel every task on the running loop but the caller's and wait for them (a server stopping)."""
    tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


# How a client's session may end without it being an error: the client went (a reset, a broken
# pipe), or the server is stopping (a cancelled task: ending quietly keeps Python 3.11's stream
# callback from logging a cancelled handler as an error).
SESSION_ENDS: tuple[type[BaseException], ...] = (ConnectionError, OSError, asyncio.CancelledError)


def cancel_others(tasks: "list[asyncio.Future] | set[asyncio.Future]") -> None:
    """Cancel ``tasks`` but the one running this (a connection closing from one of its own tasks)."""
    current = asyncio.current_task()
    for task in tasks:
        if task is not current:
            task.cancel()


class LoopThread:
    """Owns one event loop thread serving one listening socket; ``start`` returns once bound."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.loop: asyncio.AbstractEventLoop | None = None
        self.server: asyncio.AbstractServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        """True between a successful ``start`` and ``stop``."""
        return self._thread is not None

    def start(self, handler: Callable[..., Awaitable[None]], host: str, port: int,
              on_stop: Callable[[], Awaitable[None]]) -> int:
        """Serve ``handler`` on host:port (0: any free port) and return the bound port; raises what
        binding raised (OSError when the port is taken). ``on_stop`` runs on the loop at ``stop``."""
        self.loop = asyncio.new_event_loop()
        try:
            self.server = self.loop.run_until_complete(asyncio.start_server(handler, host, port))
        except BaseException:
            self.loop.close()
            raise
        self._thread = threading.Thread(target=self._run, args=(on_stop,), name=self.name, daemon=True)
        self._thread.start()
        return self.server.sockets[0].getsockname()[1]

    def _run(self, on_stop: Callable[[], Awaitable[None]]) -> None:
        loop = self.loop
        assert loop is not None
        asyncio.set_event_loop(loop)
        try:
            loop.run_forever()
        finally:
            if self.server is not None:
                self.server.close()
            loop.run_until_complete(on_stop())
            loop.close()

    def call_soon(self, fn: Callable[..., Any], *args: Any) -> None:
        """Run ``fn(*args)`` on the loop from any thread (nothing when it has stopped)."""
        loop = self.loop
        if loop is None or loop.is_closed():
            return
        try:
            loop.call_soon_threadsafe(fn, *args)
        except RuntimeError:  # closed between the check and the call
            pass

    def stop(self) -> None:
        """Stop the loop (after ``on_stop``) and wait for the thread."""
        if self._thread is None:
            return
        self.call_soon(self.loop.stop)  # type: ignore[union-attr]
        self._thread.join()
        self._thread = None


__all__ = ["LoopThread"]
