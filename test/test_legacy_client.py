"""A client that parses the way USARSim 3.x controllers did, against the real server.

Those clients (e.g. a public Java controller library) cut lines with ``split("} {")``,
read fields at fixed positions, look values up with ``indexOf(key)`` up to the next
``}``, and parse integer fields as integers: any missing segment, extra blank or
float where an int belongs throws. The exchange: INIT at the manual's yellow start,
DRIVE, every sensor type of the default P2AT and of a tracked robot (Kenaf), GEO/CONF,
stop. Every line received must parse.
"""
from __future__ import annotations

import socket
import time

import pytest

from protocol_client import wait_removed
from usarsim.protocol.server import ProtocolServer
from usarsim.sim.catalogue import load_robot
from usarsim.sim.simulator import Simulator
from patience import PATIENCE


def partial(line: str, key: str) -> str:
    """The Java clients' Utils.partialString: text after ``key`` up to the next '}'."""
    i = line.index(key) + len(key)
    return line[i + 1:line.index("}", i)]


def parse_sta(line: str) -> dict:
    body = line[line.index("GroundVehicle"):]
    return {"FrontSteer": float(partial(body, "FrontSteer")), "RearSteer": float(partial(body, "RearSteer")),
            "LightToggle": partial(body, "LightToggle") in ("True", "False"),
            "LightIntensity": int(partial(body, "LightIntensity")), "Battery": int(partial(body, "Battery")),
            "View": int(partial(body, "View"))}


def _vec(text: str, n: int = 3) -> list[float]:
    values = [float(v) for v in text.split(",")]
    assert len(values) == n, text
    return values


def parse_sen(line: str) -> tuple[str, object]:
    """Sensor type and its values, read by position as the old clients did."""
    sensor_type = partial(line, "Type")
    s = line[line.index(sensor_type):].rstrip("}").split("} {")
    name = s[1].split(" ")[1]
    if sensor_type in ("Sonar", "IR"):  # {Name F1 Range 4.4690} ...
        return sensor_type, {seg.split(" ")[1]: float(seg.split(" ")[3]) for seg in s[1:]}
    if sensor_type == "RangeScanner":  # {Name} {Resolution} {FOV} {Range ...}
        assert s[2].startswith("Resolution ") and s[3].startswith("FOV ") and s[4].startswith("Range ")
        return sensor_type, (float(s[2].split(" ")[1]), float(s[3].split(" ")[1]),
                             [float(v) for v in s[4].split(" ")[1].split(",")])
    if sensor_type == "Odometry":  # {Name} {Pose x,y,theta}
        return sensor_type, _vec(s[2].split(" ")[1])
    if sensor_type in ("INS", "GroundTruth"):  # {Name} {Location} {Orientation}
        assert s[2].startswith("Location ") and s[3].startswith("Orientation ")
        return sensor_type, (_vec(s[2].split(" ")[1]), _vec(s[3].split(" ")[1]))
    if sensor_type == "GPS":  # {Name} {Latitude d,m,N} {Longitude d,m,W} {Fix i} {Satellites i}
        if int(partial(line, "Fix")) == 0:  # the Java GPSInterface: no fix, no position; Satellites last
            return sensor_type, (int(partial(line, "Satellites")),)
        lat, lon = s[2].split(" ")[1].split(","), s[3].split(" ")[1].split(",")
        return sensor_type, (int(lat[0]), float(lat[1]), lat[2], int(lon[0]), float(lon[1]), lon[2],
                             int(s[4].split(" ")[1]), int(s[5].split(" ")[1]))
    if sensor_type == "Encoder":  # {Name n Tick t} ...
        return sensor_type, {seg.split(" ")[1]: int(seg.split(" ")[3]) for seg in s[1:]}
    if sensor_type == "Touch":
        return sensor_type, {seg.split(" ")[1]: seg.split(" ")[3] in ("True", "False") for seg in s[1:]}
    if sensor_type == "VictSensor":  # the Java client's VictimInterface, step by step
        status = partial(s[2], "Status") if "Status" in s[2] else ""
        parts = []
        if status == "":
            for i in range(0, len(s) - 2, 2):
                part = s[2 + i].split(" ")[1]
                loc = s[3 + i].split(",")
                parts.append((part, float(loc[0].split(" ")[1]), float(loc[1]), float(loc[2])))
        return sensor_type, (name, status, parts)
    return sensor_type, s[1:]


