"""Walls between pairs of points, counted with batched ray casts against static geometry.

Each segment is cast both ways and PyBullet is asked for every hit, not only the
closest (``reportHitNumber``, one batch per hit index while any ray still hits):
a convex part's entry comes from the forward ray and its exit from the backward one,
so each part crossed covers one interval of the segment. Intervals that overlap or
touch (less than ``MERGE_GAP`` apart) are one wall, so a wall counts once however
thick it is and however many parts it is built from. A compound or mesh part counts
as one obstacle from its first to its last hit. Only massless bodies are cast against
(Bullet's static collision group), so robots and movable debris never cost a batch;
massless bodies that are not static geometry (victims) are ignored.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np

from usarsim.sim.raycast import STATIC_BODIES, ray_test

# Parts closer than this along a segment are one wall (arena walls are butted, not welded).
MERGE_GAP = 0.02
# A safety bound on hit indices per ray (an arena segment crosses a few dozen parts at most).
MAX_HITS = 256


def count_walls(client: int, starts: np.ndarray, ends: np.ndarray, weights: Mapping[int, float]) -> np.ndarray:
    """Weighted wall count on each segment ``starts[i] -> ends[i]``; ``weights`` maps a static
    body id to how many walls crossing it counts for (bodies not in it are transparent)."""
    starts = np.asarray(starts, dtype=float).reshape(-1, 3)
    ends = np.asarray(ends, dtype=float).reshape(-1, 3)
    n = len(starts)
    if n == 0:
        return np.zeros(0)
    spans = _body_spans(client, np.vstack([starts, ends]), np.vstack([ends, starts]), n, weights)
    lengths = np.linalg.norm(ends - starts, axis=1)
    return np.array([_merged_weight(spans[i], MERGE_GAP / max(lengths[i], 1e-9)) for i in range(n)])


def _body_spans(client: int, froms: np.ndarray, tos: np.ndarray, n: int,
                weights: Mapping[int, float]) -> list[dict[int, list[float]]]:
    """Per segment: static body -> [first, last] fraction along the segment where it was hit."""
    spans: list[dict[int, list[float]]] = [{} for _ in range(n)]
    active = np.arange(len(froms))
    for k in range(MAX_HITS):
        if not len(active):
            break
        results = ray_test(client, froms[active], tos[active], hit_number=k, collision_mask=STATIC_BODIES)
        still = []
        for ray, (body, _link, fraction, _pos, _normal) in zip(active.tolist(), results):
            if body < 0:
                continue
            still.append(ray)
            if body not in weights:
                continue
            segment, t = (ray, fraction) if ray < n else (ray - n, 1.0 - fraction)
            span = spans[segment].get(body)
            if span is None:
                spans[segment][body] = [t, t]
            else:
                span[0], span[1] = min(span[0], t), max(span[1], t)
        active = np.array(still, dtype=int)
    return [{body: span + [weights[body]] for body, span in by_body.items()} for by_body in spans]


def _merged_weight(spans: dict[int, list[float]], gap: float) -> float:
    """Sum over walls (merged overlapping spans) of the heaviest part in each."""
    total, end, weight = 0.0, -np.inf, 0.0
    for lo, hi, w in sorted(spans.values()):
        if lo <= end + gap:  # same wall: extend it
            end, weight = max(end, hi), max(weight, w)
            continue
        total += weight
        end, weight = hi, w
    return total + weight


__all__ = ["MERGE_GAP", "count_walls"]
