"""Reaching a Ray cluster for a sweep: in bounded time, or with one line saying what to do.

Ray itself retries an unreachable or silent address for minutes, printing only warnings. Here the
whole connection (a TCP check of the address, ``ray.init`` in a thread that is given up on, and a
probe task on every node) has one deadline, ``--ray-timeout`` (default 30 s). The probe checks that
each node can import usarsim and runs the same usarsim code, Python and Ray as this machine: a
node that differs would give other results or fail every trial.
"""
from __future__ import annotations

import contextlib
import logging
import socket
import threading
import time
from typing import Any, Callable, Iterator
from urllib.parse import urlsplit

from usarsim.config_loading import ConfigError

DEFAULT_TIMEOUT = 30.0  # s: connect and check every node within this
CLIENT_PORT = 10001  # Ray Client's default port (ray://HEAD)
GCS_PORT = 6379  # a cluster address's default port (HEAD)
INSTALL = "pip install 'usarsim[ray]'"


def parse_address(address: str) -> tuple[str, int] | None:
    """(host, port) to check before connecting, None for 'local' and 'auto'; ConfigError if malformed."""
    if address in ("local", "auto"):
        return None
    client = address.startswith("ray://")
    try:
        parts = urlsplit(address if client else f"tcp://{address}")
        host, port = parts.hostname, parts.port
    except ValueError as exc:
        raise ConfigError(f"--ray {address!r}: {exc}; give ray://HOST:PORT, HOST:PORT, auto or local") from None
    if not host or (parts.path not in ("", "/")) or (not client and "://" in address):
        raise ConfigError(f"--ray {address!r} is not an address: give ray://HOST:PORT (Ray Client), HOST:PORT "
                          "(a cluster this machine is part of), auto or local")
    return host, port or (CLIENT_PORT if client else GCS_PORT)


@contextlib.contextmanager
def connected(address: str, timeout: float = DEFAULT_TIMEOUT,
              runtime_env: dict[str, Any] | None = None) -> Iterator[None]:
    """Within: Ray connected to ``address`` and every node checked; disconnected after."""
    import ray

    deadline = time.monotonic() + timeout
    endpoint = parse_address(address)
    if endpoint is not None:
        _check_reachable(address, *endpoint, timeout)
    if ray.is_initialized():  # the caller connected already (and keeps the connection)
        if runtime_env:  # a local working_dir can only be given when a job starts
            raise ConfigError("Ray is already initialized in this process, so the sweep's files cannot travel "
                              "with its job; call ray.shutdown() before run_sweep, or let it connect")
        _check_nodes(address, deadline, timeout)
        yield
        return
    _init_within(ray, address, deadline, timeout, runtime_env)
    if address == "local":  # starting a local Ray is not bounded: the checks get their time after it
        deadline = time.monotonic() + timeout
    try:
        _check_nodes(address, deadline, timeout)
        yield
    finally:
        ray.shutdown()


def _check_reachable(address: str, host: str, port: int, timeout: float) -> None:
    try:
        with socket.create_connection((host, port), timeout=min(timeout, 10.0)):
            pass
    except socket.gaierror:
        raise ConfigError(f"--ray {address}: unknown host {host!r}; check the head node's name") from None
    except ConnectionRefusedError:
        hint = (f"Ray Client listens on {CLIENT_PORT} by default" if address.startswith("ray://")
                else f"the head listens on {GCS_PORT} by default; from outside the cluster use ray://HEAD:{CLIENT_PORT}")
        raise ConfigError(f"--ray {address}: nothing listens on {host}:{port}; start the head (ray start --head) "
                          f"or fix the address ({hint})") from None
    except OSError as exc:  # timed out, no route
        raise ConfigError(f"--ray {address}: cannot reach {host}:{port} ({exc or 'timed out'}); check the address "
                          "and that no firewall is in the way") from None


