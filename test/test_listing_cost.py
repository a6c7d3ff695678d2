"""`usarsim worlds` and `usarsim robots` only read files: they must not pay for what a simulation needs."""
from __future__ import annotations

import subprocess
import sys

import yaml

from usarsim import config_loading

LIST_AND_REPORT = """
import sys
from usarsim.cli import main
for command in ("worlds", "robots"):
    assert main([command]) == 0
print("heavy:", sorted(m for m in ("scipy", "scipy.ndimage") if m in sys.modules))
"""


def test_listing_imports_no_scipy():
    done = subprocess.run([sys.executable, "-c", LIST_AND_REPORT], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "yellow" in done.stdout and "P2AT" in done.stdout
    assert done.stdout.splitlines()[-1] == "heavy: []"


def test_config_files_are_parsed_by_libyaml_when_pyyaml_has_it():
    if not getattr(yaml, "__with_libyaml__", False):
        return  # nothing faster to use: the pure-Python parser gives the same nodes
    assert issubclass(config_loading.ConfigLoader, yaml.CSafeLoader)
