"""The one place sensors cast rays: PyBullet's ``rayTestBatch``, chunked and threaded.

Rays are the dominant sensor cost (a P2AT casts about 300 per reading cycle), and each
ray is independent, so large batches are spread over every core; results are the same
as single-threaded casting. Small batches stay on the calling thread, where starting
workers would cost more than the rays.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pybullet as p

# PyBullet refuses larger batches, and a batch of exactly MAX_RAY_INTERSECTION_BATCH_SIZE
# rays silently returns one result fewer, which would shift every later result by one.
MAX_BATCH = p.MAX_RAY_INTERSECTION_BATCH_SIZE - 1
# From this many rays on, a batch is cast on all cores (measured: 32 rays ~1.5x faster on 2 cores).
PARALLEL_FROM = 32

_all_cores = True


def use_all_cores(enabled: bool) -> None:
    """Whether large batches may use every core; processes of a parallel sweep each keep to one,
    since the cores are already the workers'."""
    global _all_cores
    _all_cores = enabled


# A fan whose last beam falls within this fraction of a step of the field-of-view edge still
# gets that beam: documented steps are rounded (pi/180 as 0.0174533), so fov/step lands a
# hair below the whole number it stands for (179.99995 for 180 degrees).
STEP_TOLERANCE = 0.01


def beam_count(fov: float, step: float) -> int:
    """Beams of a fan from -fov/2 in ``step`` increments up to fov/2 (181 for 180 degrees in 1 degree steps)."""
    return int(math.floor(fov / step + STEP_TOLERANCE)) + 1


def threads_for(rays: int) -> int:
    """PyBullet's ``numThreads`` for a batch of ``rays``: 0 (all cores) for large ones, else 1."""
    return 0 if _all_cores and rays >= PARALLEL_FROM else 1


# Bullet's collision groups: bodies with mass are DefaultFilter (1), massless ones StaticFilter (2).
ALL_BODIES = -1
STATIC_BODIES = 2


def ray_test(client: int, starts: np.ndarray | Sequence[Sequence[float]],
             ends: np.ndarray | Sequence[Sequence[float]], hit_number: int = -1,
             collision_mask: int = ALL_BODIES) -> list[tuple]:
    """PyBullet ray results (body, link, fraction, position, normal), one per start/end pair.

    ``hit_number`` k >= 0 asks for each ray's k-th hit of all its hits (in Bullet's order, one
    per convex shape) instead of the closest one; -1 when there are fewer. ``collision_mask``
    limits the bodies tested to those whose collision group shares a bit with it.
    """
    starts = np.asarray(starts, dtype=float).reshape(-1, 3)
    ends = np.asarray(ends, dtype=float).reshape(-1, 3)
    out: list[tuple] = []
    for k in range(0, len(starts), MAX_BATCH):
        chunk_starts, chunk_ends = starts[k:k + MAX_BATCH], ends[k:k + MAX_BATCH]
        results = p.rayTestBatch(chunk_starts.tolist(), chunk_ends.tolist(), numThreads=threads_for(len(chunk_starts)),
                                 reportHitNumber=hit_number, collisionFilterMask=collision_mask,
                                 physicsClientId=client)
        if len(results) != len(chunk_starts):
            raise RuntimeError(f"rayTestBatch returned {len(results)} results for {len(chunk_starts)} rays")
        out.extend(results)
    return out
