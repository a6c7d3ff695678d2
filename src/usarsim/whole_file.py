"""Files written whole or not at all: through a temporary name beside the target, renamed at the end.

A generator stopped by Ctrl-C (or anything else) then leaves the previous files, or none, never half
of a world or a world without its map.
"""
from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import Callable, Iterator


def write_whole(path: Path, write: Callable[[Path], object]) -> None:
    """Call ``write`` on a temporary path beside ``path``, then rename it to ``path``."""
    path = Path(path)
    part = path.with_name(f".{path.name}.part")
    try:
        write(part)
        os.replace(part, path)
    finally:
        part.unlink(missing_ok=True)


def write_text_whole(path: Path, text: str) -> None:
    """``path.write_text(text)`` (UTF-8), whole or not at all."""
    write_whole(path, lambda part: part.write_text(text, encoding="utf-8"))


@contextlib.contextmanager
def all_or_nothing(out_dir: Path) -> Iterator[Path]:
    """A scratch folder inside ``out_dir``: what the block writes there is moved into ``out_dir`` when
    the block ends without an error (maps first, so a world never stands without its map), and
    deleted otherwise (Ctrl-C included)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out_dir, prefix=".usarsim-") as scratch:
        yield Path(scratch)
        maps_first = sorted(Path(scratch).iterdir(), key=lambda f: not (f.suffix == ".pgm" or f.stem.endswith("_map")))
        for written in maps_first:
            os.replace(written, out_dir / written.name)


__all__ = ["all_or_nothing", "write_text_whole", "write_whole"]
