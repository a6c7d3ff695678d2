"""Benchmark: the wireless model's link updates and the WSS relay.

1. Link updates per second for N radios (default 8, 16 and 32) at seeded random places in
   an arena (default ``orange``): one update casts the N (N - 1) / 2 segments both ways,
   asking for every hit, and merges them into walls. Compared with raw PyBullet casting
   the same rays the same way (``rayTestBatch`` with ``reportHitNumber`` until no ray
   hits, same world) in the same run, and with the share of a real-time second one update
   costs at the default 1 Hz (target: 16 robots under 5 %).
2. The Wireless Communication Server on loopback: two robot clients, one link; messages
   relayed per second in a burst, and one-way latency p50/p99 of paced 64-byte messages.

    .venv/bin/python bench/wireless.py [--world orange] [--radios 8,16,32] [--messages 20000]
"""
from __future__ import annotations

import argparse
import socket
import struct
import threading
import time

import numpy as np
import pybullet as p

from usarsim.protocol.wss import WirelessServer
from usarsim.protocol.wss_commands import frame_send
from usarsim.sim.quiet import quiet_stdout
from usarsim.sim.raycast import MAX_BATCH, threads_for
from usarsim.sim.simulator import Simulator
from usarsim.sim.wireless.walls import MAX_HITS
from usarsim.sim.world import build_world, load_world

RADIO_HEIGHT = 0.25  # m: a P2AT's chassis centre


def radio_positions(sim: Simulator, n: int, seed: int = 1) -> dict[str, tuple[float, float, float]]:
    """``n`` seeded places inside the arena's footprint (from its static geometry, not hard-coded)."""
    boxes = np.array([p.getAABB(b, physicsClientId=sim.client) for b in sim.world.static_ids])
    lo, hi = boxes[:, 0, :2].min(axis=0), boxes[:, 1, :2].max(axis=0)
    xy = np.random.default_rng(seed).uniform(lo + 0.3, hi - 0.3, size=(n, 2))
    return {f"R{i}": (float(x), float(y), RADIO_HEIGHT) for i, (x, y) in enumerate(xy)}


def time_it(fn, repeat: int) -> float:
    """Best of ``repeat`` wall-clock runs of ``fn`` (s): the machine is shared."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def raw_all_hits(client: int, froms: np.ndarray, tos: np.ndarray) -> None:
    """The same rays in plain PyBullet: every hit index until none hits."""
    active = np.arange(len(froms))
    for k in range(MAX_HITS):
        if not len(active):
            return
        hit = []
        for s in range(0, len(active), MAX_BATCH):
            idx = active[s:s + MAX_BATCH]
            results = p.rayTestBatch(froms[idx].tolist(), tos[idx].tolist(), numThreads=threads_for(len(idx)),
                                     reportHitNumber=k, physicsClientId=client)
            hit += [i for i, r in zip(idx.tolist(), results) if r[0] >= 0]
        active = np.array(hit, dtype=int)


def bench_links(world: str, counts: list[int], repeat: int) -> None:
    with quiet_stdout():
        raw = p.connect(p.DIRECT)
    build_world(raw, load_world(world))
    print(f"link updates in '{world}' (best of {repeat}; machine shared, so compare the ratios)")
    print(f"{'radios':>6} {'pairs':>6} {'update ms':>10} {'updates/s':>10} {'raw ms':>8} {'ratio':>6} {'% of 1 s':>9}")
    with Simulator(world) as sim:
        for n in counts:
            radios = radio_positions(sim, n)
            pos = np.array(list(radios.values()))
            iu, ju = np.triu_indices(n, k=1)
            froms, tos = np.vstack([pos[iu], pos[ju]]), np.vstack([pos[ju], pos[iu]])
            ours = time_it(lambda radios=radios: sim.wireless.update(0.0, radios), repeat)
            plain = time_it(lambda froms=froms, tos=tos: raw_all_hits(raw, froms, tos), repeat)
            print(f"{n:>6} {len(iu):>6} {ours * 1e3:>10.2f} {1 / ours:>10.0f} {plain * 1e3:>8.2f} "
                  f"{ours / plain:>6.2f} {ours * 100:>8.2f}%")
    p.disconnect(raw)


def bench_relay(messages: int, pings: int) -> None:
    with Simulator("empty") as sim:
        sim.add_station("A", (0.0, 0.0, 0.0))
        sim.add_station("B", (5.0, 0.0, 0.0))
        sim.step(1)
        wss = WirelessServer(sim, port=0)
        wss.start()
        try:
            ends = {}
            for name in ("A", "B"):
                control = socket.create_connection(("127.0.0.1", wss.port))
                listener = socket.create_server(("127.0.0.1", 0))
                ends[name] = (control, listener)
                control.sendall(f"REGISTER {name} 127.0.0.1;LISTEN {name} {listener.getsockname()[1]};".encode())
                replies = b""
                while replies.count(b";") < 2 or not replies.endswith(b"\n"):
                    replies += control.recv(64)
                assert replies == b"OK;\r\nOK;\r\n", replies
            a_ctl, a_listen = ends["A"]
            b_port = ends["B"][1].getsockname()[1]
            a_ctl.sendall(f"OPEN B {b_port} A {a_listen.getsockname()[1]};".encode())
            a_link, _ = a_listen.accept()
            b_link, _ = ends["B"][1].accept()
            while b"OK;" not in a_ctl.recv(64):
                pass
            payload = b"x" * 56
            size = 8 + len(payload)

            def read(count: int, stamps: list[float] | None) -> None:
                buf = b""
                for _ in range(count):
                    while len(buf) < size:
                        buf += b_link.recv(65536)
                    if stamps is not None:
                        stamps.append(time.perf_counter() - struct.unpack("d", buf[:8])[0])
                    buf = buf[size:]

            reader = threading.Thread(target=read, args=(messages, None))
            t0 = time.perf_counter()
            reader.start()
            frames = b"".join(frame_send(struct.pack("d", 0.0) + payload) for _ in range(messages))
            a_link.sendall(frames)
            reader.join()
            burst = time.perf_counter() - t0
            latencies: list[float] = []
            for _ in range(pings):  # one at a time: latency without queueing
                a_link.sendall(frame_send(struct.pack("d", time.perf_counter()) + payload))
                read(1, latencies)
            ms = np.array(latencies) * 1e3
            print(f"\nWSS relay on loopback: {messages / burst:,.0f} messages/s ({size} B each, burst of {messages}); "
                  f"latency p50 {np.percentile(ms, 50):.3f} ms, p99 {np.percentile(ms, 99):.3f} ms ({pings} paced); "
                  f"dropped {wss.stats.dropped_full + wss.stats.dropped_signal}")
            for sock in (a_link, b_link, *[s for pair in ends.values() for s in pair]):
                sock.close()
        finally:
            wss.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--world", default="orange")
    parser.add_argument("--radios", default="8,16,32")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--messages", type=int, default=20000)
    parser.add_argument("--pings", type=int, default=2000)
    args = parser.parse_args()
    bench_links(args.world, [int(n) for n in args.radios.split(",")], args.repeat)
    bench_relay(args.messages, args.pings)


if __name__ == "__main__":
    main()