def parse_geo_robot(line: str) -> dict:
    return {"Name": partial(line, "{Name"), "WheelBase": float(partial(line, "WheelBase")),
            "WheelRadius": float(partial(line, "WheelRadius"))}


class OldClient:
    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=PATIENCE)
        self.file = self.sock.makefile("rb")
        self.parsed: dict[str, list] = {}

    def send(self, text: str) -> None:
        self.sock.sendall((text + "\r\n").encode("ascii"))

    def read(self) -> str:
        raw = self.file.readline()
        assert raw.endswith(b"\r\n"), raw[:80]
        line = raw[:-2].decode("ascii")
        kind = line.split(" ", 1)[0]
        if kind == "STA":
            self.parsed.setdefault("STA", []).append(parse_sta(line))
        elif kind == "SEN":
            sensor_type, values = parse_sen(line)
            self.parsed.setdefault(sensor_type, []).append(values)
        return line

    def until(self, pred, limit: float = PATIENCE) -> str:
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            line = self.read()
            if pred(line):
                return line
        raise TimeoutError("expected line never came")

    def close(self) -> None:
        self.file.close()
        self.sock.close()


@pytest.fixture(scope="module")
def server():
    with Simulator("yellow", pacing="fast", seed=3) as sim, ProtocolServer(sim, port=0, image_port=None) as srv:
        yield srv


def _sensor_types(class_name: str) -> set[str]:
    # every type that sends SEN lines (images go to the image server)
    return {s.type for s in load_robot(class_name).sensors if s.type != "Camera"}


@pytest.mark.parametrize("class_name, location", [("P2AT", "4.5,1.9,1.8"), ("Kenaf", "4.5 1.9 1.8")])
def test_old_positional_client_runs_a_full_exchange(server, class_name, location):
    client = OldClient(server.port)
    try:
        assert client.read().startswith("NFO {Gametype")
        client.send("GETSTARTPOSES")
        assert client.until(lambda l: l.startswith("NFO")).startswith("NFO {StartPoses 4} {Start1 4.50,1.90,1.80 ")
        client.send(f"INIT {{ClassName USARBot.{class_name}}} {{Name Old{class_name}}} {{Location {location}}} "
                    f"{{Rotation 0,0,0}}")
        client.until(lambda l: l.startswith("STA"))
        client.send("DRIVE {Left 1.0} {Right 1.0}")
        wanted = _sensor_types(class_name)
        client.until(lambda l: wanted <= set(client.parsed), PATIENCE)
        client.send("GETGEO {Type Robot}")
        geo = parse_geo_robot(client.until(lambda l: l.startswith("GEO")))
        assert geo["Name"] == f"Old{class_name}" and geo["WheelRadius"] > 0
        client.send("GETCONF {Type Actuator}")
        assert client.until(lambda l: l.startswith("CONF")) == "CONF {Type Actuator}"
        client.send("DRIVE {Left 0} {Right 0} {Speed 0} {AltitudeVelocity 0} {LinearVelocity 0} "
                    "{LateralVelocity 0} {RotationalVelocity 0}")
        for _ in range(50):  # more streamed lines, all parsed, none an ERR
            assert not client.read().startswith("ERR")
        assert all(sta["View"] == -1 for sta in client.parsed["STA"])
    finally:
        client.close()
    truth = server.sim.robots.get(f"Old{class_name}")
    assert truth is None or truth.base.position[2] > server.sim.spec.floor.z  # it stood on the arena floor
    wait_removed(server.sim, f"Old{class_name}")  # the next case spawns at the same place
