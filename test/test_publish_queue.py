"""The bridge's publishing thread: order, and quiet failures once ROS has shut down."""
from usarsim.ros.publisher import PublishQueue


class _Log:
    def __init__(self) -> None:
        self.errors: list[str] = []

    def error(self, text: str) -> None:
        self.errors.append(text)


def _fail() -> None:
    raise RuntimeError("publisher's context is invalid")


def test_jobs_run_in_order_and_a_failure_is_reported_while_ros_is_up():
    log, ran = _Log(), []
    queue = PublishQueue(log)
    queue.submit(lambda: ran.append(1))
    queue.submit(_fail)
    queue.submit(lambda: ran.append(2))
    assert queue.flush()
    queue.close()
    assert ran == [1, 2]
    assert log.errors == ["publishing failed: RuntimeError: publisher's context is invalid"]


def test_failures_after_shutdown_are_the_end_of_the_run_not_errors():
    log, ran, alive = _Log(), [], [True]
    queue = PublishQueue(log, alive=lambda: alive[0])
    alive[0] = False  # SIGINT shut the context down while ticks were still queued
    queue.submit(_fail)
    queue.submit(lambda: ran.append("later"))
    queue.close()
    assert log.errors == [] and ran == ["later"]
