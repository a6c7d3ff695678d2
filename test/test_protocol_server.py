"""End-to-end tests of the USARSim protocol server over real TCP sockets (127.0.0.1, ephemeral port)."""
from __future__ import annotations

import math
import time

import pytest

from patience import PATIENCE
from protocol_client import Client, wait_removed
from usarsim.protocol import grammar as g
from usarsim.protocol.server import ProtocolServer
from usarsim.sim.simulator import Simulator


@pytest.fixture(scope="module")
def server():
    sim = Simulator("yellow", pacing="fast", seed=1)
    srv = ProtocolServer(sim, port=0, image_port=None)
    srv.start()
    yield srv
    srv.stop()
    sim.close()


@pytest.fixture
def client(server):
    before = set(server.sim.robots)
    c = Client(server.port)
    yield c
    c.close()
    for name in set(server.sim.robots) - before:  # the next test may reuse its name or place
        wait_removed(server.sim, name)


def test_nfo_on_connect_and_start_poses(client):
    first = client.line()
    assert first == "NFO {Gametype BotDeathMatch} {Level DM-USAR_yellow} {TimeLimit 0}"
    client.send("GETSTARTPOSES\r\n")
    poses = {p.tag: p for p in g.decode_start_poses(client.reply("NFO"))}
    assert set(poses) == {"Start1", "Start2", "Start3", "Start4"}
    # the manual's yellow start (§9.4), USARSim coordinates at the standard spawn height
    assert poses["Start1"].location == pytest.approx((4.5, 1.9, 1.8))
    assert poses["Start4"].rotation[2] == pytest.approx(-1.57, abs=0.01)


def test_init_start_streams_sta_and_sensors(server, client):
    client.line()
    client.init("INIT {ClassName USARBot.P2AT} {Name Alpha} {Start Start1}")
    assert "Alpha" in server.sim.robots
    seen: dict[str, g.Message] = {}
    wanted = {"STA", "MISSTA", "RangeScanner", "Odometry", "INS", "GPS", "Sonar"}
    deadline = time.monotonic() + PATIENCE
    while not wanted <= set(seen) and time.monotonic() < deadline:
        msg = g.parse_message(client.line())
        key = msg.get("Type") if msg.type == "SEN" else msg.type
        seen.setdefault(key, msg)
    assert wanted <= set(seen), set(seen)
    sta = seen["STA"]
    assert sta.get("Type") == "GroundVehicle"
    assert sta.get_float("Time") > 0 and sta.get_int("Battery") > 3000
    assert sta.get_bool("LightToggle") is False
    scan = seen["RangeScanner"]
    ranges = scan.get_floats("Range")
    assert len(ranges) == 181 and all(0.0 <= r <= 20.0 for r in ranges)
    assert scan.get_float("FOV") == pytest.approx(math.pi, abs=0.01)
    assert scan.get_float("Resolution") == pytest.approx(0.0174, abs=1e-4)
    x, y, theta = seen["Odometry"].get_vector("Pose")
    assert abs(x) < 0.2 and abs(y) < 0.2 and abs(theta) < 0.1
    loc = seen["INS"].get_vector("Location")
    assert loc[0] == pytest.approx(4.5, abs=0.3) and loc[1] == pytest.approx(1.9, abs=0.3)
    assert all(0.0 <= a < 2 * math.pi for a in seen["INS"].get_vector("Orientation"))
    gps = seen["GPS"]
    assert gps.get_int("Fix") in (0, 1) and gps.get_int("Satellites") >= 0
    if gps.get_int("Fix"):  # indoors (a roofed arena) there is no fix, hence no position
        lat, lon = g.decode_gps(gps)
        assert lat == pytest.approx(39.13, abs=0.01) and lon == pytest.approx(-77.22, abs=0.01)
    else:
        assert gps.get("Latitude") is None and gps.get_int("Satellites") < 4
    assert len(g.decode_range_readings(seen["Sonar"])) == 16
    assert seen["MISSTA"].get("Name") == "CameraPanTilt"


