"""Benchmark: the USARSim text-protocol front door.

Prints, in one run:

1. grammar throughput: client lines parsed into typed commands per second, and
   SEN lines formatted from core readings per second (a 181-beam laser scan);
2. command latency: ticks from a DRIVE line reaching the server to the drive
   motors taking it (lockstep, so exact; target <= 1), and the same in wall
   milliseconds under real-time pacing;
3. a fleet of N clients (default 16, the original MaxConnections), each with its
   own P2AT (laser, 16 sonars, odometry, INS, GPS, ground truth) streaming every
   line to a client process: the real-time factor of the full stack (simulator +
   protocol server + sockets) and the ratio against raw PyBullet doing the same
   physics and ray queries in the same run (``bench/fleet.py``'s ``run_raw``), with
   the simulator alone (no server, no sockets) in between to show where time goes.

    .venv/bin/python bench/protocol.py [--clients 16] [--seconds 10] [--repeat 2] [--world yellow]
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import selectors
import socket
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fleet import PHYSICS_RATE, positions, run_raw, run_simulator  # noqa: E402

from usarsim.protocol import frames  # noqa: E402
from usarsim.protocol import grammar as g  # noqa: E402
from usarsim.protocol import messages as pm  # noqa: E402
from usarsim.protocol.server import ProtocolServer  # noqa: E402
from usarsim.sim import readings as rd  # noqa: E402
from usarsim.sim.catalogue import load_robot  # noqa: E402
from usarsim.sim.simulator import Simulator  # noqa: E402

CLIENT_LINES = [
    b"DRIVE {Left 1.5} {Right -0.5}\r\n",
    b"DRIVE {Left 2.0} {Right 2.0} {Normalized false} {Light true}\r\n",
    b"INIT {ClassName USARBot.P2AT} {Name R1} {Location 4.5,-1.9,0.0} {Rotation 0,0,1.57}\r\n",
    b"SET {Type INS} {Name INS} {Opcode POSE} {Params 1.0,2.0,0.0,0.0,0.0,0.5}\r\n",
    b"MISPKG {Name CameraPanTilt} {Link 1} {Value 1.5} {Link 2} {Value 0}\r\n",
    b"MULTIDRIVE {FRFlipper 1.57} {FLFlipper 1.57}\r\n",
    b"GETGEO {Type Sonar}\r\n",
    b"SET {Type Camera} {Name Camera} {FOV 1}\r\n",
]


# --------------------------------------------------------------------------- 1. grammar

def bench_parsing(seconds: float = 1.0) -> tuple[float, float]:
    """(client lines parsed per second, laser SEN lines formatted per second)."""
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for line in CLIENT_LINES:
            g.parse_command(line)
        n += len(CLIENT_LINES)
    parsed = n / (time.perf_counter() - start)
    scan = rd.RangeScan(time=1.0, robot="R1", sensor="Scanner", frame="laser", ranges=tuple(2.0 + i * 0.01 for i in range(181)),
                        angle_min=-1.5708, angle_increment=0.0174533, range_min=0.0, range_max=20.0, scan_time=0.2)
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(50):
            pm.format_reading(scan)
        n += 50
    return parsed, n / (time.perf_counter() - start)


# --------------------------------------------------------------------------- 2. latency

def _connect_and_spawn(port: int, name: str, location: tuple[float, float, float]) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    x, y, z = frames.flip_vector(location)
    sock.sendall(f"INIT {{ClassName USARBot.P2AT}} {{Name {name}}} {{Location {x:.3f},{y:.3f},{z:.3f}}}\r\n".encode())
    return sock


def _wait(cond, timeout: float = 10.0, poll: float = 0.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise TimeoutError("benchmark condition not met")
        time.sleep(poll)


def bench_latency_lockstep(world: str, trials: int = 50) -> list[int]:
    """Ticks from a DRIVE reaching the simulator's queue to the drive taking it, stepping by hand."""
    sim = Simulator(world, pacing="lockstep", seed=1)
    server = ProtocolServer(sim, port=0, image_port=None, run_simulator=False)
    server.start()
    sock = _connect_and_spawn(server.port, "Lat", positions(world, ["P2AT"])[0])
    try:
        _wait(lambda: "Lat" in sim.robots, poll=0.001)
        robot = sim.robots["Lat"]
        delays = []
        for k in range(trials):
            speed = 0.5 + 0.01 * k
            sock.sendall(f"DRIVE {{Left {speed:.2f}}} {{Right {speed:.2f}}}\r\n".encode())
            _wait(lambda: len(sim._queue) > 0, poll=0.0001)  # the server has parsed and submitted it
            ticks = 0
            while abs(robot.drive.command[0] - speed) > 1e-9 and ticks < 100:
                sim.step(1)
                ticks += 1
            delays.append(ticks)
        return delays
    finally:
        sock.close()
        server.stop()
        sim.close()


def bench_latency_realtime(world: str, trials: int = 30) -> tuple[list[float], list[int]]:
    """(wall ms, ticks) from sending a DRIVE to the drive taking it, real-time pacing."""
    sim = Simulator(world, pacing="realtime", seed=1)
    server = ProtocolServer(sim, port=0, image_port=None)
    server.start()
    sock = _connect_and_spawn(server.port, "Lat", positions(world, ["P2AT"])[0])
    reader = _Drain([sock])
    try:
        _wait(lambda: "Lat" in sim.robots, poll=0.001)
        robot = sim.robots["Lat"]
        walls, ticks = [], []
        for k in range(trials):
            speed = 0.5 + 0.01 * k
            t0, tick0 = time.perf_counter(), sim.ticks
            sock.sendall(f"DRIVE {{Left {speed:.2f}}} {{Right {speed:.2f}}}\r\n".encode())
            _wait(lambda speed=speed: abs(robot.drive.command[0] - speed) < 1e-9, poll=0.0001)
            walls.append((time.perf_counter() - t0) * 1000.0)
            ticks.append(sim.ticks - tick0)
            reader.drain(0.02)
        return walls, ticks
    finally:
        sock.close()
        server.stop()
        sim.close()


