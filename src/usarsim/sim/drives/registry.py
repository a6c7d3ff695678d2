"""The drive registry (its own module so that drive families can import it without a cycle)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from usarsim.sim.plugins import Registry

if TYPE_CHECKING:
    from usarsim.sim.drives.base import Drive

DRIVES: Registry[type[Drive]] = Registry("drive", "usarsim.sim.drives", skip=("registry",))
