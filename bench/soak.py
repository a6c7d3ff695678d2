"""Soak bench (not a test): a live ``usarsim serve`` under fuzz, churn and stalled clients.

Runs the server as its own process (as users run it) and prints, per phase, the
server's resident memory (RSS), its thread count, tracebacks found in its log and
the longest gap between the periodic lines of a well-behaved witness client:

1. fuzz: N seeded hostile lines (default 100,000; ``test/fuzz/generator.py``);
2. churn: connect / INIT / disconnect cycles (default 3,000): RSS after the first
   100 and at the end (the target: within 5 %);
3. stall: a client that INITs and never reads, for S seconds (default 600), while
   the witness keeps reading: RSS sampled along the way;
4. reply flood: a client sending commands without reading their replies for F
   seconds (default 60): it must be disconnected with a logged reason, RSS flat;
5. the image port (a camera robot driving): a request flood (a client sending ``OK`` as
   fast as the server takes them, reading the frames; churning clients), then a stall
   (20 connections that never send or read, over the limit of 16, and a client asking
   for frames and never reading), then whether a fresh client still gets a frame;
6. the live-view port: a flood (10 viewers, over the limit of 8, connecting with either
   subprotocol, subscribing, reading 20 messages, leaving), then a stall (7 viewers that
   subscribe and never read, beside a reading witness);
7. the wireless port, through its network protocol only: a flood (commands without
   reading the replies; connect/ask/leave churn), then a stall (63 idle connections and
   one sending without reading), then whether a fresh client is answered.

Each of 5-7 prints RSS once the load runs and at its end (flat: within 5 %) and the range
of the thread count.

    .venv/bin/python bench/soak.py [--lines 100000] [--cycles 3000] [--stall 600] [--flood 60]
        [--image-flood 60] [--image-stall 600] [--live-flood 60] [--live-stall 600]
        [--wss-flood 60] [--wss-stall 600]
"""
from __future__ import annotations

import argparse
import re
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "test"))

from fuzz.driver import _connect, _spawned, fuzz  # noqa: E402
from fuzz.generator import lines  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
import soak_ports as ports  # noqa: E402

LOCATIONS = ["2,2,0", "4,2,0", "6,2,0", "8,2,0", "3,4,0"]  # free SAE ground spots in the default world, empty


class Server:
    """``usarsim serve`` in a child process, its log in a file."""

    def __init__(self, world: str) -> None:
        self.log_path = Path(tempfile.mkstemp(prefix="usarsim-soak-", suffix=".log")[1])
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "usarsim.cli", "serve", "--world", world, "--port", "0", "--image-port", "0",
             "--max-clients", "32", "--wss-port", "0", "--live", "--live-port", "0"],
            stdout=subprocess.PIPE, stderr=self.log, text=True)
        line = self.proc.stdout.readline() if self.proc.stdout else ""
        found = re.search(r":(\d+), images on port (\d+), wireless on port (\d+)", line)
        live = re.search(r"live view on ws://[^:]+:(\d+)", self.log_path.read_text(errors="replace"))
        if not (found and live):
            raise RuntimeError(f"server did not start: {line!r}; see {self.log_path}")
        self.port, self.image_port, self.wss_port = (int(g) for g in found.groups())
        self.live_port = int(live.group(1))

    def status(self, key: str) -> int:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
        raise KeyError(key)

    def rss_mb(self) -> float:
        return self.status("VmRSS") / 1024

    def threads(self) -> int:
        return self.status("Threads")

    def tracebacks(self) -> int:
        self.log.flush()
        return self.log_path.read_text(errors="replace").count("Traceback")

    def log_lines(self, pattern: str) -> int:
        return sum(1 for line in self.log_path.read_text(errors="replace").splitlines() if pattern in line)

    def stop(self) -> int:
        self.proc.terminate()
        return self.proc.wait(timeout=60)


def report(server: Server, phase: str, extra: str = "") -> None:
    print(f"  {phase:28s} RSS {server.rss_mb():7.1f} MB  threads {server.threads():3d}  "
          f"tracebacks {server.tracebacks()}  {extra}", flush=True)


