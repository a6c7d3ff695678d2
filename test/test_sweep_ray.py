"""Sweeps on Ray: a two-node cluster on loopback (trials on both nodes, results as on local workers),
Ray Client and `auto`, the sweep's files shipped with the job, nodes that cannot run trials named in
one line, unreachable or silent addresses given up on within the timeout, a killed Ray driver.

One small cluster (two nodes of one CPU each) serves the module; trials are a fraction of a sim
second, so the cost is mostly Ray's own start-up."""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Iterator

import pytest

from patience import PATIENCE
from sweep_helpers import grid, results, start_gated_sweep, wait_until_gone
from usarsim.config_loading import ConfigError
from usarsim.scale.shipping import localize, stage
from usarsim.scale.sweep import SweepOptions, run_sweep
from usarsim.scale.sweep_file import load_sweep, trials
from usarsim.scale.trial import execute

# Ray turns 127.0.0.1 in an address into the machine's network address (to be reachable from other
# machines) unless told it is a one-machine cluster; these tests stay on loopback. For the nodes and
# sweeps started as processes, and for this process's Ray (read where Ray may already be imported).
LOOPBACK_ONLY = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
os.environ[LOOPBACK_ONLY] = "0"
from ray._private import ray_constants  # noqa: E402 - Ray is in the test extra: a broken install fails, never skips
from ray.cluster_utils import Cluster  # noqa: E402

ray_constants.ENABLE_RAY_CLUSTER = False

ROOM = """\
name: room
description: a wall ahead of the start pose
gps_origin: {lat: 39.1347, lon: -77.2163, alt: 130.0}
floor: {size: [8.0, 8.0], center: [0.0, 0.0]}
start_poses:
  - {tag: Start, xyz: [0.0, 0.0, 0.0], rpy: [0.0, 0.0, 0.0]}
static:
  - {kind: box, name: wall, xyz: [1.5, 0.0, 0.6], size: [0.1, 3.0, 1.2]}
"""
# Fails a trial that a Ray worker imported from the sweep's own folder (not from the shipped copy),
# or that finds no shipped world file beside it.
CONTROLLER = """\
import sys
from pathlib import Path

ORIGINAL = Path({original!r})


def drive(step):
    if step.time == 0.0 and "ray" in sys.modules and sys.modules["ray"].is_initialized():
        here = Path(__file__).resolve().parent
        if here == ORIGINAL or not list(here.glob("worlds/*/room.yaml")):
            raise RuntimeError(f"not run from the shipped files: {{here}}")
    return (2.0, 1.0 + 0.25 * step.seed)
"""
SWEEP = """\
worlds: [worlds/room.yaml, empty]
robots: [P2AT]
seeds: [0, 1]
duration: 0.5
controller: shipped_controller:drive
"""


def _sweep_folder(folder: Path) -> Path:
    """A sweep whose controller and world file exist only in ``folder``."""
    (folder / "worlds").mkdir(parents=True)
    (folder / "worlds" / "room.yaml").write_text(ROOM)
    (folder / "shipped_controller.py").write_text(CONTROLLER.format(original=str(folder.resolve())))
    path = folder / "s.yaml"
    path.write_text(SWEEP)
    return path


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    """A head and a second node on 127.0.0.1, one CPU and a resource of their own each; Ray Client on."""
    client_port = _free_port()
    made = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 1, "resources": {"head_slot": 1}, "node_ip_address": "127.0.0.1", "include_dashboard": False,
        "ray_client_server_port": client_port})
    made.client_address = f"ray://127.0.0.1:{client_port}"  # type: ignore[attr-defined]
    made.add_node(num_cpus=1, resources={"second_slot": 1}, node_ip_address="127.0.0.1")
    try:
        yield made
    finally:
        made.shutdown()