def _init_within(ray: Any, address: str, deadline: float, timeout: float, runtime_env: dict[str, Any] | None) -> None:
    """ray.init in a thread, given up on at the deadline (ray.init itself cannot be interrupted)."""
    outcome: list[BaseException | None] = []

    def init() -> None:
        try:
            ray.init(address=None if address == "local" else address, include_dashboard=False,
                     log_to_driver=False, logging_level=logging.ERROR, runtime_env=runtime_env)
            outcome.append(None)
        except BaseException as exc:  # noqa: BLE001 - reported by the waiting thread
            outcome.append(exc)

    if address == "local":
        # in this thread: the local Ray's processes end when the thread that started them ends
        # (Ray has the kernel kill them with it), and starting one is not waiting on anybody
        init()
    else:
        thread = threading.Thread(target=init, daemon=True, name="ray-connect")
        thread.start()
        thread.join(max(0.0, deadline - time.monotonic()))
    if not outcome:
        raise ConfigError(f"--ray {address}: no Ray cluster answered within {timeout:g} s; check the address "
                          "(ray://HEAD:10001 from outside, HEAD:6379 or auto on a node) and that the head is "
                          "running (ray status on the head), or wait longer with --ray-timeout")
    error = outcome[0]
    if error is not None:
        first_line = (str(error).strip().splitlines() or [type(error).__name__])[0]
        hint = ("start one with ray start --head, or use --ray local" if address == "auto"
                else "the same Ray and Python versions are needed on this machine and the cluster" if
                "version" in first_line.lower() else "check the address and the head node")
        raise ConfigError(f"--ray {address}: cannot connect: {first_line} ({hint})")


def _check_nodes(address: str, deadline: float, timeout: float) -> None:
    """Each alive node with CPUs runs a probe task; any that cannot run trials as this machine would is named."""
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    here = node_probe()()
    probe = ray.remote(num_cpus=0, max_retries=0)(node_probe())
    nodes = [n for n in ray.nodes() if n.get("Alive") and n.get("Resources", {}).get("CPU", 0) > 0]
    if not nodes:
        raise ConfigError(f"--ray {address}: the cluster has no node with CPUs to run trials on")
    refs = {probe.options(scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False)).remote():
            n.get("NodeManagerAddress", n["NodeID"]) for n in nodes}
    ready, silent = ray.wait(list(refs), num_returns=len(refs), timeout=max(0.0, deadline - time.monotonic()))
    if silent:
        raise ConfigError(f"--ray {address}: node(s) {', '.join(refs[r] for r in silent)} ran no task within "
                          f"{timeout:g} s (busy, or short of memory); check `ray status`, or wait longer with "
                          "--ray-timeout")
    for ref in ready:
        try:
            there = ray.get(ref)
        except ray.exceptions.RayError as exc:
            raise ConfigError(f"--ray {address}: node {refs[ref]} cannot run tasks: {type(exc).__name__}") from None
        problem = node_mismatch(here, there)
        if problem:
            raise ConfigError(f"--ray {address}: node {refs[ref]} {problem}")


def node_mismatch(here: dict[str, str], there: dict[str, str]) -> str:
    """What keeps a node from running trials as this machine would ('' if nothing)."""
    if there.get("error"):
        return f"cannot import usarsim ({there['error']}); {INSTALL} on every node"
    for key, what in (("python", "Python"), ("ray", "Ray")):
        if there.get(key) != here.get(key):
            return (f"runs {what} {there.get(key)}, this machine {here.get(key)}; install the same Python and Ray "
                    f"on every node")
    if (there.get("usarsim"), there.get("code")) != (here.get("usarsim"), here.get("code")):
        return (f"runs usarsim {there.get('usarsim')} (code {there.get('code')}), this machine usarsim "
                f"{here.get('usarsim')} (code {here.get('code')}); install the same usarsim on every node "
                f"({INSTALL}=={here.get('usarsim')})")
    return ""


def node_probe() -> Callable[[], dict[str, str]]:
    """A function reporting what a node runs: usarsim's version and a hash of its code, Python and Ray.

    Made inside this function so Ray ships it by value: a node without usarsim can still run it.
    """

    def probe() -> dict[str, str]:
        import hashlib
        import importlib.metadata
        import pathlib
        import platform

        import ray as node_ray

        info = {"python": ".".join(platform.python_version_tuple()[:2]), "ray": node_ray.__version__}
        try:
            import usarsim
        except Exception as exc:  # noqa: BLE001 - reported to the driver
            return {**info, "error": f"{type(exc).__name__}: {exc}"}
        package = pathlib.Path(usarsim.__file__).parent
        digest = hashlib.sha256()
        for path in sorted(package.rglob("*.py")):
            digest.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes())
        try:
            version = importlib.metadata.version("usarsim")
        except importlib.metadata.PackageNotFoundError:
            version = "unknown"
        return {**info, "usarsim": version, "code": digest.hexdigest()[:12]}

    return probe