def phase_fuzz(server: Server, count: int, seed: int) -> None:
    print(f"1. fuzz: {count} hostile lines (seed {seed})")
    result = fuzz(server.port, lines(seed, count), LOCATIONS)
    report(server, "after fuzz", f"sent {result.sent}, replies {result.replies}, "
           f"witness max gap {result.witness_max_gap * 1000:.0f} ms, dropped {result.dropped_connections or 'none'}")


def phase_churn(server: Server, cycles: int) -> None:
    print(f"2. churn: {cycles} connect/INIT/disconnect cycles")
    first = None
    t0 = time.monotonic()
    for i in range(cycles):
        sock, reader = _spawned(server.port, "P2AT", LOCATIONS[i % len(LOCATIONS)])
        sock.close()
        reader.join(20)
        if i + 1 == 100:
            first = server.rss_mb()
            report(server, "after 100 cycles")
    time.sleep(1.0)
    last = server.rss_mb()
    growth = f"{100 * (last - first) / first:+.1f} % since cycle 100" if first else ""
    report(server, f"after {cycles} cycles", f"{growth}; {cycles / (time.monotonic() - t0):.1f} cycles/s")


class Witness:
    """A client that reads everything and remembers the longest gap between periodic lines."""

    def __init__(self, port: int, location: str) -> None:
        self.sock, self.reader = _spawned(port, "P2AT", location)
        self.reader.keep_times = True

    def max_gap(self) -> float:
        times = list(self.reader.periodic_at)
        return max((b - a for a, b in zip(times, times[1:])), default=float("inf"))

    def close(self) -> None:
        self.sock.close()


def phase_stall(server: Server, seconds: float) -> None:
    print(f"3. stall: a client that never reads, for {seconds:.0f} s, beside a reading witness")
    witness = Witness(server.port, LOCATIONS[0])
    stalled = socket.create_connection(("127.0.0.1", server.port))
    stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    stalled.sendall(f"INIT {{ClassName USARBot.P2AT}} {{Location {LOCATIONS[1]}}}\r\n".encode())
    start = time.monotonic()
    report(server, "stall begins")
    while (left := seconds - (time.monotonic() - start)) > 0:
        time.sleep(min(left, max(5.0, seconds / 10)))
        lines_per_s = witness.reader.lines / (time.monotonic() - start)
        report(server, f"stalled {time.monotonic() - start:5.0f} s",
               f"witness {lines_per_s:.0f} lines/s, max gap {witness.max_gap() * 1000:.0f} ms")
    stalled.close()
    witness.close()


def phase_flood(server: Server, seconds: float) -> None:
    print(f"4. reply flood: commands without reading the replies, up to {seconds:.0f} s")
    witness = Witness(server.port, LOCATIONS[2])  # a fresh spot: robots of the last phase may still be leaving
    sock, reader = _connect(server.port)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    before = server.log_lines("replies unread")
    start, sent, peak = time.monotonic(), 0, server.rss_mb()
    burst = b"GETSTARTPOSES\r\n" * 100
    sock.settimeout(1.0)
    try:
        while time.monotonic() - start < seconds:
            try:
                sock.sendall(burst)
                sent += 100
            except socket.timeout:  # the server is not reading this instant; try again
                continue
            peak = max(peak, server.rss_mb())
    except OSError as exc:
        print(f"  flooder disconnected after {time.monotonic() - start:.1f} s, {sent} lines: {exc}")
    finally:
        sock.close()
    time.sleep(0.5)
    report(server, "after flood", f"peak RSS {peak:.1f} MB; 'replies unread' disconnects logged: "
           f"{server.log_lines('replies unread') - before}; witness max gap {witness.max_gap() * 1000:.0f} ms")
    witness.close()


def measured(server: Server, load: ports.Load, seconds: float, label: str) -> None:
    summary = ports.measure(server.rss_mb, server.threads, seconds, label)
    report(server, f"after {label}", summary)
    print(f"  {'':28s} clients: {load.end() or 'nothing counted'}", flush=True)


def driving_camera_robot(server: Server) -> socket.socket:
    """A P2AT (it carries a camera) driving in circles, so every stream has data."""
    sock, _ = _spawned(server.port, "P2AT", LOCATIONS[3])
    sock.sendall(b"DRIVE {Left 1.0} {Right 0.6}\r\n")
    return sock