def test_drive_forward_moves_robot(server, client):
    client.line()
    client.init("INIT {ClassName USARBot.P2AT} {Name Driver} {Start Start2}")
    sim = server.sim
    x0 = sim.ground_truth("Driver").position[0]
    t0 = sim.time
    client.send("DRIVE {Left 4} {Right 4}\r\n")
    deadline = time.monotonic() + PATIENCE
    while sim.time < t0 + 2.0 and time.monotonic() < deadline:
        time.sleep(0.05)
    x1 = sim.ground_truth("Driver").position[0]
    assert x1 - x0 > 0.3
    client.send("DRIVE {Left 0} {Right 0} {Light true}\r\n")
    sta = client.wait(lambda l: l.startswith("STA ") and "LightToggle True" in l)
    assert "LightIntensity 100" in sta


def test_init_with_location_and_rotation(server, client):
    client.line()
    # SAE: y = 2.3 east is core y = -2.3; yaw +0.5 (clockwise) is core yaw -0.5; z 1.8 down is
    # the spawn height over the yellow floor (core z -1.988)
    client.init("INIT {ClassName USARBot.P2AT} {Name Placed} {Location 2.0,2.3,1.8} {Rotation 0,0,0.5}")
    truth = server.sim.ground_truth("Placed")
    assert truth.position[0] == pytest.approx(2.0, abs=0.05)
    assert truth.position[1] == pytest.approx(-2.3, abs=0.05)
    assert -1.988 < truth.position[2] < -1.8  # standing on the floor
    from usarsim import rotations
    assert rotations.euler_from_quaternion(truth.orientation)[2] == pytest.approx(-0.5, abs=0.05)


def test_default_name_and_second_init(server, client):
    client.line()
    client.init("INIT {ClassName USARBot.P2AT} {Location 3.0,0.8,1.8}")
    assert any(n.startswith("P2AT_") for n in server.sim.robots)
    client.send("INIT {ClassName USARBot.P2AT} {Location 3.0,-1.2,1.8}\r\n")
    err = client.reply("ERR")
    assert err.startswith("ERR {Command INIT}") and "already" in err


def test_geo_and_conf(client):
    client.line()
    client.init("INIT {ClassName USARBot.P2AT} {Name Geo} {Location 6,2.8,1.8}")
    client.send("GETGEO {Type Robot}\r\n")
    geo = g.parse_message(client.reply("GEO"))
    assert geo.get("Type") == "GroundVehicle"
    assert geo.get_vector("Dimensions") == pytest.approx((0.5, 0.49, 0.26))
    assert geo.get_float("WheelRadius") == pytest.approx(0.11)
    client.send("GETCONF {Type Robot}\r\n")
    conf = g.parse_message(client.reply("CONF"))
    assert conf.get("SteeringType") == "SkidSteered" and conf.get_float("Mass") == pytest.approx(14.0)
    client.send("GETGEO {Type Sonar}\r\n")
    sonar = g.parse_message(client.reply("GEO"))
    assert len(sonar.get_all("Name")) == 16
    client.send("GETGEO {Type RangeScanner}\r\n")
    scanner = g.parse_message(client.reply("GEO"))
    assert scanner.get("Name") == "Scanner" and scanner.get_vector("Location")[2] < 0  # above base: z down
    client.send("GETCONF {Type MisPkg}\r\n")
    mis = g.parse_message(client.reply("CONF"))
    assert mis.get("Name") == "CameraPanTilt" and mis.get_all("Link") == ("1", "2")
    client.send("GETGEO {Type MisPkg}\r\n")
    assert g.parse_message(client.reply("GEO")).get_all("ParentLink") == ("-1", "1")
    client.send("GETCONF {Type Camera}\r\n")
    cam = g.parse_message(client.reply("CONF"))
    assert cam.get_float("CameraDefFov") > 0
    assert geo.get("Name") == conf.get("Name") == "Geo"  # the robot's name, not its class
    # a type the robot does not carry gets USARSim's empty reply (Iridium asks every robot for Actuator)
    client.send("GETGEO {Type NoSuchThing}\r\n")
    assert client.reply("GEO") == "GEO {Type NoSuchThing}"
    client.send("GETCONF {Type Actuator}\r\n")
    assert client.reply("CONF") == "CONF {Type Actuator}"


