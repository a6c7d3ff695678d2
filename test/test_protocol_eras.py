"""One server, two generations of clients at the same time, each parsing as the real ones did.

The UT2004-era client reads GEO token by token as the Player USARSim driver's ``us_get_laser_geom_all``
does (``{Type`` ``RangeScanner}`` then ``{Name`` name ``Location`` x,y,z ``Orientation`` r,p,y ``Mount``
m``}``: a name read as ``Scanner}`` is an unknown laser) and CONF by walking ``{Name`` segments for
``{MaxRange``, ``{Resolution``, ``{Fov`` (``us_get_laser_config_all``). The UDK-era client takes segments
by position (``} {`` / ``}{`` split) as league agents written for the UDK release did: GEO
Type, Name, Location, Orientation, Mount; SEN lines of stamped sensors start with ``{Time t}``. Both run
a full exchange against one server with the default ``--dialect auto``.
"""
from __future__ import annotations

import re
import threading

import pytest

from protocol_client import Client
from usarsim.protocol.server import ProtocolServer
from usarsim.sim.simulator import Simulator
from patience import PATIENCE



def ut2004_laser_geometry(line: str) -> dict[str, tuple[float, ...]]:
    """Player's us_get_laser_geom_all: whitespace tokens, fixed order, one segment per laser."""
    tokens = line.split()
    assert tokens[:3] == ["GEO", "{Type", "RangeScanner}"], line
    lasers, i = {}, 3
    while i < len(tokens):
        assert tokens[i] == "{Name", line
        name = tokens[i + 1]
        assert not name.endswith("}"), f"name read as {name!r}: {line}"
        assert tokens[i + 2] == "Location" and tokens[i + 4] == "Orientation" and tokens[i + 6] == "Mount", line
        location = tuple(float(v) for v in tokens[i + 3].split(","))
        orientation = tuple(float(v) for v in tokens[i + 5].split(","))
        assert tokens[i + 7].endswith("}"), line
        lasers[name] = location + orientation
        i += 8
    return lasers


def ut2004_laser_config(line: str) -> dict[str, tuple[float, float, float]]:
    """Player's us_get_laser_config_all: from each {Name, the first {MaxRange, {Resolution and {Fov."""
    def value(text: str, key: str) -> float:
        start = text.index("{" + key + " ") + len(key) + 2
        return float(text[start:text.index("}", start)])

    out, pos = {}, 0
    while (pos := line.find("{Name", pos)) >= 0:
        name = line[pos + 6:line.index("}", pos)]
        rest = line[pos:]
        out[name] = (value(rest, "MaxRange"), value(rest, "Resolution"), value(rest, "Fov"))
        pos += 5
    return out


def udk_segments(line: str) -> list[str]:
    """A UDK agent's split: the segments' bodies in order, whether or not a blank separates them."""
    return re.findall(r"\{([^{}]*)\}", line)


def udk_value(segment: str, key: str) -> str:
    name, _, value = segment.partition(" ")
    assert name == key, f"expected {key}, got {segment!r}"
    return value


class Era(threading.Thread):
    """Runs one client's exchange in its own thread and keeps what went wrong."""

    def __init__(self, port: int, script) -> None:
        super().__init__(daemon=True)
        self.client = Client(port, timeout=PATIENCE)
        self.script = script
        self.error: BaseException | None = None
        self.seen: dict[str, str] = {}

    def run(self) -> None:
        try:
            self.script(self)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            self.error = exc
        finally:
            self.client.close()

    def sen(self, sensor_type: str) -> str:
        return self.client.wait(lambda l: l.startswith("SEN ") and "{Type " + sensor_type + "}" in l)

    def ask(self, key: str, query: str) -> None:
        """Send GETGEO/GETCONF and keep its reply (or the ERR that came instead)."""
        self.client.send(query + "\r\n")
        self.seen[key] = self.client.reply(query.split(" ", 1)[0][3:])

    def begin(self, init: str) -> None:
        """Connect, spawn, and ask for the laser's geometry and configuration, as a driver does first."""
        assert self.client.line().startswith("NFO {Gametype")
        self.client.init(init)
        self.ask("geo", "GETGEO {Type RangeScanner}")
        self.ask("conf", "GETCONF {Type RangeScanner}")


