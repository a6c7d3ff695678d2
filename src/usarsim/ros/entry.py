"""``usarsim_node``'s entry point: the ROS 2 bridge, or one line saying how to install it.

``scripts/serve.sh`` installs the simulator without the bridge (nothing of ROS is compiled for a
user of the text protocol), so on such a machine the command must say what to do, not print an
import traceback.
"""
from __future__ import annotations

import sys
from typing import Sequence


def main(args: Sequence[str] | None = None) -> int:
    """Run the bridge node (``usarsim.ros.node.main``) when ROS 2 can be imported."""
    try:
        from usarsim.ros.node import main as node_main
    except ImportError as exc:
        print(f"usarsim_node: the ROS 2 bridge is not installed here ({exc}): run scripts/bootstrap.sh --ros, "
              "or source a ROS 2 install (docs/building.md)", file=sys.stderr)
        return 2
    return node_main(args)


if __name__ == "__main__":
    sys.exit(main())
