"""A first run that does not trip: bad ports, ports in use, unknown hosts and a closed pipe get one
clear line and a non-zero exit, never a traceback (each case runs the real command)."""
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from ros_domains import fresh_domain_id
from patience import PATIENCE

USARSIM = [sys.executable, "-m", "usarsim.cli"]


def run(*args, timeout=PATIENCE):
    return subprocess.run([*USARSIM, *args], capture_output=True, text=True, timeout=timeout)


def assert_one_error_line(done, *expected, alone=True):
    """The last line names the error; ``alone``: it is the only line (argparse adds its usage)."""
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert "error" in lines[-1] and all(text in lines[-1] for text in expected), done.stderr
    assert len(lines) == 1 or not alone, done.stderr


@pytest.fixture()
def taken_port():
    with socket.create_server(("127.0.0.1", 0)) as busy:
        yield busy.getsockname()[1]


def test_protocol_port_in_use(taken_port):
    done = run("serve", "--world", "empty", "--port", str(taken_port), "--image-port", "-1")
    assert_one_error_line(done, str(taken_port), "address already in use")


def test_image_port_in_use(taken_port):
    done = run("serve", "--world", "empty", "--port", "0", "--image-port", str(taken_port))
    assert_one_error_line(done, f"image server cannot listen on 127.0.0.1:{taken_port}", "in use")


@pytest.mark.parametrize("args, expected", [
    (("--port", "70000"), "--port"),
    (("--image-port", "-5"), "--image-port"),
    (("--image-type", "png"), "--image-type"),
    (("--image-size", "0x10"), "--image-size"),
    (("--image-fps", "0"), "frame rate"),
    (("--jpeg-quality", "101"), "JPEG quality"),
    (("--multiview", "2", "--multiview-columns", "-1"), "WideMode"),
])
def test_bad_serve_options(args, expected):
    assert_one_error_line(run("serve", "--world", "empty", "--port", "0", *args), expected, alone=False)


def test_unknown_host():
    done = run("serve", "--world", "empty", "--host", "no-such-host.invalid", "--port", "0")
    assert_one_error_line(done, "cannot resolve host 'no-such-host.invalid'")


def test_run_into_a_closed_pipe():
    proc = subprocess.Popen([*USARSIM, "run", "--world", "empty", "--duration", "30"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline().startswith("{")  # like `usarsim run ... | head -1`
    proc.stdout.close()
    stderr = proc.stderr.read()
    assert proc.wait(timeout=PATIENCE) == 141
    assert "Traceback" not in stderr
    assert stderr.strip().splitlines()[-1] == "usarsim: output closed by its reader (broken pipe); stopped"


@pytest.mark.skipif(shutil.which("usarsim_node", path=str(Path(sys.executable).parent)) is None,
                    reason="the ROS 2 node is not installed here")
def test_ros_parameter_of_the_wrong_type():
    pytest.importorskip("rclpy")
    node = str(Path(sys.executable).parent / "usarsim_node")
    env = dict(os.environ, ROS_DOMAIN_ID=str(fresh_domain_id()), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
    done = subprocess.run([node, "--ros-args", "-p", "world:=empty", "-p", "physics_rate:=100"],
                          capture_output=True, text=True, timeout=PATIENCE, env=env)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        "usarsim_node: Trying to set parameter 'physics_rate' to '100' of type 'INTEGER', "
        "expecting type 'DOUBLE': physics_rate")


def test_usarsim_node_without_ros_says_how_to_install_it():
    """serve.sh's venv has no ROS: usarsim_node answers with one line, not an import traceback."""
    script = ("import sys; sys.modules['rclpy'] = None\n"  # as if rclpy were not installed
              "from usarsim.ros.entry import main; sys.exit(main([]))")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=PATIENCE)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr and "scripts/bootstrap.sh --ros" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
