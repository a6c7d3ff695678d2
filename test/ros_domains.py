"""ROS domains for the graphs a test process starts: each graph gets its own, so two graphs alive at the same
time (a module's fixtures, a test's extra node) never hear each other's topics. Parallel test workers
(pytest-xdist) draw from disjoint ranges, so graphs of two workers never share a domain either."""
import itertools
import os

LOWEST, COUNT = 1, 101  # IDs 1..101 have DDS ports on every platform; 0 stays the user's default


def _worker_range() -> tuple[int, int]:
    """(first ID, how many) for this process: the whole range, or this xdist worker's share of it."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if not worker.startswith("gw") or workers <= 1:
        return LOWEST, COUNT
    span = COUNT // workers
    return LOWEST + int(worker[2:]) * span, span


_FIRST, _SPAN = _worker_range()
_following = itertools.count(os.getpid())  # concurrent test processes start at different places


def fresh_domain_id() -> int:
    """A domain ID no other graph of this process has used in its last requests (its range's size)."""
    return _FIRST + next(_following) % _SPAN
