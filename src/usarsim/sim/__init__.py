"""The ROS-free simulator core: worlds, robots, sensors, physics stepping."""
from usarsim.sim.quiet import quiet_stderr, quiet_stdout

with quiet_stdout(), quiet_stderr():
    import pybullet  # noqa: F401  (its first import prints a build banner on stdout or stderr)
