"""Which USARSim generation a connection speaks: the UT2004 releases (3.1.x, the manual) or the UDK tree.

The two differ in the layout of several messages (docs/protocol.md, "Two eras"); the formatters
take the dialect, this module decides it. Under ``auto`` (the server's default) a connection speaks
UT2004 until its INIT names a class that only the UDK release has (``USARBot.P3AT``): the INIT line
is the same in both generations (``BotConnection.uc`` reads ClassName, Name, Location, Rotation,
Start like the manual), vector separators and the command set are shared, so the class is what
tells a UDK client apart.
"""
from __future__ import annotations

import dataclasses

from usarsim.protocol.grammar import DIALECTS
from usarsim.sim.catalogue import UDK_CLASSES, RobotSpec, bare_class_name

UT2004, UDK, AUTO = "ut2004", "udk", "auto"
SERVER_DIALECTS = DIALECTS + (AUTO,)  # what --dialect accepts

# UDK's DefaultUSAR.ini: [USARSensor.Sensor] bWithTimeStamp=true for every sensor, false for these.
_UDK_UNSTAMPED = frozenset({"INS", "GPS"})


def of_init(class_name: str, server_dialect: str) -> str:
    """The dialect of a connection whose INIT names ``class_name`` on a server run with ``server_dialect``."""
    if server_dialect != AUTO:
        return server_dialect
    bare = bare_class_name(class_name).lower()
    return UDK if any(bare == udk.lower() for udk in UDK_CLASSES) else UT2004


def as_asked(spec: RobotSpec, class_name: str) -> RobotSpec:
    """The robot as its client knows it: a UDK class that spawned a catalogue robot keeps the UDK
    name in GEO/CONF (``{Name P3AT}``, ``{Mount P3AT}``)."""
    bare = bare_class_name(class_name)
    udk = next((name for name in UDK_CLASSES if name.lower() == bare.lower()), None)
    return spec if udk is None else dataclasses.replace(spec, class_name=udk)


def before_init(server_dialect: str) -> str:
    """The dialect of a connection that has not sent INIT yet (the manual's, unless forced)."""
    return UT2004 if server_dialect == AUTO else server_dialect


def stamped(dialect: str, sensor_type: str, with_timestamp: bool) -> bool:
    """Whether a sensor's SEN lines carry ``{Time t}``: its catalogue ``with_timestamp`` (the manual's
    bWithTimeStamp) under UT2004, UDK's defaults under UDK."""
    if dialect == UDK:
        return sensor_type not in _UDK_UNSTAMPED
    return with_timestamp
