"""10,000 hostile protocol lines against a live server: no line may reach a traceback in its log."""
from __future__ import annotations

import logging

import pytest

from usarsim.protocol.server import ProtocolServer
from usarsim.sim.simulator import Simulator

from .driver import fuzz
from .generator import lines

LINES = 10_000
SEED = 20260112
LOCATIONS = ["2,2,0", "4,2,0", "6,2,0", "8,2,0"]  # SAE ground spots in `empty`


class _Tracebacks(logging.Handler):
    """Collects every log record that carries a traceback or reports an internal error."""

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if (record.exc_info or record.levelno >= logging.ERROR or record.name == "py.warnings"
                or "internal error" in record.getMessage()):
            self.records.append(record)


@pytest.fixture
def tracebacks():
    handler = _Tracebacks()
    root = logging.getLogger()
    root.addHandler(handler)
    logging.captureWarnings(True)  # numeric warnings (overflow, NaN) show values that slipped through
    yield handler
    logging.captureWarnings(False)
    root.removeHandler(handler)


def test_fuzzed_lines_never_reach_a_traceback(tracebacks):
    sim = Simulator("empty", pacing="fast", seed=1)
    try:
        with ProtocolServer(sim, port=0, image_port=None) as server:
            result = fuzz(server.port, lines(SEED, LINES), LOCATIONS)
            assert server.connections == 0 or server.connections <= 6
    finally:
        sim.close()
    problems = [f"{r.levelname} {r.name}: {r.getMessage()}\n{logging.Formatter().formatException(r.exc_info)}"
                if r.exc_info else f"{r.levelname} {r.name}: {r.getMessage()}" for r in tracebacks.records]
    assert not problems, "\n".join(problems[:5])
    assert result.sent == LINES and not result.dropped_connections, result
    assert result.replies > LINES // 2  # the server answered (ERR/RES/GEO/CONF) rather than going quiet
    assert result.witness_lines > 10  # the well-behaved client kept getting its data
