"""The wireless model: signal strength between robots and ComStations, links and relays.

``model`` is the Wall Attenuation Factor formula (pure), ``walls`` counts the walls
between two points with batched ray casts, and ``network`` keeps the link table of a
running simulation up to date at the world's update rate.
"""
from usarsim.sim.wireless.model import MIN_DISTANCE, path_loss_dbm
from usarsim.sim.wireless.network import LinkTable, WirelessNetwork
from usarsim.sim.wireless.walls import count_walls

__all__ = ["LinkTable", "MIN_DISTANCE", "WirelessNetwork", "count_walls", "path_loss_dbm"]
