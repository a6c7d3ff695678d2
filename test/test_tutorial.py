"""docs/tutorial.md and docs/python-api.md as a newcomer follows them: each command parses and each
program runs as written against a real server or simulator (the ROS program: test/ros/test_tutorial_ros.py)."""
from __future__ import annotations

import subprocess
import sys

import pytest

from doc_blocks import code_blocks, commands, program
from usarsim.cli import build_parser
from usarsim.protocol.server import ProtocolServer
from usarsim.sim.simulator import Simulator

PAGE = "tutorial.md"
WAIT = 300  # wall seconds a program may take on a loaded machine; it stops by itself long before


def run_program(source: str, cwd) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, timeout=WAIT, cwd=cwd)
    assert done.returncode == 0, done.stderr
    return done


def assert_drove_and_stopped(output: str) -> None:
    lines = output.strip().splitlines()
    steps = [line for line in lines if "nearest ahead" in line]
    assert len(steps) > 5, output
    assert lines[-1].startswith("stopped"), output
    last = float(steps[-1].split("nearest ahead")[1].split()[0])
    elapsed = float(steps[-1].split("=")[1].split()[0])
    assert last < 1.0 or elapsed > 15.0, output  # the controller's own stop rule


def test_every_usarsim_command_of_the_page_parses():
    found = commands(PAGE, "usarsim")
    assert found, "the tutorial starts a server with usarsim"
    for argv in found:
        build_parser().parse_args(argv[1:])


@pytest.fixture(scope="module")
def server():
    sim = Simulator("yellow", pacing="realtime")  # what `usarsim serve --world yellow` runs
    with ProtocolServer(sim, port=0, image_port=None) as srv:
        yield srv
    sim.close()


def test_the_text_protocol_controller_drives_until_the_wall(server, tmp_path):
    source = program(PAGE, "first_controller.py")
    address = 'HOST, PORT = "127.0.0.1", 3000'
    assert address in source  # the only change: the port this test's server listens on
    done = run_program(source.replace(address, f'HOST, PORT = "127.0.0.1", {server.port}'), tmp_path)
    assert_drove_and_stopped(done.stdout)


def test_the_python_api_controller_runs_and_repeats_itself(tmp_path):
    source = program(PAGE, "first_controller_api.py")
    first = run_program(source, tmp_path).stdout
    assert_drove_and_stopped(first)
    assert run_program(source, tmp_path).stdout == first  # "Run it twice: the lines are the same"


@pytest.mark.parametrize("index", range(len(code_blocks("python-api.md", "python"))))
def test_every_python_api_example_runs(index, tmp_path):
    done = run_program(code_blocks("python-api.md", "python")[index], tmp_path)
    assert done.stdout.strip(), "each example prints what it found"
