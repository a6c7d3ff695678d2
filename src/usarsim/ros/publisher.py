"""Publishing off the stepping thread: the tick hands its readings over; this thread converts and publishes.

Building rclpy messages in Python and serialising them for DDS (reliable QoS keeps history and
acknowledgements) costs more than the physics tick of a small robot. Doing both on a thread of its
own keeps the tick short; readings are immutable, so converting them later gives the same messages,
and one thread draining one FIFO keeps every topic in order.
"""
from __future__ import annotations

import queue
import threading
from typing import Any, Callable

STOP = object()


class PublishQueue:
    """A FIFO of jobs (callables that build and publish messages) run by one daemon thread.

    ``alive`` says whether publishing can still work: once the ROS context is shut down (SIGINT
    under ``ros2 launch`` shuts it down before the node stops the simulation), the jobs still
    queued fail, and that is the expected end of the run, not an error to report.
    """

    def __init__(self, log: Any, alive: Callable[[], bool] = lambda: True) -> None:
        self._log = log
        self._alive = alive
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="usarsim-publish", daemon=True)
        self._thread.start()

    @property
    def thread(self) -> threading.Thread:
        """The publishing thread (benchmarks read its CPU time)."""
        return self._thread

    def submit(self, job: Callable[[], None]) -> None:
        """Run ``job`` on the publishing thread after everything submitted before it."""
        self._jobs.put(job)

    def put(self, publisher: Any, msg: Any) -> None:
        """Publish a message that is already built."""
        self._jobs.put(lambda: publisher.publish(msg))

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until everything submitted so far has run."""
        done = threading.Event()
        self._jobs.put(done.set)
        return done.wait(timeout)

    def close(self) -> None:
        """Run what is queued, then stop the thread."""
        self._jobs.put(STOP)
        self._thread.join(timeout=5.0)

    def _run(self) -> None:
        while True:
            job = self._jobs.get()
            if job is STOP:
                return
            try:
                job()
            except Exception as exc:  # noqa: BLE001 - one bad message must not stop every later one
                if not self._alive():
                    continue
                self._log.error(f"publishing failed: {type(exc).__name__}: {exc}")
