"""Lockstep serving is reproducible: the same client script gives the same bytes on every run.

A command the server has received before a tick is applied in that tick, however the client's
lines were split into TCP segments; a DRIVE sent right after INIT once landed a tick late now
and then (about one run in forty), so the runs below would differ from the first one.
"""
from __future__ import annotations

import sys

import pytest

from protocol_client import Client
from usarsim.protocol.server import ProtocolServer
from usarsim.sim.simulator import Simulator

RUNS = 30
LINES = 24  # a few ticks of STA and SEN lines


@pytest.fixture
def eager_thread_switches():
    """Switch threads every 10 us instead of 5 ms: the lockstep thread then gets between any two
    steps of the event loop, as it does on a loaded machine (a loss of 4-6 runs in 100 before)."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(before)


def lockstep_script(split: bool) -> bytes:
    """Everything a short script's client receives from a fresh lockstep server, after the greeting."""
    with Simulator("empty", pacing="lockstep", seed=5) as sim:
        with ProtocolServer(sim, port=0, image_port=None) as server:
            client = Client(server.port)
            client.line()  # NFO greeting
            init = "INIT {ClassName USARBot.P2AT} {Name R} {Location 0,0,0}\r\n"
            drive = "DRIVE {Left 2.0} {Right 1.0}\r\n"
            if split:  # two segments: the DRIVE may reach the server while the robot is being built
                client.send(init)
                client.send(drive)
            else:
                client.send(init + drive)
            got = [client.line() for _ in range(LINES)]
            client.close()
    return "\n".join(got).encode("ascii")


@pytest.mark.parametrize("split", [True, False], ids=["two-sends", "one-send"])
def test_same_script_same_bytes_every_run(split, eager_thread_switches):
    first = lockstep_script(split)
    assert b"STA " in first and b"SEN " in first
    differing = [i for i in range(1, RUNS) if lockstep_script(split) != first]
    assert not differing, f"runs {differing} of {RUNS} differ from the first"
