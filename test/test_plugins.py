"""The plug-in registry: families found on first lookup, also when several threads look up at once."""
import sys
import textwrap
import threading

import pytest

from usarsim.sim.plugins import Registry
from patience import PATIENCE


@pytest.fixture
def slow_package(tmp_path, monkeypatch):
    """A package whose one family module takes a while to import (as the sensor modules do)."""
    package = tmp_path / "slow_devices"
    package.mkdir()
    (package / "__init__.py").write_text("from usarsim.sim.plugins import Registry\n"
                                         "REGISTRY = Registry('gadget', 'slow_devices')\n")
    (package / "widget.py").write_text(textwrap.dedent("""
        import time
        from slow_devices import REGISTRY
        time.sleep(0.3)

        @REGISTRY.register("Widget")
        class Widget:
            pass
        """))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield
    for name in [n for n in sys.modules if n.startswith("slow_devices")]:
        del sys.modules[name]


def test_concurrent_first_lookups_all_find_the_family(slow_package):
    from slow_devices import REGISTRY

    found: list[str] = []
    errors: list[Exception] = []

    def look_up() -> None:
        try:
            found.append(REGISTRY.get("Widget").__name__)
        except KeyError as exc:
            errors.append(exc)

    threads = [threading.Thread(target=look_up) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=PATIENCE)
    assert not errors and found == ["Widget"] * 8


def test_an_unknown_type_names_the_known_ones(slow_package):
    from slow_devices import REGISTRY

    with pytest.raises(KeyError, match="unknown gadget type 'Gizmo' .*known: Widget"):
        REGISTRY.get("Gizmo")
    assert isinstance(REGISTRY, Registry)
