"""The core's one plug-in mechanism: type name -> class, per device package.

Sensors, effecters and drives each own a ``Registry``. A family is one module of the
package and registers its class with ``@REGISTRY.register("TypeName", ...)``; the
package's modules are imported on the first lookup, so adding a family needs no edit
anywhere else.
"""
from __future__ import annotations

import importlib
import pkgutil
import threading
from typing import Callable, Generic, TypeVar

T = TypeVar("T", bound=type)


class Registry(Generic[T]):
    """Classes of one kind of device, by the type name the catalogue and the wire use."""

    def __init__(self, kind: str, package: str, skip: tuple[str, ...] = ()) -> None:
        self.kind = kind  # "sensor", "effecter", "drive": for error messages
        self._package = package
        self._skip = skip  # modules of the package that hold no families
        self._classes: dict[str, T] = {}
        self._loaded = False
        # Clients' first INITs are handled on several threads at once: none may see a half-filled table.
        self._loading = threading.RLock()

    def register(self, *type_names: str) -> Callable[[T], T]:
        """Class decorator registering a family under its type names."""

        def decorate(cls: T) -> T:
            for name in type_names:
                self._classes[name] = cls
            return cls

        return decorate

    def _load(self) -> None:
        if self._loaded:
            return
        with self._loading:
            if self._loaded:  # another thread filled the table while this one waited
                return
            package = importlib.import_module(self._package)
            for info in pkgutil.iter_modules(package.__path__):
                if info.name not in self._skip:
                    importlib.import_module(f"{self._package}.{info.name}")
            self._loaded = True

    def known(self) -> list[str]:
        """Every registered type name, sorted."""
        self._load()
        return sorted(self._classes)

    def get(self, type_name: str) -> T:
        """The class of a type name; KeyError lists the known ones."""
        self._load()
        try:
            return self._classes[type_name]
        except KeyError:
            raise KeyError(f"unknown {self.kind} type '{type_name}' "
                           f"(known: {', '.join(self.known()) or 'none'})") from None
