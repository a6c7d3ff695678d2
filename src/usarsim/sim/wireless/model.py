"""The manual's Wall Attenuation Factor path-loss model, and what bulk matter absorbs (pure).

P(d) = P(d0) - 10 n log10(d / d0) - min(nW, C) WAF - sum(alpha_m L_m), in dBm, where nW is the
number of walls between the two radios (weighted by surface, see ``WallWeights``) and L_m the
length of the path inside bulk material m (earth, water) that absorbs alpha_m dB per metre at
2.4 GHz. A wall is thin and costs the same however thick; a hill or a sea is not a wall.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from usarsim.sim.water import FRESH_WATER_DENSITY, SEA_WATER_DENSITY, WaterSpec
from usarsim.sim.world import CommSpec

# Closer than this the formula would grow without bound; two radios on robots are never closer.
MIN_DISTANCE = 0.1


def path_loss_dbm(distance: float | np.ndarray, walls: float | np.ndarray, comm: CommSpec) -> float | np.ndarray:
    """Received signal in dBm at ``distance`` metres through ``walls`` walls."""
    d = np.maximum(np.asarray(distance, dtype=float), MIN_DISTANCE)
    counted = np.minimum(np.asarray(walls, dtype=float), comm.max_walls)
    signal = comm.p_d0 - 10.0 * comm.n * np.log10(d / comm.d0) - counted * comm.waf
    return float(signal) if signal.ndim == 0 else signal


# Absorption at 2.4 GHz, dB per metre: a plane wave in a lossy medium loses 8.686 alpha dB/m with
# alpha = omega sqrt(mu eps' / 2) sqrt(sqrt(1 + (eps'' / eps')^2) - 1).
# Sea water (eps' = 70, conductivity 4 S/m): alpha = 89 /m, 770 dB/m (a metre of sea ends any link).
SEA_WATER_DB_PER_M = 770.0
# Fresh water (eps = 78 - 10j at 2.4 GHz, the dipole relaxation of water): 250 dB/m.
FRESH_WATER_DB_PER_M = 250.0
# Earth (moist soil, eps about 10 - 1.5j): about 40 dB/m; dry sand is a few dB/m, wet clay over 100.
EARTH_DB_PER_M = 40.0


def water_db_per_m(density: float) -> float:
    """Absorption of water of ``density`` kg/m^3: fresh water's at 1000, sea water's at 1025 (its salt
    makes it denser and conductive), in between linearly."""
    share = (density - FRESH_WATER_DENSITY) / (SEA_WATER_DENSITY - FRESH_WATER_DENSITY)
    share = min(1.0, max(0.0, share))
    return FRESH_WATER_DB_PER_M + share * (SEA_WATER_DB_PER_M - FRESH_WATER_DB_PER_M)


def water_loss_db(starts: np.ndarray, ends: np.ndarray, volumes: Sequence[WaterSpec]) -> np.ndarray:
    """dB absorbed along each segment ``starts[i] -> ends[i]`` by the water volumes it runs through
    (each an upright box: its footprint from bottom to surface)."""
    starts = np.asarray(starts, dtype=float).reshape(-1, 3)
    ends = np.asarray(ends, dtype=float).reshape(-1, 3)
    loss = np.zeros(len(starts))
    delta = ends - starts
    for volume in volumes:
        low = np.array([volume.center[0] - volume.size[0] / 2, volume.center[1] - volume.size[1] / 2, volume.bottom])
        high = np.array([volume.center[0] + volume.size[0] / 2, volume.center[1] + volume.size[1] / 2, volume.surface])
        with np.errstate(divide="ignore", invalid="ignore"):  # slab method; a segment parallel to a slab
            t0, t1 = (low - starts) / delta, (high - starts) / delta
        inside = (starts >= low) & (starts <= high)  # ... lies in it for all t or for none
        t_near = np.where(delta == 0, np.where(inside, -np.inf, np.inf), np.minimum(t0, t1))
        t_far = np.where(delta == 0, np.where(inside, np.inf, -np.inf), np.maximum(t0, t1))
        enter = np.clip(t_near.max(axis=1), 0.0, 1.0)
        leave = np.clip(t_far.min(axis=1), 0.0, 1.0)
        wet = np.maximum(leave - enter, 0.0) * np.linalg.norm(delta, axis=1)
        loss += wet * water_db_per_m(volume.density)
    return loss


__all__ = ["EARTH_DB_PER_M", "FRESH_WATER_DB_PER_M", "MIN_DISTANCE", "SEA_WATER_DB_PER_M", "path_loss_dbm",
           "water_db_per_m", "water_loss_db"]
