"""The live view's front door: the WebSocket port viewers connect to, relaying to the Foxglove SDK's server.

The SDK's server (0.30) accepts only the subprotocol ``foxglove.sdk.v1`` and answers any other
offer with HTTP 400, has no connection limit and never drops a client that stops reading (it
drops that client's oldest messages instead). Viewers such as Lichtblick before late 2025 and
older Foxglove Studio offer only ``foxglove.websocket.v1``, the name of the same protocol before
the SDK renamed it (the messages are those of the ws-protocol v1 specification). So viewers
connect here, and each connection is relayed, frame for frame, to the SDK's server on a
loopback port of its own:

- both subprotocols are accepted (``SUBPROTOCOLS``); the viewer gets the one it offered;
- at most ``max_viewers`` connections: the next one gets HTTP 503 with a one-line reason;
- a viewer that has not completed the handshake within ``HANDSHAKE_TIMEOUT`` is closed;
- a viewer that takes nothing off the wire for ``send_timeout`` while data waits for it is
  dropped (close code 1008); what waits for it meanwhile is bounded (``WRITE_LIMIT`` bytes here,
  the SDK's per-client backlog there).
"""
from __future__ import annotations

import asyncio
import contextlib
import http
import logging
import threading
from typing import Any

from websockets.asyncio.client import connect
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response
from websockets.typing import Subprotocol

from usarsim.log_budget import LogBudget

log = logging.getLogger(__name__)

SDK_SUBPROTOCOL = "foxglove.sdk.v1"
SUBPROTOCOLS = (SDK_SUBPROTOCOL, "foxglove.websocket.v1")
HANDSHAKE_TIMEOUT = 10.0  # s from TCP connect to a completed WebSocket handshake
WRITE_LIMIT = 1 << 20  # bytes queued in a viewer's transport before the relay waits for it to read
VIEWER_MESSAGE_LIMIT = 1 << 20  # bytes of one message from a viewer (subscriptions are small JSON)
SDK_MESSAGE_LIMIT = 64 << 20  # bytes of one message from the SDK (a raw camera image)
SDK_QUEUE = 4  # messages the relay reads ahead from the SDK per viewer

# websockets logs every connection opened and closed at INFO; the door logs its own events, rate-limited
log.getChild("websocket").setLevel(logging.WARNING)


class FrontDoor:
    """A WebSocket server on ``host:port`` relaying each viewer to the SDK's server on ``sdk_port``."""

    def __init__(self, host: str, port: int, sdk_port: int, *, max_viewers: int, send_timeout: float) -> None:
        if max_viewers < 1 or not send_timeout > 0:
            raise ValueError("the live view needs max_viewers >= 1 and a positive send timeout")
        self.max_viewers = max_viewers
        self.send_timeout = send_timeout
        self._sdk_url = f"ws://127.0.0.1:{sdk_port}"
        self._viewers: set[ServerConnection] = set()
        self._refused = 0
        self._dropped = 0
        self._log = LogBudget(log)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="live-door", daemon=True)
        self._thread.start()
        try:
            self._server: Server = asyncio.run_coroutine_threadsafe(self._open(host, port), self._loop).result()
        except BaseException:
            self._stop_loop()
            raise
        self.port: int = self._server.sockets[0].getsockname()[1]

    @property
    def viewers(self) -> int:
        """Viewers connected now."""
        return len(self._viewers)

    @property
    def dropped(self) -> int:
        """Viewers dropped because they did not read."""
        return self._dropped

    async def _open(self, host: str, port: int) -> Server:
        return await serve(self._relay, host, port, subprotocols=[Subprotocol(s) for s in SUBPROTOCOLS],
                           process_request=self._admit, open_timeout=HANDSHAKE_TIMEOUT, close_timeout=1.0,
                           max_size=VIEWER_MESSAGE_LIMIT, write_limit=WRITE_LIMIT, compression=None,
                           logger=log.getChild("websocket"))

    def _admit(self, connection: ServerConnection, request: Request) -> Response | None:
        if len(self._viewers) < self.max_viewers:
            return None
        self._refused += 1
        self._log.log(logging.WARNING, ("full", _host(connection)), "live view full (%d viewers): refused %s (%d refused in all)",
                      self.max_viewers, _peer(connection), self._refused)
        return connection.respond(http.HTTPStatus.SERVICE_UNAVAILABLE,
                                  f"live view full: at most {self.max_viewers} viewers at once\n")

    async def _relay(self, viewer: ServerConnection) -> None:
        self._viewers.add(viewer)
        try:
            async with connect(self._sdk_url, subprotocols=[Subprotocol(SDK_SUBPROTOCOL)], compression=None,
                               max_size=SDK_MESSAGE_LIMIT, max_queue=SDK_QUEUE, open_timeout=HANDSHAKE_TIMEOUT,
                               close_timeout=1.0) as sdk:
                down = asyncio.ensure_future(self._to_viewer(sdk, viewer))
                up = asyncio.ensure_future(self._to_sdk(viewer, sdk))
                _, pending = await asyncio.wait((down, up), return_when=asyncio.FIRST_COMPLETED)
                for task in pending:
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError, ConnectionClosed):
                        await task
        except (OSError, ConnectionClosed, asyncio.TimeoutError) as exc:
            self._log.log(logging.INFO, _host(viewer), "live viewer %s: relay ended: %s", _peer(viewer), exc)
        finally:
            self._viewers.discard(viewer)

    async def _to_viewer(self, sdk: Any, viewer: ServerConnection) -> None:
        async for message in sdk:
            try:
                await asyncio.wait_for(viewer.send(message), self.send_timeout)
            except asyncio.TimeoutError:
                self._dropped += 1
                self._log.log(logging.WARNING, _host(viewer), "live viewer %s dropped: took nothing off the "
                              "wire for %g s", _peer(viewer), self.send_timeout)
                self._viewers.discard(viewer)  # its place is free now, not once the relay has wound down
                viewer.transport.abort()  # a closing handshake would wait on the same full buffer
                return
            except ConnectionClosed:
                return

    async def _to_sdk(self, viewer: ServerConnection, sdk: Any) -> None:
        with contextlib.suppress(ConnectionClosed):
            async for message in viewer:
                await sdk.send(message)

    def stop(self) -> None:
        """Close the port and every viewer."""
        async def close() -> None:
            self._server.close()
            await self._server.wait_closed()

        if self._loop.is_running():
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(close(), self._loop).result(timeout=5.0)
        self._stop_loop()

    def _stop_loop(self) -> None:
        if self._loop.is_running():
            self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5.0)
        if not self._loop.is_running():
            self._loop.close()


def _host(connection: ServerConnection) -> str:
    """The viewer's address: log lines are budgeted per address, not per connection."""
    address = connection.remote_address
    return str(address[0]) if address else "?"


def _peer(connection: ServerConnection) -> str:
    address = connection.remote_address
    return f"{address[0]}:{address[1]}" if address else "?"


__all__ = ["FrontDoor", "SUBPROTOCOLS", "SDK_SUBPROTOCOL"]
