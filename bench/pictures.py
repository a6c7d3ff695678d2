"""The frames of docs/worlds.md (Appearance): fixed views rendered by whichever usarsim is importable.

Render every view into a folder (run once with an older checkout's ``src`` on PYTHONPATH for
the "before" frames, once with this one's for the "after" frames), then compose the pages of
before | after pairs that docs/worlds.md shows (palette PNGs, each under 150 KB):

    PYTHONPATH=/old/src .venv/bin/python bench/pictures.py render /tmp/before
    PYTHONPATH=src      .venv/bin/python bench/pictures.py render /tmp/after
    .venv/bin/python bench/pictures.py pages /tmp/before /tmp/after docs/img

A view is either a free camera (eye, target, horizontal FOV; the frame a robot's camera would
draw from there, through ``Camera.render_view``) or a robot's own camera at a start pose
(``Camera.render``, headlight on or off). Both exist unchanged in older checkouts.
"""
from __future__ import annotations

import argparse
import math
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from usarsim.sim.sensors.camera import Camera, vertical_fov
from usarsim.sim.simulator import Simulator

import pybullet as p  # noqa: E402,I001  (after usarsim.sim, which silences its import banner)

WIDTH, HEIGHT = 320, 240  # the default camera's frame


@dataclass(frozen=True)
class View:
    world: str
    eye: tuple[float, float, float] | None = None  # None: the P2AT's own camera at Start1
    target: tuple[float, float, float] = (0.0, 0.0, 0.0)
    fov_deg: float = 60.0
    headlight: bool = False
    caption: str = ""


VIEWS = {
    "victim_lying": View("orange", (15.9, -2.8, -0.3), (14.0, -4.0, -1.3), 60, caption="orange V1, lying"),
    "victim_sitting": View("hills", (0.9, 1.5, 4.0), (2.4, 2.5, 3.3), 60, caption="hills V2, sitting"),
    "victim_trapped": View("orange", (4.9, 0.1, -0.3), (3.0, 1.4, -1.3), 60, caption="orange V3, trapped"),
    "hills_aerial": View("hills", (10.0, 20.0, 60.0), (10.01, 20.0, 0.0), 80, caption="hills from 60 m up"),
    "hills_ground": View("hills", (-14.0, 0.0, 3.6), (-40.0, -25.0, 1.0), 60, caption="hills, 0.6 m up"),
    "harbour_under": View("harbour", (10.0, 1.5, -2.6), (16.0, 6.0, -3.2), 60, caption="harbour, 2 m deep"),
    "harbour_quay": View("harbour", (-1.5, -8.0, 1.2), (8.0, -12.0, -1.5), 60, caption="harbour from the quay"),
    "lamps": View("orange", (1.0, 2.0, 1.4), (6.0, -1.6, -1.35), 70, caption="orange: a lamp's pool"),
    "headlight": View("yellow", headlight=True, caption="yellow Start1, headlight on"),
}
PAGES = {
    "pictures_victims.png": ("victim_lying", "victim_sitting", "victim_trapped"),
    "pictures_terrain.png": ("hills_aerial", "hills_ground"),
    "pictures_water.png": ("harbour_under", "harbour_quay"),
    "pictures_lights.png": ("lamps", "headlight"),
}
PAGE_LIMIT = 150_000  # bytes per PNG in docs/img


def render(view: View) -> np.ndarray:
    """The view's frame (HEIGHT x WIDTH x 3)."""
    with Simulator(view.world, seed=1) as sim:
        robot = sim.spawn("P2AT", "R", start="Start1")
        sim.run_for(0.2)
        camera = next(s for s in robot.sensors if isinstance(s, Camera))
        if view.eye is None:
            robot.light_on = view.headlight
            return np.frombuffer(camera.render(), dtype=np.uint8).reshape(HEIGHT, WIDTH, 3)
        eye = np.asarray(view.eye, dtype=float)
        forward = np.asarray(view.target, dtype=float) - eye
        forward /= np.linalg.norm(forward)
        up = np.array([0.0, 0.0, 1.0]) if abs(forward[2]) < 0.99 else np.array([1.0, 0.0, 0.0])
        projection = p.computeProjectionMatrixFOV(
            math.degrees(vertical_fov(math.radians(view.fov_deg), WIDTH, HEIGHT)), WIDTH / HEIGHT, 0.02, 200.0)
        return camera.render_view(eye, forward, up, WIDTH, HEIGHT, projection)[0]


def render_all(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, view in VIEWS.items():
        start = time.perf_counter()
        Image.fromarray(render(view)).save(folder / f"{name}.png")
        print(f"{name:16s} {time.perf_counter() - start:5.2f} s")


def pages(before: Path, after: Path, out: Path) -> None:
    """One page per PAGES entry: a row per view, before on the left, after on the right."""
    label_height = 14
    for page, names in PAGES.items():
        sheet = Image.new("RGB", (2 * WIDTH, len(names) * (HEIGHT + label_height)), "white")
        draw = ImageDraw.Draw(sheet)
        for row, name in enumerate(names):
            top = row * (HEIGHT + label_height)
            for col, folder in enumerate((before, after)):
                sheet.paste(Image.open(folder / f"{name}.png").convert("RGB"), (col * WIDTH, top + label_height))
                draw.text((col * WIDTH + 4, top + 1), f"{'before' if col == 0 else 'after'}: {VIEWS[name].caption}",
                          fill="black")
        for colours in (256, 128, 64):
            sheet.quantize(colours, dither=Image.Dither.FLOYDSTEINBERG).save(out / page, optimize=True)
            if (out / page).stat().st_size <= PAGE_LIMIT:
                break
        print(f"{out / page}: {(out / page).stat().st_size // 1024} KB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("render").add_argument("folder", type=Path)
    compose = sub.add_parser("pages")
    for name in ("before", "after", "out"):
        compose.add_argument(name, type=Path)
    args = parser.parse_args()
    if args.command == "render":
        render_all(args.folder)
    else:
        pages(args.before, args.after, args.out)


if __name__ == "__main__":
    main()
