"""The Earth's magnetic field where a world lies: NOAA's World Magnetic Model (the ``wmm`` package).

A world placed at real coordinates (its ``gps_origin``) gets the declination, dip and strength
the model gives there, at the fixed epoch ``EPOCH`` so that every run of a world reads the same
field (the model's secular change is tens of nT a year). A world file's ``magnetic_declination``
and a compass's ``inclination`` / ``field_strength`` parameters override the model where given.
A world without coordinates gets a field pointing to true north, ``FALLBACK`` dip and strength.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from usarsim.sim.terrain import GeoPoint

EPOCH = 2025.0  # decimal year: the WMM2025 model's own epoch


@dataclass(frozen=True)
class MagneticElements:
    """The local field: declination (rad, magnetic north east of true north), inclination (rad below
    the horizon, negative in the southern hemisphere) and total strength (tesla)."""

    declination: float
    inclination: float
    strength: float


FALLBACK = MagneticElements(0.0, math.radians(60.0), 5.0e-5)  # mid-latitude Europe, north along true north


@lru_cache(maxsize=64)
def _model_at(lat: float, lon: float, alt: float) -> MagneticElements:
    from wmm import wmm_calc  # the model's coefficients load on first use only

    model = wmm_calc()
    model.setup_env(lat, lon, alt / 1000.0, unit="km", msl=True)
    model.setup_time(dyear=EPOCH)
    field = model.get_all()
    return MagneticElements(math.radians(float(field["dec"][0])), math.radians(float(field["inc"][0])),
                            float(field["f"][0]) * 1e-9)


def magnetic_elements(origin: GeoPoint | None) -> MagneticElements:
    """The World Magnetic Model's field at ``origin`` (decimal degrees, metres above sea level), or
    ``FALLBACK`` for a world without coordinates."""
    if origin is None:
        return FALLBACK
    return _model_at(float(origin.lat), float(origin.lon), float(origin.alt))


__all__ = ["EPOCH", "FALLBACK", "MagneticElements", "magnetic_elements"]
