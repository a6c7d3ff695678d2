"""The shipped street world's OpenStreetMap extract (``worlds/town.osm``), written by the project.

A few blocks of a grid town: two east-west streets (a secondary road and a residential
one) crossed by three north-south ones (primary, residential, service lane), and
buildings on every block, some with ``building:levels`` or ``height`` tags. Plain OSM XML
(version 0.6) with a ``<bounds>`` element, as an export from openstreetmap.org looks.
``python -m usarsim.worldgen.town`` rewrites it.
"""
from __future__ import annotations

import sys
from pathlib import Path
from xml.sax.saxutils import quoteattr

import pymap3d

ORIGIN = (39.14, -77.21)  # lat, lon of the south-west corner of the bounds
SIZE = (150.0, 110.0)  # m: east, north extent
STREETS_NS = [(20.0, "primary", "Main Street"), (75.0, "residential", "Oak Street"), (125.0, "service", None)]
STREETS_EW = [(20.0, "secondary", "First Avenue"), (80.0, "residential", "Second Avenue")]


def _latlon(east: float, north: float) -> tuple[float, float]:
    lat, lon, _ = pymap3d.enu2geodetic(east, north, 0.0, ORIGIN[0], ORIGIN[1], 0.0)
    return round(float(lat), 7), round(float(lon), 7)


def town_osm() -> str:
    """The extract as OSM XML text."""
    nodes: list[str] = []
    ways: list[str] = []

    def node(east: float, north: float) -> int:
        lat, lon = _latlon(east, north)
        nodes.append(f'  <node id="{len(nodes) + 1}" version="1" lat="{lat}" lon="{lon}"/>')
        return len(nodes)

    def way(refs: list[int], tags: dict[str, str]) -> None:
        body = "".join(f'\n    <nd ref="{r}"/>' for r in refs)
        body += "".join(f"\n    <tag k={quoteattr(k)} v={quoteattr(v)}/>" for k, v in tags.items())
        ways.append(f'  <way id="{100 + len(ways)}" version="1">{body}\n  </way>')

    east_max, north_max = SIZE
    crossings = {(e, n): node(e, n) for e, _, _ in STREETS_NS for n, _, _ in STREETS_EW}
    for e, kind, name in STREETS_NS:
        refs = [node(e, 0.0)] + [crossings[(e, n)] for n, _, _ in STREETS_EW] + [node(e, north_max)]
        way(refs, {"highway": kind, **({"name": name} if name else {})})
    for n, kind, name in STREETS_EW:
        refs = [node(0.0, n)] + [crossings[(e, n)] for e, _, _ in STREETS_NS] + [node(east_max, n)]
        way(refs, {"highway": kind, "name": name})
    # buildings: two on each block between the streets, set back from the kerb
    edges_e = [0.0] + [e for e, _, _ in STREETS_NS] + [east_max]
    edges_n = [0.0] + [n for n, _, _ in STREETS_EW] + [north_max]
    levels = ["2", "3", None, "4"]
    count = 0
    for e0, e1 in zip(edges_e, edges_e[1:]):
        for n0, n1 in zip(edges_n, edges_n[1:]):
            if e1 - e0 < 30 or n1 - n0 < 30:
                continue
            half = (e0 + e1) / 2
            for a, b in ((e0 + 9, half - 3), (half + 3, e1 - 9)):
                ring = [node(a, n0 + 9), node(b, n0 + 9), node(b, n1 - 9), node(a, n1 - 9)]
                tags = {"building": "yes"}
                storeys = levels[count % 4]
                if storeys:
                    tags["building:levels"] = storeys
                elif count % 2:
                    tags["height"] = "12.5"
                way(ring + ring[:1], tags)
                count += 1
    south, west = _latlon(0.0, 0.0)
    north, east = _latlon(east_max, north_max)
    return ("<?xml version='1.0' encoding='UTF-8'?>\n<osm version=\"0.6\" generator=\"usarsim.worldgen.town\">\n"
            f'  <bounds minlat="{south}" minlon="{west}" maxlat="{north}" maxlon="{east}"/>\n'
            + "\n".join(nodes + ways) + "\n</osm>\n")


if __name__ == "__main__":
    Path(sys.argv[1] if len(sys.argv) > 1 else "worlds/town.osm").write_text(town_osm(), encoding="utf-8")
