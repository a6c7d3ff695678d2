"""docs/tutorial.md and docs/python-api.md as a newcomer follows them: each command parses and each
program runs as written against a real server or simulator (the ROS program: test/ros/test_tutorial_ros.py)."""
from __future__ import annotations

import re
import subprocess
import sys

import pytest

from doc_blocks import DOCS, code_blocks, commands, program
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


NEWCOMER_PAGES = ("tutorial.md", "python-api.md", "troubleshooting.md")


def heading_anchors(text: str) -> set[str]:
    """The anchors a Markdown renderer gives a page's headings: lower case, punctuation dropped, blanks to '-'."""
    headings = re.findall(r"^#+ (.+)$", re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL),
                          flags=re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


@pytest.mark.parametrize("page", NEWCOMER_PAGES)
def test_the_pages_links_name_headings_that_exist(page):
    text = (DOCS / page).read_text(encoding="utf-8")
    for target, anchor in re.findall(r"\]\(([\w./-]*\.md|)#([\w-]+)\)", text):
        linked = (DOCS / target).resolve() if target else DOCS / page
        assert anchor in heading_anchors(linked.read_text(encoding="utf-8")), f"{page}: {target}#{anchor}"


def test_the_readme_links_the_newcomer_pages():
    readme = (DOCS.parent / "README.md").read_text(encoding="utf-8")
    for page in NEWCOMER_PAGES:
        assert f"](docs/{page})" in readme, page


def test_the_readme_runs_commands_one_way_and_says_what_replaces_ros2():
    readme = (DOCS.parent / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^ *```sh\n(.*?)^ *```", readme, flags=re.MULTILINE | re.DOTALL)
    lines = [line.strip() for block in blocks for line in block.splitlines()]
    assert "source .venv/bin/activate" in lines  # explained once, then every command is the bare one
    assert not [line for line in lines if line.startswith(".venv/bin/")], "activate once, then bare commands"
    assert "no `ros2` command" in readme and "docs/troubleshooting.md#no-ros2-command" in readme
