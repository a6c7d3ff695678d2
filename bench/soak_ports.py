"""The soak's loads on the image, live-view and wireless ports (used by ``bench/soak.py``).

Each load is a set of client threads that run until ``stop`` is set; each talks to its port
only through the port's public network protocol. ``measure`` samples the server process while
a load runs and says whether its memory stayed flat.
"""
from __future__ import annotations

import json
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

FLAT = 0.05  # RSS at the end within 5 % of the RSS once the load is running
WAIT = 10.0  # s a client waits on a socket before it tries again
TCP_ESTABLISHED = 1  # tcpi_state of an open connection


@dataclass
class Load:
    """Client threads and the counters they keep."""

    stop: threading.Event = field(default_factory=threading.Event)
    threads: list[threading.Thread] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def count(self, what: str, n: int = 1) -> None:
        with self.lock:
            self.counts[what] = self.counts.get(what, 0) + n

    def run(self, target: Callable[["Load"], None], copies: int = 1) -> None:
        for _ in range(copies):
            thread = threading.Thread(target=_forgiving(target, self), daemon=True)
            thread.start()
            self.threads.append(thread)

    def end(self) -> str:
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=30)
        return ", ".join(f"{k} {v}" for k, v in sorted(self.counts.items()))


def _forgiving(target: Callable[[Load], None], load: Load) -> Callable[[], None]:
    def run() -> None:
        while not load.stop.is_set():
            try:
                target(load)
            except OSError as exc:  # the server closed us: that is what is measured, go again
                load.count(f"closed by server ({type(exc).__name__})")
                time.sleep(0.2)
            except Exception as exc:  # noqa: BLE001 - e.g. a refused WebSocket handshake
                load.count(f"refused ({type(exc).__name__})")
                time.sleep(0.2)
    return run


def measure(rss_mb: Callable[[], float], threads: Callable[[], int], seconds: float, label: str) -> str:
    """Sample RSS and threads for ``seconds``; the baseline is taken once the load has run a tenth of them."""
    start = time.monotonic()
    warmup = min(10.0, max(2.0, seconds / 10))
    base, peak, thread_counts = None, 0.0, []
    next_report = start + max(5.0, seconds / 6)
    while (elapsed := time.monotonic() - start) < seconds:
        time.sleep(1.0)
        rss, n = rss_mb(), threads()
        peak, thread_counts = max(peak, rss), thread_counts + [n]
        if base is None and elapsed >= warmup:
            base = rss
        if time.monotonic() >= next_report:
            print(f"    {label} {elapsed:5.0f} s: RSS {rss:7.1f} MB, threads {n}", flush=True)
            next_report += max(5.0, seconds / 6)
    end = rss_mb()
    base = base or end
    change = (end - base) / base
    verdict = "flat" if abs(change) <= FLAT else ("fell" if change < 0 else "GREW")
    return (f"RSS {base:.1f} -> {end:.1f} MB ({100 * change:+.1f} %, peak {peak:.1f}): {verdict} (5 % bound); "
            f"threads {min(thread_counts, default=0)}..{max(thread_counts, default=0)}")


# --- image port ------------------------------------------------------------------------------
def read_frame(sock: socket.socket) -> int:
    """One image-server frame off ``sock``; its size."""
    header = _exactly(sock, 5)
    size = int.from_bytes(header[1:5], "big")
    _exactly(sock, size)
    return size


def _exactly(sock: socket.socket, n: int) -> bytes:
    data = bytearray()
    while len(data) < n:
        chunk = sock.recv(min(n - len(data), 1 << 16))
        if not chunk:
            raise ConnectionResetError("server closed the connection")
        data += chunk
    return bytes(data)


def image_flood(port: int) -> Load:
    """One client sending 'OK' as fast as the server takes them while it reads the frames; churning clients."""
    load = Load()

    def flooder(load: Load) -> None:
        with socket.create_connection(("127.0.0.1", port), timeout=1.0) as sock:
            reader = threading.Thread(target=_drain, args=(sock, load), daemon=True)
            reader.start()
            _send_until_stopped(sock, b"OK", 512, load, reader.is_alive)

    def churner(load: Load) -> None:
        with socket.create_connection(("127.0.0.1", port), timeout=WAIT) as sock:
            read_frame(sock)
            load.count("churned connections")

    load.run(flooder)
    load.run(churner, copies=3)
    return load


def _send_until_stopped(sock: socket.socket, command: bytes, repeat: int, load: Load,
                        going: Callable[[], bool] = lambda: True) -> None:
    """Send ``command`` in bursts of ``repeat`` as fast as the server takes them, until the load stops."""
    burst = command * repeat
    while not load.stop.is_set() and going():
        try:
            sock.sendall(burst)
            load.count(f"{command.decode()} sent", repeat)
        except socket.timeout:  # the server is not reading: that is the point, go on pushing
            continue


