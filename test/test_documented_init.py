"""Every INIT line the README, docs/, the examples and the console's /help teach spawns a robot.

A newcomer copies these lines first; one the server refuses is the first thing they meet. Lines
with placeholders (``{Location x,y,z}``, ``{Start tag}``) are forms, not examples, and are skipped;
a line whose numbers are Unreal units (beyond 100, no arena is that large in metres) is sent to a
``--units unreal`` server, as the text around it says.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from protocol_client import Client, wait_removed
from usarsim.console import HELP
from usarsim.protocol.server import ProtocolServer
from usarsim.sim.simulator import Simulator

ROOT = Path(__file__).resolve().parent.parent
INIT_LINE = re.compile(r"INIT((?:\s\{[^{}]*\})+)")
SEGMENT = re.compile(r"\{([^{}]*)\}")
PLACEHOLDERS = {"x,y,z", "tag", "r,p,y"}


def taught_sources() -> dict[str, str]:
    """name -> text of every place that teaches a newcomer an INIT line."""
    files = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "examples").glob("*.py"))]
    sources = {str(path.relative_to(ROOT)): path.read_text(encoding="utf-8") for path in files}
    sources["usarsim console /help"] = HELP
    return sources


def is_example(line: str) -> bool:
    """A complete line: every segment has a value and none is a placeholder."""
    for segment in SEGMENT.findall(line):
        name, _, value = segment.strip().partition(" ")
        if not value.strip() or value.strip() in PLACEHOLDERS:
            return False
    return True


def in_unreal_units(line: str) -> bool:
    numbers = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", " ".join(SEGMENT.findall(line)))]
    return any(abs(v) > 100 for v in numbers)


def for_the_wireless_server(line: str) -> bool:
    """The UDK wireless server's own INIT (``INIT {Robot r} {Port p}``), not the simulator's."""
    return SEGMENT.findall(line)[0].startswith("Robot ")


def taught_lines() -> list[tuple[str, str]]:
    found = []
    for source, text in taught_sources().items():
        for match in INIT_LINE.finditer(text):
            line = "INIT" + match.group(1)
            if is_example(line) and not for_the_wireless_server(line):
                found.append((source, line))
    return found


def test_the_sources_teach_init_lines_and_the_console_help_one_that_works():
    lines = taught_lines()
    sources = {source for source, _ in lines}
    assert {"README.md", "docs/protocol.md", "examples/image_client.py", "usarsim console /help"} <= sources
    assert not is_example("INIT {ClassName USARBot.ComStation} {Location x,y,z}")
    assert not is_example("INIT {Location}")


@pytest.fixture(scope="module")
def servers():
    sims = {units: Simulator("yellow", pacing="realtime") for units in ("si", "unreal")}
    started = {units: ProtocolServer(sim, port=0, image_port=None, units=units) for units, sim in sims.items()}
    for server in started.values():
        server.start()
    yield {units: (started[units], sims[units]) for units in sims}
    for units, server in started.items():
        server.stop()
        sims[units].close()


@pytest.mark.parametrize("source,line", taught_lines())
def test_every_taught_init_line_spawns_a_robot(servers, source, line):
    server, sim = servers["unreal" if in_unreal_units(line) else "si"]
    client = Client(server.port)
    try:
        client.send(line + "\r\n")
        first = client.wait(lambda text: text.startswith(("STA ", "ERR ")))
        assert first.startswith("STA "), f"{source} teaches {line!r}; the server answers {first}"
    finally:
        client.close()
        for name in list(sim.robots):  # the next line may use the same name or start pose
            wait_removed(sim, name)
