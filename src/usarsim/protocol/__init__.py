"""USARSim text protocol: grammar (pure), message formatting, command mapping and the TCP server."""
from __future__ import annotations

__all__ = ["ProtocolServer"]


def __getattr__(name: str):  # lazy: importing the grammar must not pull in asyncio or PyBullet
    if name == "ProtocolServer":
        from usarsim.protocol.server import ProtocolServer
        return ProtocolServer
    raise AttributeError(name)
