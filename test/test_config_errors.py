"""Broken world and robot files, hostile paths and bad command-line arguments: one clear error, never a traceback."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from usarsim.cli import main
from usarsim.config_loading import ConfigError, load_dataclass
from usarsim.sim.catalogue import RobotSpec, robots_dir
from usarsim.sim.world import load_world
from patience import PATIENCE

WORLD = """\
name: test
description: a test world
gps_origin: {lat: 39.0, lon: -77.0}
start_poses:
  - {tag: Start1, xyz: [0.0, 0.0, 0.0]}
"""


def world_file(folder: Path, extra: str = "", name: str = "w.yaml") -> Path:
    path = folder / name
    path.write_text(WORLD + extra)
    return path


@pytest.mark.parametrize("extra, message", [
    ("floor: {size: [-5.0, 10.0]}\n", r"w.yaml: floor.size must be positive"),
    ("floor: {size: [0.0, 10.0]}\n", r"floor.size must be positive"),
    ("obstacles:\n  - {kind: box, xyz: [1, 1, 0], size: [0.2, 0.0, 0.1]}\n", r"obstacle 'box': size and mass"),
    ("obstacles:\n  - {kind: box, xyz: [1, 1, 0], mass: -1}\n", r"size and mass must be positive"),
    ("static:\n  - {kind: box, xyz: [1, 1, 0], size: [1, -1, 1]}\n", r"size must be positive"),
    ("colour: red\n", r"w.yaml:6: unknown key 'colour'"),
    ("source: /etc\n", r"unknown key 'source'"),
    ("description2: !!python/object/apply:os.system [echo hi]\n",
     r"w.yaml:6: YAML tag '!!python/object/apply:os.system' is not allowed"),
    ("lights:\n  - {xyz: !!python/tuple [1, 2, 3]}\n", r"YAML tag '!!python/tuple' is not allowed"),
    ("static:\n  - {kind: mesh, xyz: [0, 0, 0], mesh: ../../../../etc/passwd}\n", r"leads outside the world's folder"),
    ("static:\n  - {kind: mesh, xyz: [0, 0, 0], mesh: /etc/passwd}\n", r"leads outside the world's folder"),
])
def test_broken_world_file_names_file_and_key(tmp_path, extra, message):
    with pytest.raises(ConfigError, match=message):
        load_world(str(world_file(tmp_path, extra)))


def test_binary_and_empty_files(tmp_path):
    binary = tmp_path / "bin.yaml"
    binary.write_bytes(b"name: x\n" + bytes(range(256)))
    with pytest.raises(ConfigError, match=r"bin.yaml:\d+: not a"):
        load_world(str(binary))
    nul = tmp_path / "nul.yaml"
    nul.write_bytes(b"name: x\x00\n")
    with pytest.raises(ConfigError, match=r"nul.yaml:1: not a text file"):
        load_world(str(nul))
    with pytest.raises(ConfigError, match="not found"):
        load_world(str(tmp_path / "missing.yaml"))


def test_mesh_through_a_link_out_of_the_folder_is_refused(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "thing.obj").write_text("v 0 0 0\n")
    world_dir = tmp_path / "world"
    world_dir.mkdir()
    (world_dir / "meshes").symlink_to(outside)
    path = world_file(world_dir, "static:\n  - {kind: mesh, xyz: [0, 0, 0], mesh: meshes/thing.obj}\n")
    with pytest.raises(ConfigError, match="leads outside"):
        load_world(str(path))


def test_extra_asset_folder_is_allowed(tmp_path, monkeypatch):
    assets = tmp_path / "assets"
    assets.mkdir()
    (assets / "thing.obj").write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n")
    world_dir = tmp_path / "world"
    world_dir.mkdir()
    path = world_file(world_dir, f"static:\n  - {{kind: mesh, xyz: [0, 0, 0], mesh: {assets / 'thing.obj'}}}\n")
    with pytest.raises(ConfigError, match="leads outside"):
        load_world(str(path))
    monkeypatch.setenv("USARSIM_ASSET_PATH", str(assets))
    assert load_world(str(path)).static[0].mesh.endswith("thing.obj")


@pytest.mark.parametrize("name", ["../config/robots/P2AT", "../../etc/passwd", "yellow/../red", "", "."])
def test_world_names_cannot_walk_out_of_the_worlds_folder(name):
    with pytest.raises(ConfigError, match="unknown world"):
        load_world(name)


@pytest.mark.parametrize("robot, original, broken, message", [
    ("P2AT", "dimensions: [0.50,", "dimensions: [-0.50,", "each of dimensions must be positive"),
    ("P2AT", "wheel_radius: 0.11", "wheel_radius: -0.11", "wheel_radius must not be negative"),
    ("P2AT", "wheel_radius: 0.11", "wheel_radius: !!python/name:os.system", "YAML tag"),
    ("P2AT", "wheel_radius: 0.11", "wheel_radius: 0.11\n  wheel_radus: 0.1", "unknown key 'wheel_radus'"),
    # effecter entries are checked at load too, like sensors
    ("Talon", "type: Gripper,", "type: Griper,", "effecter 'Gripper': unknown effecter type 'Griper'"),
    ("Talon", "left_finger: talon_left_finger_joint,", "left_fingr: talon_left_finger_joint,",
     "unknown parameter.*left_fingr"),
    ("Talon", "left_finger: talon_left_finger_joint,", "", "left_finger and right_finger joints are required"),
    ("Talon", "right_finger: talon_right_finger_joint}", "right_finger: talon_right_finger_joint, max_angle: wide}",
     "max_angle must be a finite number, got 'wide'"),
    ("Talon", "right_finger: talon_right_finger_joint}", "right_finger: 3}", "right_finger must be a name"),
])
def test_broken_robot_file_names_file_and_key(tmp_path, robot, original, broken, message):
    shipped = (robots_dir() / f"{robot}.yaml").read_text()
    assert original in shipped
    path = tmp_path / f"{robot}.yaml"
    path.write_text(shipped.replace(original, broken))
    with pytest.raises(ConfigError, match=rf"{robot}.yaml:\d+: .*{message}"):
        load_dataclass(RobotSpec, path)


def one_line_error(capsys, argv: list[str]) -> str:
    try:
        rc = main(argv)
    except SystemExit as exc:
        rc = exc.code
    err = capsys.readouterr().err.strip()
    assert rc == 2
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    return err


@pytest.mark.parametrize("argv, message", [
    (["serve", "--port", "70000"], "a port is 0..65535"),
    (["serve", "--port", "-5"], "a port is 0..65535"),
    (["serve", "--port", "9" * 5000], "a port is 0..65535"),
    (["serve", "--max-clients", "0"], "must be at least 1"),
    (["serve", "--init-timeout", "nan"], "positive number"),
    (["run", "--duration", "1e999"], "positive number"),
    (["run", "--seed", "1.5"], "whole number"),
    (["run", "--drive", "1"], "LEFT,RIGHT"),
    (["serve", "--bogus"], "unrecognized arguments"),
    (["serve", "--world", "../config/robots/P2AT", "--port", "0", "--image-port", "-1", "--wss-port", "-1"],
     "unknown world"),
])
def test_command_line_errors_are_one_line(capsys, argv, message):
    assert message in one_line_error(capsys, argv)


def test_port_in_use_and_bogus_host_are_one_line(capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        err = one_line_error(capsys, ["serve", "--world", "empty", "--port", str(port), "--image-port", "-1",
                                      "--wss-port", "-1"])
        assert "usarsim serve: error" in err and str(port) in err
        err = one_line_error(capsys, ["serve", "--world", "empty", "--port", "0", "--image-port", str(port),
                                      "--wss-port", "-1"])
        assert "usarsim serve: error" in err and str(port) in err
    assert "cannot resolve host" in one_line_error(capsys, ["serve", "--world", "empty", "--host",
                                                            "no.such.host.invalid", "--port", "0",
                                                            "--image-port", "-1", "--wss-port", "-1"])


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 0), (signal.SIGKILL, -9)])
def test_run_output_keeps_whole_lines_when_stopped(tmp_path, sig, code):
    out = tmp_path / "run.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "usarsim.cli", "run", "--world", "empty", "--duration", "600",
                             "--pacing", "realtime", "--output", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + PATIENCE
    while time.monotonic() < deadline and not (out.exists() and out.stat().st_size > 2000):
        time.sleep(0.05)
    os.kill(proc.pid, sig)
    assert proc.wait(timeout=PATIENCE) == code
    data = out.read_bytes()
    assert data.endswith(b"\n") and len(data) > 2000  # line-buffered: only whole lines reach the file
    import json
    assert all(json.loads(line) for line in data.splitlines())