def ut2004_exchange(era: Era) -> None:
    era.begin("INIT {ClassName USARBot.P2AT} {Name Old} {Location 4.5,1.9,1.8}")
    era.client.send("DRIVE {Name LeftFWheel} {Order 1} {Value 0.175}\r\n")  # the manual's §9.4 example
    era.ask("after drive", "GETCONF {Type Robot}")  # an ERR for the DRIVE would come first
    era.seen["sta"] = era.client.wait(lambda l: l.startswith("STA "))
    era.seen["truth"] = era.sen("GroundTruth")


def udk_exchange(era: Era) -> None:
    era.begin("INIT {ClassName USARBot.P3AT} {Name Agent} {Start Start2}")
    era.ask("robot", "GETCONF {Type Robot}")
    era.seen["sta"] = era.client.wait(lambda l: l.startswith("STA "))
    for key, sensor_type in (("truth", "GroundTruth"), ("scan", "RangeScanner"), ("ins", "INS")):
        era.seen[key] = era.sen(sensor_type)


@pytest.fixture(scope="module")
def server():
    with Simulator("yellow", pacing="fast", seed=5) as sim, ProtocolServer(sim, port=0, image_port=None) as srv:
        yield srv


def test_both_eras_at_once_on_one_server(server):
    old, new = Era(server.port, ut2004_exchange), Era(server.port, udk_exchange)
    old.start()
    new.start()
    old.join(4 * PATIENCE)
    new.join(4 * PATIENCE)
    assert not old.is_alive() and not new.is_alive()
    assert old.error is None, repr(old.error)
    assert new.error is None, repr(new.error)

    # UT2004: the laser is found under its name, at its mount (SAE: z down), and configured
    lasers = ut2004_laser_geometry(old.seen["geo"])
    assert list(lasers) == ["Scanner"] and lasers["Scanner"][:3] == pytest.approx((0.2, 0.0, -0.1))
    assert old.seen["geo"].endswith("Mount HARD}")
    assert ut2004_laser_config(old.seen["conf"]) == {"Scanner": pytest.approx((20.0, 0.0174, 3.1416))}
    assert old.seen["after drive"].startswith("CONF {Type GroundVehicle} {Name Old}")
    assert old.seen["sta"].startswith("STA {Type GroundVehicle} {Time ") and old.seen["sta"].endswith("{View -1}")
    assert not old.seen["truth"].startswith("SEN {Time")  # the catalogue's GroundTruth is not stamped

    # UDK: segments by position, the class it asked for, Time stamps as DefaultUSAR.ini gives them
    geo = udk_segments(new.seen["geo"])
    assert [s.split(" ")[0] for s in geo] == ["Type", "Name", "Location", "Orientation", "Mount"]
    assert udk_value(geo[4], "Mount") == "P3AT" and "}{Mount" in new.seen["geo"]
    conf = udk_segments(new.seen["conf"])
    assert [s.split(" ")[0] for s in conf] == ["Type", "Name", "MaxRange", "MinRange", "Resolution", "Fov",
                                               "Panning", "Tilting"]
    assert udk_segments(new.seen["robot"])[:2] == ["Name P3AT", "Type GroundVehicle"]
    sta = udk_segments(new.seen["sta"])
    assert re.fullmatch(r"\d+\.\d{4}", udk_value(sta[0], "Time")) and sta[1].startswith("Battery ")
    for key in ("truth", "scan"):
        segments = udk_segments(new.seen[key])
        assert re.fullmatch(r"\d+\.\d{4}", udk_value(segments[0], "Time")), new.seen[key]
    truth = udk_segments(new.seen["truth"])
    assert [s.split(" ")[0] for s in truth[1:]] == ["Type", "Name", "Location", "Orientation"]
    assert udk_segments(new.seen["ins"])[0] == "Type INS"  # INS is not stamped in UDK