class _Drain:
    """Reads and discards whatever the server sends (a well-behaved client)."""

    def __init__(self, socks: list[socket.socket]) -> None:
        self.sel = selectors.DefaultSelector()
        for s in socks:
            s.setblocking(False)
            self.sel.register(s, selectors.EVENT_READ)
        self.lines = 0
        self.bytes = 0

    def drain(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            for key, _ in self.sel.select(left):
                try:
                    data = key.fileobj.recv(1 << 20)  # type: ignore[union-attr]
                except BlockingIOError:
                    continue
                self.bytes += len(data)
                self.lines += data.count(b"\n")


# --------------------------------------------------------------------------- 3. fleet of clients

def _fleet_clients(port: int, world: str, n: int, seconds: float, out: "mp.Queue") -> None:
    """Client process: n connections, one P2AT each, a DRIVE each, then read everything."""
    socks = [_connect_and_spawn(port, f"C{i}", xyz) for i, xyz in enumerate(positions(world, ["P2AT"] * n))]
    for s in socks:
        s.sendall(b"DRIVE {Left 2.0} {Right 1.6}\r\n")
    drain = _Drain(socks)
    drain.drain(seconds)
    out.put((drain.lines, drain.bytes))
    for s in socks:
        s.close()


def bench_fleet(world: str, clients: int, seconds: float) -> tuple[float, float, int, int, int]:
    """(physics steps per wall second and per CPU second of the server process, ticks run, lines received,
    bytes received) of the full stack with ``clients`` robots. The CPU time is every thread of this process
    (physics, protocol loop, ray workers); the client process's own reading is not counted."""
    sim = Simulator(world, pacing="fast", seed=1, physics_rate=PHYSICS_RATE)
    server = ProtocolServer(sim, port=0, image_port=None, max_connections=max(clients, 16))
    server.start()
    out: mp.Queue = mp.get_context("fork").Queue()
    proc = mp.get_context("fork").Process(target=_fleet_clients, args=(server.port, world, clients, seconds + 3.0, out))
    proc.start()
    try:
        _wait(lambda: len(sim.robots) == clients, timeout=60, poll=0.01)
        time.sleep(1.0)  # let the spawns settle
        t0, cpu0, tick0 = time.perf_counter(), time.process_time(), sim.ticks
        time.sleep(seconds)
        ticks = sim.ticks - tick0
        rate, cpu_rate = ticks / (time.perf_counter() - t0), ticks / (time.process_time() - cpu0)
        lines, nbytes = out.get(timeout=30)
    finally:
        proc.join(timeout=10)
        server.stop()
        sim.close()
    return rate, cpu_rate, ticks, lines, nbytes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--world", default="yellow")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=10.0, help="wall seconds of the fleet run")
    parser.add_argument("--repeat", type=int, default=2, help="interleaved runs of full stack, raw and simulator")
    args = parser.parse_args()

    parsed, formatted = bench_parsing()
    print(f"grammar: {parsed:10.0f} client lines parsed/s   {formatted:8.0f} laser SEN lines formatted/s")

    delays = bench_latency_lockstep(args.world)
    print(f"DRIVE arrival -> effect (lockstep): {statistics.mean(delays):.2f} ticks mean, max {max(delays)} "
          f"(target <= 1; {len(delays)} trials)")
    walls, ticks = bench_latency_realtime(args.world)
    print(f"DRIVE send -> effect (realtime):    {statistics.median(walls):.2f} ms median, "
          f"{max(walls):.2f} ms max; {statistics.mean(ticks):.2f} ticks mean, max {max(ticks)} "
          f"(tick = {1000.0 / PHYSICS_RATE:.1f} ms)")

    specs = [load_robot("P2AT")] * args.clients
    full, raw, core = [], [], []
    for _ in range(args.repeat):  # interleaved so all three see the same machine load
        *rates, ticks, lines, nbytes = bench_fleet(args.world, args.clients, args.seconds)
        full.append(tuple(rates))
        raw.append(run_raw(args.world, specs, ticks))
        core.append(run_simulator(args.world, specs, ticks))
    sim_seconds = ticks / PHYSICS_RATE
    print(f"fleet: {args.clients} clients x P2AT in {args.world} (laser 5 Hz, 16 sonars, odometry, INS, GPS, ground truth), "
          f"best of {args.repeat}")
    print(f"  to the clients: {lines / sim_seconds:.0f} lines/sim s, {nbytes / 1e6 / sim_seconds:.2f} MB/sim s")
    # CPU-time rates are what one core delivers (the server process's threads, not the client process);
    # wall-clock rates also show load from other processes.
    for label, k in (("wall-clock", 0), ("CPU time", 1)):
        rate, core_rate, raw_rate = (max(r[k] for r in runs) for runs in (full, core, raw))
        for name, value in (("full stack (fast pacing):", rate), ("simulator alone:", core_rate),
                            ("raw PyBullet, same work:", raw_rate)):
            print(f"  {label:10s} {name:25s} {value:7.0f} steps/s  real-time factor {value / PHYSICS_RATE:5.2f}x")
        print(f"  {label:10s} ratio full stack / raw:   {rate / raw_rate:.2f}   "
              f"(simulator alone / raw: {core_rate / raw_rate:.2f}; "
              f"the protocol server's share, full stack / simulator alone: {rate / core_rate:.2f})")
    print("  (all three share this machine; with other load on it compare the ratios, not the rates)")


if __name__ == "__main__":
    main()
