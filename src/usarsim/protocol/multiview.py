"""MultiView (manual §3.2.6): several robots' cameras tiled into one image.

Configured with the manual's ``[USARBot.MultiView]`` keys: ``CameraNum`` (most
tiles drawn at once), ``WideMode`` (0: a box pattern, as square as possible;
N > 0: N tiles per row) and ``CameraXres``/``CameraYres`` (one tile's size; a
camera's image is scaled to fit it with its aspect ratio kept). Each robot
gets one tile for its first camera, in the first free place, and keeps it while
it exists; a robot that leaves frees its tile (drawn black) for the next one.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Hashable, Mapping, Sequence, TypeVar

from PIL import Image

Key = TypeVar("Key", bound=Hashable)


@dataclass(frozen=True)
class MultiViewConfig:
    """The manual's MultiView keys: CameraNum, WideMode, CameraXres x CameraYres."""

    cameras: int = 4
    wide_mode: int = 0
    tile_width: int = 320
    tile_height: int = 240

    def __post_init__(self) -> None:
        if not 1 <= self.cameras <= 64:
            raise ValueError(f"MultiView CameraNum must be 1..64, got {self.cameras}")
        if self.wide_mode < 0:
            raise ValueError(f"MultiView WideMode must be 0 (box) or a column count, got {self.wide_mode}")
        if not (0 < self.tile_width <= 4096 and 0 < self.tile_height <= 4096):
            raise ValueError(f"MultiView tile size must be 1..4096 pixels a side, "
                             f"got {self.tile_width}x{self.tile_height}")

    @property
    def columns(self) -> int:
        if self.wide_mode > 0:
            return min(self.wide_mode, self.cameras)
        return math.ceil(math.sqrt(self.cameras))

    @property
    def rows(self) -> int:
        return math.ceil(self.cameras / self.columns)

    @property
    def size(self) -> tuple[int, int]:
        """Width and height of the whole mosaic."""
        return self.columns * self.tile_width, self.rows * self.tile_height

    def origin(self, index: int) -> tuple[int, int]:
        """Top-left pixel of tile ``index`` (0 top left, then left to right, row by row)."""
        return (index % self.columns) * self.tile_width, (index // self.columns) * self.tile_height


def assign_tiles(current: Mapping[int, Key], live: Sequence[Key], capacity: int) -> dict[int, Key]:
    """Tiles after robots came and went: gone ones freed, new ones in the first free places."""
    alive = set(live)
    tiles = {index: key for index, key in current.items() if key in alive}
    placed = set(tiles.values())
    free = (i for i in range(capacity) if i not in tiles)
    for key in live:
        if key in placed:
            continue
        index = next(free, None)
        if index is None:
            break
        tiles[index] = key
    return tiles


def fit(picture: Image.Image, width: int, height: int) -> Image.Image:
    """``picture`` scaled to fit width x height, aspect kept, centred on black."""
    if picture.size == (width, height):
        return picture
    scale = min(width / picture.width, height / picture.height)
    size = (max(1, round(picture.width * scale)), max(1, round(picture.height * scale)))
    canvas = Image.new("RGB", (width, height))
    canvas.paste(picture.resize(size, Image.Resampling.BILINEAR), ((width - size[0]) // 2, (height - size[1]) // 2))
    return canvas


def compose(config: MultiViewConfig, pictures: Mapping[int, Image.Image]) -> Image.Image:
    """The mosaic: each tile's picture fitted into its place; tiles without one stay black."""
    mosaic = Image.new("RGB", config.size)
    for index, picture in pictures.items():
        mosaic.paste(fit(picture, config.tile_width, config.tile_height), config.origin(index))
    return mosaic


__all__ = ["MultiViewConfig", "assign_tiles", "compose", "fit"]