@pytest.fixture(scope="module")
def local_reference(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    folder = tmp_path_factory.mktemp("local")
    return run_sweep(_sweep_folder(folder / "sweep"), SweepOptions(output=folder / "out", workers=1,
                                                                  progress=False)).rows


def test_trials_run_on_both_nodes_with_the_local_results(cluster: Cluster, local_reference, tmp_path: Path) -> None:
    report = run_sweep(_sweep_folder(tmp_path / "sweep"), SweepOptions(output=tmp_path / "out", ray=cluster.address,
                                                                      progress=False))
    assert [row["status"] for row in report.rows] == ["ok"] * 4, [row["error"] for row in report.rows]
    nodes = {cluster.head_node.node_id, *(node.node_id for node in cluster.worker_nodes)}
    assert set(report.ran_on.values()) == nodes  # spread over both nodes
    assert results(report.rows) == results(local_reference)
    for row in report.rows:  # the files came back from the nodes
        assert (tmp_path / "out" / "trials" / row["trial"] / "readings.jsonl").is_file()


@pytest.mark.parametrize("how", ["client", "auto"])
def test_ray_client_and_auto_reach_the_cluster(cluster: Cluster, local_reference, tmp_path: Path,
                                               how: str) -> None:
    address = cluster.client_address if how == "client" else "auto"  # type: ignore[attr-defined]
    report = run_sweep(_sweep_folder(tmp_path / "sweep"), SweepOptions(output=tmp_path / "out", ray=address,
                                                                      progress=False))
    assert results(report.rows) == results(local_reference)


def _shadow_usarsim(folder: Path, init: str) -> Path:
    """A folder holding a package named usarsim that stands in front of the real one on PYTHONPATH."""
    (folder / "usarsim").mkdir(parents=True)
    (folder / "usarsim" / "__init__.py").write_text(init)
    return folder


@pytest.mark.parametrize("init, message", [
    ("raise ModuleNotFoundError(\"No module named 'usarsim'\")", "cannot import usarsim (ModuleNotFoundError"),
    ("", "runs usarsim 0.1.0 (code "),
], ids=["without-usarsim", "other-usarsim"])
def test_a_node_that_cannot_run_trials_as_here_is_named_in_one_line(cluster: Cluster, tmp_path: Path,
                                                                     monkeypatch, init: str, message: str) -> None:
    with monkeypatch.context() as env:  # the node (and its workers) import this usarsim first
        env.setenv("PYTHONPATH", str(_shadow_usarsim(tmp_path / "shadow", init)))
        odd = cluster.add_node(num_cpus=1, resources={"odd_slot": 1}, node_ip_address="127.0.0.1")
    try:
        with pytest.raises(ConfigError) as refused:
            run_sweep(_sweep_folder(tmp_path / "sweep"), SweepOptions(output=tmp_path / "out", ray=cluster.address,
                                                                      progress=False))
        line = str(refused.value)
        assert message in line and "\n" not in line
        assert "pip install 'usarsim[ray]" in line or "install the same usarsim on every node" in line
        assert not list((tmp_path / "out" / "trials").iterdir())  # refused before any trial ran
    finally:
        cluster.remove_node(odd)


def test_staged_files_alone_run_the_trials(tmp_path: Path) -> None:
    """What `stage` packs is all a node needs: the staged trials run from a copy, the originals gone."""
    sweep = _sweep_folder(tmp_path / "sweep")
    grid_trials = trials(load_sweep(sweep))
    staged = stage(grid_trials, tmp_path / "staged")
    shutil.copytree(tmp_path / "staged", tmp_path / "node")
    shutil.rmtree(tmp_path / "sweep")
    shutil.rmtree(tmp_path / "staged")
    cwd = os.getcwd()
    sys.path.insert(0, str(tmp_path / "node"))  # as Ray puts its working_dir on a worker's path
    os.chdir(tmp_path / "node")
    try:
        rows = [execute(localize(t, str(tmp_path / "node")), None).summary for t in staged]
    finally:
        os.chdir(cwd)
        sys.path.remove(str(tmp_path / "node"))
        sys.modules.pop("shipped_controller", None)
    assert [r["status"] for r in rows] == ["ok"] * 4, [r["error"] for r in rows]
    assert [r["world"] for r in rows] == [t.world for t in grid_trials]  # the table names worlds as the sweep did


class _Silent:
    """A TCP port on 127.0.0.1 that accepts connections and never says anything."""

    def __enter__(self) -> int:
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(64)
        self._held: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()
        return self._sock.getsockname()[1]

    def _accept(self) -> None:
        try:
            while True:
                self._held.append(self._sock.accept()[0])
        except OSError:  # closed
            pass

    def __exit__(self, *_exc: object) -> None:
        self._sock.close()
        for conn in self._held:
            conn.close()


def _sweep_cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    sweep = tmp_path / "s.yaml"
    sweep.write_text("worlds: [empty]\nrobots: [P2AT]\nseeds: [0]\nduration: 0.2\ndrive: [1, 1]\n")
    return subprocess.run([sys.executable, "-m", "usarsim.cli", "sweep", str(sweep), "-o", str(tmp_path / "out"),
                           *args], capture_output=True, text=True, timeout=PATIENCE)


@pytest.mark.parametrize("scheme", ["ray://", ""], ids=["client", "cluster"])
def test_a_silent_address_is_given_up_on_at_the_timeout(tmp_path: Path, scheme: str) -> None:
    with _Silent() as port:
        done = _sweep_cli(tmp_path, "--ray", f"{scheme}127.0.0.1:{port}", "--ray-timeout", "3")
    assert done.returncode == 2, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(f"usarsim: error: --ray {scheme}127.0.0.1:{port}: no Ray cluster answered within 3 s")
    assert "--ray-timeout" in last and "Traceback" not in done.stderr


@pytest.mark.parametrize("address, message", [
    ("ray://127.0.0.1:{free}", "nothing listens on 127.0.0.1:{free}"),
    ("127.0.0.1:{free}", "nothing listens on 127.0.0.1:{free}"),
    ("http://127.0.0.1:1", "is not an address"),
    ("ray://", "is not an address"),
    ("ray://127.0.0.1:99999", "out of range"),
])
def test_a_bad_address_ends_with_one_line(tmp_path: Path, address: str, message: str) -> None:
    free = _free_port()
    done = _sweep_cli(tmp_path, "--ray", address.format(free=free))
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("usarsim: error: --ray") and done.stderr.count("\n") == 1
    assert message.format(free=free) in done.stderr


def test_a_killed_ray_driver_leaves_no_process_and_resumes(tmp_path: Path) -> None:
    """SIGKILL of a `--ray local` sweep: its Ray ends with it, and the sweep resumes to the full results."""
    mark = f"{os.getpid()}-ray-driver"
    proc, sweep, out = start_gated_sweep(tmp_path, mark, "--ray", "local", running=False)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=PATIENCE)
    assert wait_until_gone(mark, bound=120.0) == [], "processes of the killed Ray sweep outlived it"
    (tmp_path / "gate").touch()
    resumed = run_sweep(sweep, SweepOptions(output=out, workers=2, progress=False))
    assert resumed.skipped >= 1 and resumed.skipped + resumed.ran == 8
    reference = run_sweep(grid(tmp_path / "again"), SweepOptions(output=tmp_path / "again" / "out", workers=2,
                                                                progress=False))
    assert results(resumed.rows) == results(reference.rows)
