"""ROS domains for the graphs a test process starts: each graph gets its own, so two graphs alive at the same
time (a module's fixtures, a test's extra node) never hear each other's topics."""
import itertools
import os

LOWEST, COUNT = 1, 101  # IDs 1..101 have DDS ports on every platform; 0 stays the user's default
_following = itertools.count(os.getpid())  # concurrent test processes start at different places


def fresh_domain_id() -> int:
    """A domain ID no other graph of this process has used in its last 100 requests."""
    return LOWEST + next(_following) % COUNT
