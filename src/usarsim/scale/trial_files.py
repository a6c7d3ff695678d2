"""A trial's folder on disk: written under a temporary name, renamed into place only when complete.

Each attempt writes into its own ``<trial id>.partial.<random>`` folder, so two attempts at the same
trial (a sweep and a leftover of a killed one, or a retry) never write into each other's files. A
folder named after the trial holds a ``summary.json`` and is complete; anything ``.partial`` is
left by an attempt that did not finish and is discarded by the next sweep.
"""
from __future__ import annotations

import hashlib
import shutil
import tempfile
from pathlib import Path
from typing import IO, Iterable

SUMMARY = "summary.json"
READINGS = "readings.jsonl"
BAG = "bag.mcap"
ERROR = "error.txt"
PARTIAL = ".partial"


def new_partial(root: Path, trial_id: str) -> Path:
    """A fresh, empty folder for one attempt at ``trial_id`` under ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f"{trial_id}{PARTIAL}.", dir=root))


def leftover_partials(root: Path) -> list[Path]:
    """Folders of attempts that never finished."""
    return [p for p in root.glob(f"*{PARTIAL}*") if p.is_dir()]


def publish(partial: Path, final: Path) -> None:
    """Rename the complete ``partial`` folder to ``final``, replacing an older one.

    A directory cannot be renamed over a non-empty one, so the old one is first renamed aside: at
    every instant ``final`` is either the old complete folder, absent, or the new complete folder.
    """
    aside = None
    if final.exists():
        aside = Path(tempfile.mkdtemp(prefix=f"{final.name}{PARTIAL}.old.", dir=final.parent))
        final.rename(aside / final.name)
    partial.rename(final)
    if aside is not None:
        shutil.rmtree(aside, ignore_errors=True)


class HashedLines:
    """A text file whose SHA-256 is computed from exactly the bytes written to it."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream = stream
        self._hash = hashlib.sha256()

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            data = line.encode("utf-8")
            self._hash.update(data)
            self._stream.write(data)

    def hexdigest(self) -> str:
        return self._hash.hexdigest()