def _small_window(port: int, timeout: float = WAIT) -> socket.socket:
    """A connection whose receive buffer is 4 KiB, so that what it does not read backs up at the server."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.settimeout(timeout)
    sock.connect(("127.0.0.1", port))
    return sock


def close_all(socks: list[socket.socket]) -> None:
    for sock in socks:
        sock.close()


def _drain(sock: socket.socket, load: Load) -> None:
    try:
        while True:
            read_frame(sock)
            load.count("frames read")
    except OSError:
        pass


def image_stall(port: int, idle: int = 20) -> tuple[Load, list[socket.socket]]:
    """``idle`` connections that never send or read (more than the limit); a client asking and never reading."""
    load = Load()
    held = []
    for _ in range(idle):
        held.append(socket.create_connection(("127.0.0.1", port), timeout=WAIT))

    def never_reads(load: Load) -> None:
        with _small_window(port) as sock:
            while not load.stop.is_set():
                sock.sendall(b"OK")
                load.stop.wait(0.5)
                if _closed(sock):
                    load.count("non-reader dropped by the server")
                    return

    load.run(never_reads)
    return load, held


def _closed(sock: socket.socket) -> bool:
    """Whether the server has closed or reset ``sock``, without reading what waits in it (Linux TCP_INFO)."""
    try:
        return sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 1)[0] != TCP_ESTABLISHED
    except OSError:
        return True


def image_served(port: int, seconds: float = 30.0) -> bool:
    """Whether a fresh image client gets a frame."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=seconds) as sock:
            read_frame(sock)
            return True
    except OSError:
        return False


# --- live-view port ----------------------------------------------------------------------------
SUBPROTOCOLS = ("foxglove.sdk.v1", "foxglove.websocket.v1")


def _subscribe_all(ws) -> int:  # noqa: ANN001 - a websockets client connection
    """Read the advertisements (until a second passes without one) and subscribe to every channel."""
    channels: dict[int, dict] = {}
    while True:
        try:
            frame = ws.recv(timeout=1.0)
        except TimeoutError:
            break
        if isinstance(frame, str):
            message = json.loads(frame)
            if message.get("op") == "advertise":
                channels.update({c["id"]: c for c in message["channels"]})
    ws.send(json.dumps({"op": "subscribe", "subscriptions": [
        {"id": i, "channelId": channel} for i, channel in enumerate(channels)]}))
    return len(channels)


def live_flood(port: int, clients: int = 10) -> Load:
    """``clients`` viewers (more than the limit) connecting, subscribing, reading a little, leaving."""
    from websockets.sync.client import connect

    load = Load()

    def viewer(load: Load) -> None:
        subprotocol = SUBPROTOCOLS[sum(load.counts.values()) % 2]
        with connect(f"ws://127.0.0.1:{port}", subprotocols=[subprotocol], open_timeout=WAIT) as ws:
            _subscribe_all(ws)
            for _ in range(20):
                ws.recv(timeout=WAIT)
            load.count(f"viewers served ({subprotocol})")

    load.run(viewer, copies=clients)
    return load


def live_stall(port: int, stalled: int = 7) -> tuple[Load, Callable[[], int]]:
    """``stalled`` viewers that subscribe and never read (reconnecting when dropped); a reading witness."""
    from websockets.sync.client import connect

    load = Load()

    def never_reads(load: Load) -> None:
        sock = _small_window(port)
        with connect(f"ws://127.0.0.1:{port}", sock=sock, subprotocols=[SUBPROTOCOLS[0]], open_timeout=WAIT,
                     max_queue=1) as ws:
            _subscribe_all(ws)
            load.count("stalled viewers connected")
            while not load.stop.wait(1.0):
                if _closed(sock):
                    load.count("stalled viewers dropped by the server")
                    return

    witness_messages = [0]

    def witness(load: Load) -> None:
        with connect(f"ws://127.0.0.1:{port}", subprotocols=[SUBPROTOCOLS[1]], open_timeout=WAIT) as ws:
            _subscribe_all(ws)
            while not load.stop.is_set():
                ws.recv(timeout=WAIT)
                witness_messages[0] += 1

    load.run(never_reads, copies=stalled)
    load.run(witness)
    return load, lambda: witness_messages[0]


# --- wireless port -----------------------------------------------------------------------------
def wss_flood(port: int) -> Load:
    """One client sending commands without reading the replies; clients connecting, asking, leaving."""
    load = Load()

    def flooder(load: Load) -> None:
        with _small_window(port, timeout=1.0) as sock:
            _send_until_stopped(sock, b"GETSS R1 R2;", 100, load)

    def churner(load: Load) -> None:
        with socket.create_connection(("127.0.0.1", port), timeout=WAIT) as sock:
            sock.sendall(b"GETSS R1 R2;")
            if sock.recv(256):
                load.count("churned connections answered")

    load.run(flooder)
    load.run(churner, copies=2)
    return load


def wss_stall(port: int, idle: int = 63) -> tuple[Load, list[socket.socket]]:
    """``idle`` connections that never send; a client sending and never reading."""
    held = [socket.create_connection(("127.0.0.1", port), timeout=WAIT) for _ in range(idle)]
    load = Load()

    def never_reads(load: Load) -> None:
        with _small_window(port, timeout=1.0) as sock:
            while not load.stop.is_set():
                try:
                    sock.sendall(b"GETSS R1 R2;" * 10)
                except socket.timeout:
                    pass
                load.stop.wait(0.1)

    load.run(never_reads)
    return load, held


def wss_answers(port: int, seconds: float = 10.0) -> bool:
    """Whether a fresh wireless client gets an answer."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=seconds) as sock:
            sock.sendall(b"GETSS R1 R2;")
            return bool(sock.recv(256))
    except OSError:
        return False