def phase_port(server: Server, label: str, flood: float, stall: float, flood_load: Callable[[], ports.Load],
               stall_load: Callable[[], tuple[ports.Load, Callable[[], str]]]) -> None:
    """A flood, then a stall, on one port; ``stall_load`` gives the load and what to say (and close) after it."""
    if flood:
        measured(server, flood_load(), flood, f"{label} flood")
    if stall:
        load, after = stall_load()
        measured(server, load, stall, f"{label} stall")
        print(f"  {'':28s} {after()}")


def closing(held: list[socket.socket], question: str, check: Callable[[], bool]) -> Callable[[], str]:
    """After a stall: ``question`` answered by ``check`` while ``held`` are still open, then they are closed."""
    def after() -> str:
        answer = check()
        ports.close_all(held)
        return f"{question}: {answer}"
    return after


def image_stall(server: Server) -> tuple[ports.Load, Callable[[], str]]:
    load, held = ports.image_stall(server.image_port)
    return load, closing(held, "a fresh image client gets a frame while the idle connections are open",
                         lambda: ports.image_served(server.image_port))


def live_stall(server: Server) -> tuple[ports.Load, Callable[[], str]]:
    load, witness = ports.live_stall(server.live_port)
    return load, lambda: f"witness viewer read {witness()} messages"


def wss_stall(server: Server) -> tuple[ports.Load, Callable[[], str]]:
    load, held = ports.wss_stall(server.wss_port)
    return load, closing(held, "a fresh wireless client is answered during the stall",
                         lambda: ports.wss_answers(server.wss_port))


def phase_image(server: Server, flood: float, stall: float) -> None:
    print(f"5. image port {server.image_port}: request flood {flood:.0f} s, then stall {stall:.0f} s")
    phase_port(server, "image", flood, stall, lambda: ports.image_flood(server.image_port),
               lambda: image_stall(server))


def phase_live(server: Server, flood: float, stall: float) -> None:
    print(f"6. live-view port {server.live_port}: viewer flood {flood:.0f} s, then stall {stall:.0f} s")
    image_reader = ports.image_flood(server.image_port)  # keeps the camera rendering: 5 images/s on /camera/image
    try:
        phase_port(server, "live", flood, stall, lambda: ports.live_flood(server.live_port),
                   lambda: live_stall(server))
    finally:
        image_reader.end()


def phase_wss(server: Server, flood: float, stall: float) -> None:
    print(f"7. wireless port {server.wss_port}: command flood {flood:.0f} s, then stall {stall:.0f} s")
    phase_port(server, "wireless", flood, stall, lambda: ports.wss_flood(server.wss_port),
               lambda: wss_stall(server))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--world", default="empty", help="a world where LOCATIONS are free ground")
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cycles", type=int, default=3000)
    parser.add_argument("--stall", type=float, default=600.0, help="seconds of the stalled reader")
    parser.add_argument("--flood", type=float, default=60.0, help="seconds of the reply flood")
    for port in ("image", "live", "wss"):
        parser.add_argument(f"--{port}-flood", type=float, default=60.0, help=f"seconds of the {port} port's flood")
        parser.add_argument(f"--{port}-stall", type=float, default=600.0, help=f"seconds of the {port} port's stall")
    args = parser.parse_args()

    server = Server(args.world)
    print(f"usarsim serve (pid {server.proc.pid}) on port {server.port}; log {server.log_path}")
    try:
        report(server, "started")
        if args.lines:
            phase_fuzz(server, args.lines, args.seed)
        if args.cycles:
            phase_churn(server, args.cycles)
        if args.stall:
            phase_stall(server, args.stall)
        if args.flood:
            phase_flood(server, args.flood)
        robot = driving_camera_robot(server) if any(
            (args.image_flood, args.image_stall, args.live_flood, args.live_stall)) else None
        if args.image_flood or args.image_stall:
            phase_image(server, args.image_flood, args.image_stall)
        if args.live_flood or args.live_stall:
            phase_live(server, args.live_flood, args.live_stall)
        if robot is not None:
            robot.close()
        if args.wss_flood or args.wss_stall:
            phase_wss(server, args.wss_flood, args.wss_stall)
        report(server, "end")
    finally:
        rc = server.stop()
    print(f"server exit code on SIGTERM: {rc}; tracebacks in its log: {server.tracebacks()}")


if __name__ == "__main__":
    main()