def test_set_commands(client):
    client.line()
    client.init("INIT {ClassName USARBot.P2AT} {Name Setter} {Location 9,-1.2,1.8}")
    client.send("SET {Type Odometry} {Name Odometry} {Opcode RESET} {Params 1}\r\n")
    res = g.parse_message(client.reply("RES"))
    assert (res.get("Type"), res.get("Name"), res.get("Status")) == ("Odometry", "Odometry", "OK")
    client.send("SET {Type Sonar} {Name Nope} {Opcode RESET}\r\n")
    assert g.parse_message(client.reply("RES")).get("Status") == "Failed"
    client.send("SET {Type INS} {Name INS} {Opcode POSE} {Params 1,2,0,0,0,0.5}\r\n")
    assert g.parse_message(client.reply("RES")).get("Status") == "OK"
    ins = g.parse_message(client.wait(lambda l: l.startswith("SEN") and "{Type INS}" in l))
    assert ins.get_vector("Location")[:2] == pytest.approx((1.0, 2.0), abs=0.3)
    client.send("SET {Type INS} {Name INS} {Opcode POSE} {Params 1,2}\r\n")
    assert g.parse_message(client.reply("RES")).get("Status") == "Failed"
    client.send("SET {Type Camera} {Name Camera} {FOV 1}\r\n")
    cam = g.parse_message(client.reply("RES"))
    assert cam.get("Status") == "OK" and cam.get_float("FOV") == pytest.approx(1.0)
    client.send("MISPKG {Name CameraPanTilt} {Link 2} {Value 0.3}\r\n")
    missta = client.wait(lambda l: l.startswith("MISSTA") and "{Link 2} {Value 0.3" in l)
    assert "CameraPanTilt" in missta
    client.send("MISPKG {Name NoArm} {Link 1} {Value 0.3}\r\n")
    assert client.reply("RES").startswith("ERR {Command MISPKG}")
    client.send("DRIVE {Speed 1}\r\n")
    assert "Speed/FrontSteer/RearSteer_do_not_apply" in client.reply("RES")
    # the PanTilt reply carries the request's (SAE) signs
    client.send("SET {Type Camera} {Name Camera} {Opcode PanTilt} {Params 0.2,0.1}\r\n")
    pan_tilt = g.parse_message(client.reply("RES"))
    assert (pan_tilt.get("Status"), pan_tilt.get_float("Pan"), pan_tilt.get_float("Tilt")) == \
        ("OK", pytest.approx(0.2), pytest.approx(0.1))


def test_two_clients_and_disconnects(server):
    a, b = Client(server.port), Client(server.port)
    try:
        a.line(), b.line()
        a.init("INIT {ClassName USARBot.P2AT} {Name TwinA} {Location 1.5,0.3,1.8}")
        b.init("INIT {ClassName USARBot.P2AT} {Name TwinB} {Location 1.5,-2.2,1.8}")
        assert {"TwinA", "TwinB"} <= set(server.sim.robots)
        b.send("DRIVE {Left 2} {Ri")  # leaves mid-line
        b.close()
        wait_removed(server.sim, "TwinB")
        assert "TwinA" in server.sim.robots
        a.wait(lambda l: l.startswith("STA "))
        a.wait(lambda l: l.startswith("STA "))
    finally:
        a.close()
    wait_removed(server.sim, "TwinA")


@pytest.mark.parametrize("bad, word", [
    (b"DRIVE {Left 1\r\n", "DRIVE"),
    (b"FOO {a b}\r\n", "FOO"),
    (b"DRIVE {Left nan} {Right 1}\r\n", "DRIVE"),
    (b"DRIVE {Left 1e999}\r\n", "DRIVE"),
    (b"DRIVE {Left \xff\xfe}\r\n", "DRIVE"),
    (b"\xc3\x28\xa0\r\n", "UNKNOWN"),
    (b"GETGEO\r\n", "GETGEO"),
    (b"INIT {ClassName USARBot.NoSuchBot} {Location 1,1,0}\r\n", "INIT"),
])
def test_bad_input_gets_err_and_others_keep_going(server, bad, word):
    good, evil = Client(server.port), Client(server.port)
    try:
        good.line(), evil.line()
        good.init("INIT {ClassName USARBot.P2AT} {Name Good} {Location 11,2.8,1.8}")
        evil.send(bad)
        err = evil.reply("ERR")
        assert err.startswith(f"ERR {{Command {word}}} {{Reason ")
        evil.send("GETSTARTPOSES\r\n")  # the connection is still usable
        assert evil.reply("NFO").startswith("NFO {StartPoses 4}")
        good.wait(lambda l: l.startswith("STA "))
    finally:
        good.close()
        evil.close()
    wait_removed(server.sim, "Good")  # the next case spawns at the same place


