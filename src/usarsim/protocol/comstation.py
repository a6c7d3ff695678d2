"""The protocol face of a ComStation (``INIT {ClassName USARBot.ComStation} {Location x,y,z}``).

A station is a wireless relay, not a robot: its connection answers GETGEO and GETCONF
and refuses everything else with ERR. GEO gives where it stands (SAE frame, like
INIT's Location); CONF gives the path-loss parameters under their USARComServer.ini
names (docs/wireless.md).
"""
from __future__ import annotations

from typing import Sequence

from usarsim.protocol import grammar as g
from usarsim.protocol.messages import to_sae_vector
from usarsim.sim.world import CommSpec

CLASS_NAME = "ComStation"


def geo_station(name: str, ground: Sequence[float]) -> str:
    """``GEO {Type ComStation} {Name n} {Location x,y,z}``: where the station stands (SAE)."""
    return g.format_line("GEO", [("Type", CLASS_NAME), ("Name", name), ("Location", to_sae_vector(ground))])


def conf_station(name: str, comm: CommSpec) -> str:
    """``CONF {Type ComStation} {Name n} {ePdo ..} {eDo ..} {eN ..} {eMaxObs ..} {eAttenFac ..} {eCutoff ..}``."""
    return g.format_line("CONF", [("Type", CLASS_NAME), ("Name", name), ("ePdo", comm.p_d0), ("eDo", comm.d0),
                                  ("eN", comm.n), ("eMaxObs", comm.max_walls), ("eAttenFac", comm.waf),
                                  ("eCutoff", comm.cutoff)])


def station_reply(cmd: object, name: str, ground: Sequence[float], comm: CommSpec) -> tuple[str, str] | None:
    """(kind, line) answering a GETGEO/GETCONF sent on a station's connection; None for other commands."""
    if isinstance(cmd, g.GetGeo):
        return "GEO", geo_station(name, ground)
    if isinstance(cmd, g.GetConf):
        return "CONF", conf_station(name, comm)
    return None


__all__ = ["CLASS_NAME", "conf_station", "geo_station", "station_reply"]
