"""Walls between pairs of points, counted with batched ray casts against static geometry.

Each segment is cast both ways and PyBullet is asked for every hit, not only the
closest (``reportHitNumber``, one batch per hit index while any ray still hits):
a convex part's entry comes from the forward ray and its exit from the backward one,
so each part crossed covers one interval of the segment; a triangle mesh or height field
reports each face crossed to both rays, and its crossings pair up in order (a U-shaped
building crossed through both arms is two intervals). Intervals that overlap or touch
(less than ``MERGE_GAP`` apart) are one wall, so a wall counts once however thick it is
and however many parts it is built from; bulk bodies (earth) cost by the length of the
segment inside them instead (``obstruction``). Only massless bodies are cast against
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
    return obstruction(client, starts, ends, weights, {})[0]


def obstruction(client: int, starts: np.ndarray, ends: np.ndarray, weights: Mapping[int, float],
                losses: Mapping[int, float]) -> tuple[np.ndarray, np.ndarray]:
    """Per segment ``starts[i] -> ends[i]``: (weighted wall count, dB lost inside bulk bodies).

    ``weights`` maps a body to the walls one crossing of it counts for; ``losses`` maps a bulk body
    (earth) to its attenuation in dB per metre of path inside it. A body may be in both."""
    starts = np.asarray(starts, dtype=float).reshape(-1, 3)
    ends = np.asarray(ends, dtype=float).reshape(-1, 3)
    n = len(starts)
    if n == 0:
        return np.zeros(0), np.zeros(0)
    wanted = set(weights) | set(losses)
    hits = _body_hits(client, np.vstack([starts, ends]), np.vstack([ends, starts]), n, wanted)
    lengths = np.linalg.norm(ends - starts, axis=1)
    walls, bulk = np.zeros(n), np.zeros(n)
    for i in range(n):
        gap = MERGE_GAP / max(lengths[i], 1e-9)
        solids = {body: _solid_intervals(forward, backward, gap) for body, (forward, backward) in hits[i].items()}
        walls[i] = _merged_weight([(lo, hi, weights[body]) for body, spans in solids.items() if body in weights
                                   for lo, hi in spans], gap)
        bulk[i] = lengths[i] * sum(losses[body] * sum(hi - lo for lo, hi in spans)
                                   for body, spans in solids.items() if body in losses)
    return walls, bulk


def _body_hits(client: int, froms: np.ndarray, tos: np.ndarray, n: int,
               wanted: set[int]) -> list[dict[int, tuple[list[float], list[float]]]]:
    """Per segment: body -> (fractions along the segment where the forward ray hit it, where the
    backward ray did)."""
    hits: list[dict[int, tuple[list[float], list[float]]]] = [{} for _ in range(n)]
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
            if body not in wanted:
                continue
            segment, backward, t = (ray, False, fraction) if ray < n else (ray - n, True, 1.0 - fraction)
            hits[segment].setdefault(body, ([], []))[int(backward)].append(t)
        active = np.array(still, dtype=int)
    return hits


def _solid_intervals(forward: list[float], backward: list[float], gap: float) -> list[tuple[float, float]]:
    """The stretches of a segment inside one body, from where the two rays hit it.

    Bullet reports one hit per convex part (where the ray enters it), so a convex part is entered at
    a forward hit and left at the next backward one. A triangle mesh or height field reports every
    face the ray crosses, entering or leaving, to both rays alike: there the sorted crossings pair up
    (in, out, in, out), so a U-shaped building is two walls and a hill a stretch of earth."""
    forward, backward = sorted(forward), sorted(backward)
    if len(forward) == len(backward) and all(abs(a - b) <= gap for a, b in zip(forward, backward)):
        crossings = [t for k, t in enumerate(forward) if k == 0 or t - forward[k - 1] > gap]
        if len(crossings) % 2:  # an end inside the body, or a face grazed: in and out cannot be told apart
            return [(crossings[0], crossings[-1])]
        return list(zip(crossings[::2], crossings[1::2]))
    # each entry to the next exit, and each exit back to the entry before it: the same stretches
    # whichever way the segment runs (an end inside a part is met by the segment's end)
    spans = [(entry, next((t for t in backward if t >= entry), 1.0)) for entry in forward]
    spans += [(next((t for t in reversed(forward) if t <= exit_), 0.0), exit_) for exit_ in backward]
    return spans


def _merged_weight(spans: list[tuple[float, float, float]], gap: float) -> float:
    """Sum over walls (merged overlapping spans) of the heaviest part in each."""
    if not spans:
        return 0.0
    total, end, weight = 0.0, -np.inf, 0.0
    for lo, hi, w in sorted(spans):
        if lo <= end + gap:  # same wall: extend it
            end, weight = max(end, hi), max(weight, w)
            continue
        total += weight
        end, weight = hi, w
    return total + weight


__all__ = ["MERGE_GAP", "count_walls", "obstruction"]