def test_huge_line_without_newline(server):
    good, evil = Client(server.port), Client(server.port)
    try:
        good.line(), evil.line()
        good.init("INIT {ClassName USARBot.P2AT} {Location 11,0.8,1.8}")
        evil.send(b"DRIVE " + b"x" * (1 << 20))
        err = evil.reply("ERR")
        assert "newline" in err
        good.wait(lambda l: l.startswith("STA "))
        evil.send(b"tail of the long line\r\nGETSTARTPOSES\r\n")
        assert evil.reply("NFO").startswith("NFO {StartPoses")
    finally:
        good.close()
        evil.close()


def test_command_before_init(client):
    client.line()
    client.send("DRIVE {Left 1} {Right 1}\r\n")
    assert "INIT" in client.reply("ERR")


def test_slow_client_does_not_block(server):
    slow, fast = Client(server.port), Client(server.port)
    try:
        slow.line(), fast.line()
        slow.init("INIT {ClassName USARBot.P2AT} {Location 8,-4.2,1.8}")
        fast.init("INIT {ClassName USARBot.P2AT} {Location 10,-4.2,1.8}")
        t0 = server.sim.time
        deadline = time.monotonic() + PATIENCE
        while server.sim.time < t0 + 8.0 and time.monotonic() < deadline:  # slow reads nothing
            fast.line()
        assert server.sim.time >= t0 + 8.0
        slow.send("GETSTARTPOSES\r\n")
        assert slow.reply("NFO").startswith("NFO {StartPoses")  # replies are never dropped
    finally:
        slow.close()
        fast.close()


def test_ephemeral_port_and_restart():
    sim = Simulator("empty", pacing="realtime")
    try:
        with ProtocolServer(sim, port=0, image_port=None) as srv:
            assert srv.port > 0
            c = Client(srv.port)
            assert c.line().startswith("NFO {Gametype BotDeathMatch}")
            c.close()
    finally:
        sim.close()


def test_queue_drops_oldest_sen_first():
    from usarsim.protocol.outbox import Outbox

    box = Outbox(stream_limit=3, reply_limit=1000)
    for kind, line in [("STA", "STA 1"), ("SEN", "SEN 1"), ("SEN", "SEN 2"),
                       ("SEN", "SEN 3"),  # full: SEN 1 goes
                       ("RES", "RES 1"),  # replies do not count against the periodic limit
                       ("STA", "STA 2")]:  # full: SEN 2 goes
        assert box.put(kind, line)
    assert box.lines() == ["STA 1", "SEN 3", "RES 1", "STA 2"]
    assert box.dropped == 2 and len(box) == 4
    assert box.take(2) == ["STA 1", "SEN 3"] and box.streamed == 1 and box.reply_bytes == 5


def test_reply_overflow_is_refused():
    from usarsim.protocol.outbox import Outbox

    box = Outbox(stream_limit=3, reply_limit=12)
    assert box.put("ERR", "ERR 1 abcd") and not box.put("ERR", "ERR 2 abcd")
    assert box.lines() == ["ERR 1 abcd"]
    box.take(1)
    assert box.put("ERR", "ERR 2 abcd")  # room again once the client has read


def test_lockstep_waits_for_the_client():
    sim = Simulator("yellow", pacing="lockstep")
    try:
        with ProtocolServer(sim, port=0, image_port=None) as srv:
            c = Client(srv.port)
            c.line()
            c.init("INIT {ClassName USARBot.P2AT} {Start Start1}")
            times = []
            while len(times) < 15:
                line = c.line()
                if line.startswith("STA "):
                    times.append(g.parse_message(line).get_float("Time"))
            gaps = [b - a for a, b in zip(times, times[1:])]
            assert all(gap == pytest.approx(0.2, abs=0.011) for gap in gaps), gaps  # no STA dropped
            assert srv.connections == 1
            c.close()
    finally:
        sim.close()


