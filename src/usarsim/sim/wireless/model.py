"""The manual's Wall Attenuation Factor path-loss model (pure).

P(d) = P(d0) - 10 n log10(d / d0) - min(nW, C) WAF, in dBm, where nW is the number of
walls between the two radios (weighted by surface, see ``WallWeights``).
"""
from __future__ import annotations

import numpy as np

from usarsim.sim.world import CommSpec

# Closer than this the formula would grow without bound; two radios on robots are never closer.
MIN_DISTANCE = 0.1


def path_loss_dbm(distance: float | np.ndarray, walls: float | np.ndarray, comm: CommSpec) -> float | np.ndarray:
    """Received signal in dBm at ``distance`` metres through ``walls`` walls."""
    d = np.maximum(np.asarray(distance, dtype=float), MIN_DISTANCE)
    counted = np.minimum(np.asarray(walls, dtype=float), comm.max_walls)
    signal = comm.p_d0 - 10.0 * comm.n * np.log10(d / comm.d0) - counted * comm.waf
    return float(signal) if signal.ndim == 0 else signal


__all__ = ["MIN_DISTANCE", "path_loss_dbm"]
