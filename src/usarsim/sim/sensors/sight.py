"""Ray queries shared by the search-and-rescue sensors: hits with body and link, line of sight.

Unlike ``range.cast_rays`` (distances along unit directions from one
origin) these take one start and one end per ray and report what was hit,
so a sensor can ask "which victim part is this" or "is this tag visible".
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

import numpy as np

from usarsim.sim.raycast import ray_test

# A ray that hits an ignored body continues from this far past the hit.
SKIP_PAST = 0.005
MAX_PASSES = 4


@dataclass(frozen=True)
class RayHits:
    """Per-ray results: hit body (-1 none), link (-1 base), distance from start (inf none), world point."""

    body: np.ndarray
    link: np.ndarray
    distance: np.ndarray
    point: np.ndarray


def cast_hits(client: int, starts: np.ndarray, ends: np.ndarray, ignore: Iterable[int] = ()) -> RayHits:
    """First hit of each segment ``starts[i] -> ends[i]``, skipping bodies in ``ignore``."""
    starts = np.asarray(starts, dtype=float).reshape(-1, 3)
    ends = np.asarray(ends, dtype=float).reshape(-1, 3)
    n = len(starts)
    ignore = frozenset(ignore)
    span = ends - starts
    length = np.linalg.norm(span, axis=1)
    unit = np.divide(span, length[:, None], out=np.zeros_like(span), where=length[:, None] > 0)
    body = np.full(n, -1, dtype=int)
    link = np.full(n, -1, dtype=int)
    distance = np.full(n, np.inf)
    point = np.full((n, 3), np.nan)
    travelled = np.zeros(n)
    pending = np.arange(n)[length > 0]
    for _ in range(MAX_PASSES):
        if len(pending) == 0:
            break
        current = starts[pending] + unit[pending] * travelled[pending, None]
        results = ray_test(client, current, ends[pending])
        hit_body = np.fromiter((r[0] for r in results), dtype=int, count=len(results))
        hit_link = np.fromiter((r[1] for r in results), dtype=int, count=len(results))
        fraction = np.fromiter((r[2] for r in results), dtype=float, count=len(results))
        hit = travelled[pending] + fraction * (length[pending] - travelled[pending])
        skipped = np.isin(hit_body, list(ignore)) if ignore else np.zeros(len(results), dtype=bool)
        done = (hit_body >= 0) & ~skipped
        rows = pending[done]
        body[rows], link[rows], distance[rows] = hit_body[done], hit_link[done], hit[done]
        if len(rows):
            point[rows] = [results[k][3] for k in np.flatnonzero(done)]
        travelled[pending[skipped]] = hit[skipped] + SKIP_PAST
        pending = pending[skipped]
        pending = pending[travelled[pending] < length[pending]]
    return RayHits(body, link, distance, point)


def line_of_sight(client: int, origin: np.ndarray, targets: np.ndarray, ignore: Iterable[int] = (),
                  hit_is_target: Callable[[int, int, int], bool] | None = None,
                  tolerance: float = 0.05) -> np.ndarray:
    """True per target when nothing but ignored bodies lies between ``origin`` and it.

    A hit within ``tolerance`` of the target does not block (a tag on a wall is
    in sight), nor one for which ``hit_is_target(i, body, link)`` is true (a
    victim's own limb in front of the part aimed at).
    """
    targets = np.asarray(targets, dtype=float).reshape(-1, 3)
    if len(targets) == 0:
        return np.zeros(0, dtype=bool)
    starts = np.repeat(np.asarray(origin, dtype=float).reshape(1, 3), len(targets), axis=0)
    hits = cast_hits(client, starts, targets, ignore)
    length = np.linalg.norm(targets - starts, axis=1)
    clear = hits.distance >= length - tolerance
    if hit_is_target is not None:
        for i in np.flatnonzero(~clear):
            clear[i] = hit_is_target(int(i), int(hits.body[i]), int(hits.link[i]))
    return clear