def test_image_server_alongside_and_camera_selection():
    sim = Simulator("empty", pacing="realtime")
    try:
        with ProtocolServer(sim, port=0, image_port=0) as srv:
            assert srv.image_server is not None and srv.image_port == srv.image_server.port > 0
            c = Client(srv.port)
            c.line()
            c.init("INIT {ClassName USARBot.P2AT} {Name Cam} {Location 0,0,0}")
            c.send("SET {Type Camera} {Robot Cam} {Name Camera} {Client 10.0.0.2}\r\n")
            assert g.parse_message(c.reply("RES")).get("Status") == "OK"
            c.send("SET {Type Camera} {Robot Ghost} {Name Camera} {Client 10.0.0.2}\r\n")
            assert g.parse_message(c.reply("RES")).get("Status") == "Failed"
            c.close()
        assert srv.image_server is None
    finally:
        sim.close()


def test_init_failures_are_clear_and_trace_is_accepted(server, client):
    client.line()
    client.send("INIT {ClassName USARBot.P2AT} {Name Nowhere} {Location 100,100,1.8}\r\n")
    assert "no_floor" in client.reply("ERR")
    client.send("INIT {ClassName USARBot.P2AT} {Name InWall} {Location 7.55,1.9,1.8}\r\n")  # wall W1
    assert "inside_box_'W1'" in client.reply("ERR")
    assert "Nowhere" not in server.sim.robots and "InWall" not in server.sim.robots
    client.init("INIT {ClassName USARBot.P2AT} {Name Tracer} {Location 4.5,1.9,1.8}")
    client.send("TRACE {On true} {Interval 0.2} {Color Green}\r\n")
    client.send("DRIVE {Left 2} {Right 2}\r\n")
    deadline = time.monotonic() + PATIENCE
    while len(server.sim.robots["Tracer"].trace.points) < 3:
        assert time.monotonic() < deadline, "no trace points"
        time.sleep(0.05)
    assert server.sim.robots["Tracer"].trace.color == "Green"
    client.send("GETGEO {Type Robot}\r\n")
    assert client.reply("GEO").startswith("GEO {Type GroundVehicle} {Name Tracer}")  # no ERR for TRACE before


def test_unreal_units_and_udk_dialect():
    sim = Simulator("yellow", pacing="fast", seed=2)
    srv = ProtocolServer(sim, port=0, image_port=None, units="unreal", dialect="udk")
    srv.start()
    c = Client(srv.port)
    try:
        c.line()
        c.send("GETSTARTPOSES\r\n")
        assert c.reply("NFO").startswith("NFO {StartPoses 4} {Start1 1125.00,475.00,450.00 0,0,0 ")
        c.init("INIT {ClassName USARBot.P2AT} {Name UU} {Location 1125,475,450} {Rotation 0,0,16384}")
        truth = sim.ground_truth("UU")
        assert truth.position[:2] == pytest.approx((4.5, -1.9), abs=0.02)
        assert abs(math.degrees(2 * math.atan2(truth.orientation[2], truth.orientation[3]))) == \
            pytest.approx(90.0, abs=1.0)  # 16384 UU = 90 degrees (SAE yaw right = core -90)
        sta = c.wait(lambda l: l.startswith("STA"))
        assert sta.startswith("STA {Time ") and "{Battery " in sta and "{View" not in sta  # UDK order
        sonar = c.wait(lambda l: l.startswith("SEN") and "{Type Sonar}" in l)
        assert sonar.count("{Name ") == 1 and "} {Range " in sonar  # one line per sonar, UU ranges
        assert float(sonar.rsplit("{Range ", 1)[1].rstrip("}")) > 5.0
        c.send("GETGEO {Type RangeScanner}\r\n")
        geo = c.reply("GEO")
        assert "{Orientation 0,0,0}" in geo  # integer rotator units
    finally:
        c.close()
        srv.stop()
        sim.close()
