"""A bridge node in its own process and a client node here, as a user's second program would talk to it."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable, Sequence

import rclpy
from rclpy.action import ActionClient
from rclpy.executors import MultiThreadedExecutor
from rclpy.qos import QoSProfile, ReliabilityPolicy
from ros_domains import fresh_domain_id
from patience import PATIENCE



def qos_for(msg_type: type, depth: int) -> QoSProfile:
    """A subscription that matches how the bridge publishes ``msg_type`` (reliable state, best-effort sensors)."""
    from usarsim.ros.node import STATE_TYPES

    reliability = ReliabilityPolicy.RELIABLE if msg_type in STATE_TYPES else ReliabilityPolicy.BEST_EFFORT
    return QoSProfile(depth=depth, reliability=reliability)


class BridgeProcess:
    """``usarsim_node`` started with ``params`` (name:=value strings) on a private domain; a client node spins here."""

    def __init__(self, log_path: Path, params: Sequence[str]) -> None:
        self.domain = fresh_domain_id()
        env = dict(os.environ, ROS_DOMAIN_ID=str(self.domain), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST",
                   PYTHONUNBUFFERED="1")
        os.environ.update(ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
        self.log = open(log_path, "w")
        args = [a for p in params for a in ("-p", p)]
        self.proc = subprocess.Popen([sys.executable, "-m", "usarsim.ros.node", "--ros-args", *args],
                                     env=env, stdout=self.log, stderr=subprocess.STDOUT)
        self.ctx = rclpy.Context()
        rclpy.init(context=self.ctx, domain_id=self.domain)
        self.node = rclpy.create_node("usarsim_test_client", context=self.ctx)
        self.lock = threading.Lock()
        self.received: dict[str, list[Any]] = defaultdict(list)
        self.listening: set[str] = set()
        self.publishers: dict[str, Any] = {}
        self.executor = MultiThreadedExecutor(num_threads=2, context=self.ctx)
        self.executor.add_node(self.node)
        self.thread = threading.Thread(target=self.executor.spin, daemon=True)
        self.thread.start()

    def log_tail(self) -> str:
        self.log.flush()
        return Path(self.log.name).read_text()[-3000:]

    def listen(self, msg_type: type, topic: str, qos: QoSProfile, key: str | None = None) -> str:
        """Keep every message of ``topic`` under ``key`` (default: the topic)."""
        key = key or topic

        def keep(msg: Any) -> None:
            with self.lock:
                self.received[key].append(msg)

        self.node.create_subscription(msg_type, topic, keep, qos)
        self.listening.add(key)
        return key

    def listen_once(self, msg_type: type, topic: str, qos: QoSProfile, key: str | None = None) -> str:
        """``listen``, unless ``key`` (default: the topic) is kept already: then no second subscription."""
        key = key or topic
        return key if key in self.listening else self.listen(msg_type, topic, qos, key)

    def publisher(self, msg_type: type, topic: str) -> Any:
        """One publisher per topic for the client's life (destroying one under the spinning executor is unsafe)."""
        if topic not in self.publishers:
            self.publishers[topic] = self.node.create_publisher(msg_type, topic, 10)
        return self.publishers[topic]

    def messages(self, key: str) -> list[Any]:
        with self.lock:
            return list(self.received[key])

    def wait_for(self, predicate: Callable[[], bool], timeout: float = PATIENCE) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return True
            assert self.proc.poll() is None, self.log_tail()
            time.sleep(0.05)
        return False

    def call(self, srv_type: type, name: str, request: Any = None, timeout: float = PATIENCE) -> Any:
        """Call a service once it is available; the response (fails the test on timeout)."""
        client = self.node.create_client(srv_type, name)
        try:
            assert client.wait_for_service(timeout_sec=timeout), f"{name} not offered\n{self.log_tail()}"
            future = client.call_async(request if request is not None else srv_type.Request())
            assert self.wait_for(future.done, timeout), f"{name} did not answer\n{self.log_tail()}"
            return future.result()
        finally:
            self.node.destroy_client(client)

    def run_action(self, action_type: type, name: str, goal: Any, timeout: float = PATIENCE) -> tuple[Any, list[Any]]:
        """Send a goal and wait for its result: (result, feedback messages)."""
        client = ActionClient(self.node, action_type, name)
        feedback: list[Any] = []
        try:
            assert client.wait_for_server(timeout_sec=timeout), f"{name} not offered\n{self.log_tail()}"
            sent = client.send_goal_async(goal, feedback_callback=lambda f: feedback.append(f.feedback))
            assert self.wait_for(sent.done, timeout)
            handle = sent.result()
            assert handle.accepted
            done = handle.get_result_async()
            assert self.wait_for(done.done, timeout), f"{name} did not finish\n{self.log_tail()}"
            return done.result().result, feedback
        finally:
            client.destroy()

    def close(self) -> None:
        shut_down(self)
        self.log.close()


def shut_down(graph: Any) -> None:
    """Stop a test's client (``executor``, ``thread``, ``node``, ``ctx``) and then the bridge process (``proc``)."""
    graph.executor.shutdown()
    graph.thread.join(timeout=PATIENCE)
    graph.node.destroy_node()
    rclpy.shutdown(context=graph.ctx)
    if graph.proc.poll() is None:
        graph.proc.send_signal(signal.SIGINT)
        try:
            graph.proc.wait(timeout=PATIENCE)
        except subprocess.TimeoutExpired:
            graph.proc.kill()
            graph.proc.wait()
