"""Where the package's data (worlds, config, urdf, launch) lives.

Works from a source checkout, a pip install (data under ``<prefix>/share``)
and a colcon/ament install (ament index).
"""
from __future__ import annotations

import functools
import os
import sys
from pathlib import Path

_MARKERS = ("worlds", "config")


def _has_data(path: Path) -> bool:
    return all((path / m).is_dir() for m in _MARKERS)


@functools.lru_cache(maxsize=1)
def share_dir() -> Path:
    """Directory holding worlds/, config/, urdf/ and launch/."""
    override = os.environ.get("USARSIM_SHARE")
    if override:
        return Path(override)
    checkout = Path(__file__).resolve().parents[2]
    if _has_data(checkout) and (checkout / "package.xml").is_file():
        return checkout
    installed = Path(sys.prefix) / "share" / "usarsim"
    if _has_data(installed):
        return installed
    try:
        from ament_index_python.packages import get_package_share_directory

        return Path(get_package_share_directory("usarsim"))
    except Exception:  # noqa: BLE001 - any failure means "not found"
        pass
    raise FileNotFoundError("usarsim data files not found: set USARSIM_SHARE to the package's share directory")
