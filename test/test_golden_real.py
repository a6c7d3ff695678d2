"""Golden lines from real USARSim servers and sources, against what this server emits.

Sources (public; quoted as data):
- [FX] the transcript in shared/spec/fixtures/usarsim-udk-sample.txt (a later USARSim-protocol server);
- [J] USARSim 3.x lines quoted in a public Java controller library's parsers (maldo/USARSimController);
- [RI] lines quoted in NIST's usarsim_inf ROS bridge (usarsimInf.cpp comments);
- [UDK] the UDK UnrealScript (hrnr/robocup-usarsim: WheeledVehicle.uc, Sensor.uc, GPSSensor.uc, Odometry.uc).

Where the numbers can be reproduced the line must match byte for byte; otherwise its
layout (message type, then the field names of each segment in order) must match.
Where the real versions differ from each other, docs/protocol.md says which we follow.
"""
import re

import pytest

from usarsim.protocol import grammar as g
from usarsim.protocol import messages as pm
from usarsim.sim import readings as rd
from usarsim.sim.catalogue import load_robot

_SEGMENT = re.compile(r"\{([^{}]*)\}")


def layout(line: str) -> tuple:
    """(TYPE, (names of segment 1), (names of segment 2), ...): what positional parsers depend on."""
    segments = []
    for body in _SEGMENT.findall(line):
        tokens = re.sub(r",\s+", ",", body).split()
        segments.append(tuple(tokens[0::2]))
    return (line.split()[0], *segments)


H = {"time": 19.07, "robot": "R1", "frame": "base_link"}

BYTE_EXACT = [
    # [J] GroundStateInterface: USARSim 3.x STA of a ground vehicle
    ("STA {Type GroundVehicle} {Time 19.07} {FrontSteer 0.0000} {RearSteer 0.0000} {LightToggle False} "
     "{LightIntensity 0} {Battery 1192} {View -1}",
     lambda: g.format_sta("GroundVehicle", 19.07, light_toggle=False, light_intensity=0, battery=1192,
                          front_steer=0.0, rear_steer=0.0)),
    # [J] AerialStateInterface
    ("STA {Type AerialVehicle} {Time 268.50} {LightToggle False} {LightIntensity 0} {Battery 1192} {View -1}",
     lambda: g.format_sta("AerialVehicle", 268.5, light_toggle=False, light_intensity=0, battery=1192)),
    # [RI] handleSenRangescanner
    ("SEN {Time 5608.85} {Type RangeScanner} {Name Scanner1} {Resolution 0.0174} {FOV 3.1415} "
     "{Range 11.3059,11.3014,11.3002}",
     lambda: g.format_sen_range_scanner("Scanner1", 0.0174, 3.1415, [11.3059, 11.3014, 11.3002], time=5608.85)),
    # [UDK] GPSSensor.uc header comment
    ("SEN {Type GPS} {Name GPS1} {Latitude 47,40.3323,N} {Longitude 122,18.5977,W} {Fix 1} {Satellites 8}",
     lambda: g.format_sen_gps("GPS1", 47 + 40.3323 / 60, -(122 + 18.5977 / 60), 1, 8)),
    # [RI] handleSenTouch
    ("SEN {Type Touch} {Name Touch Touch False}", lambda: g.format_sen_touch([("Touch", False)])),
    # [RI] handleSenSonar (two of its sixteen)
    ("SEN {Time 5608.85} {Type Sonar} {Name F1 Range 2.5098} {Name F2 Range 3.3153}",
     lambda: g.format_sen_sonar([("F1", 2.5098), ("F2", 3.3153)], time=5608.85)),
    # [FX] the first line a client gets
    ("NFO {Gametype BotDeathMatch} {Level EmptyRoom} {TimeLimit 20}",
     lambda: g.format_nfo_game("BotDeathMatch", "EmptyRoom", 20)),
]


@pytest.mark.parametrize("golden, make", BYTE_EXACT, ids=[l.split("}")[0] for l, _ in BYTE_EXACT])
def test_real_lines_byte_for_byte(golden, make):
    assert make() == golden + "\r\n"


def _victim(parts):
    return rd.VictimReading(sensor="VictimSensor", parts=tuple(rd.VictimPartSeen(p, xyz, "V1") for p, xyz in parts),
                            **H)


SAME_LAYOUT = [
    # [FX] UDK-era STA (the server's --dialect udk)
    ("STA {Time 477.7582} {Battery 99999} {Type GroundVehicle} {LightToggle False} {LightIntensity 100} "
     "{FrontSteer 0} {RearSteer 0}",
     lambda: g.format_sta("GroundVehicle", 477.76, light_toggle=False, light_intensity=100, battery=99999,
                          front_steer=0.0, rear_steer=0.0, dialect="udk")),
    # [J] VictimInterface: parts as separate segments
    ("SEN {Type VictSensor} {Name VictimSensor} {PartName Leg} {Location 2.05,0.33,0.46} {PartName Arm} "
     "{Location 2.51,0.44,0.39}",
     lambda: pm.format_reading(_victim([("Leg", (2.05, -0.33, -0.46)), ("Arm", (2.51, -0.44, -0.39))]))),
    # [RI] ground truth with time stamp
    ("SEN {Time 5608.8500} {Type GroundTruth} {Name GroundTruth} {Location 12.61,-2.68,1.64} "
     "{Orientation 0.00,6.23,0.00}",
     lambda: g.format_sen_ground_truth("GroundTruth", (12.61, -2.68, 1.64), (0.0, 6.23, 0.0), time=5608.85)),
    # [FX] INS without time stamp
    ("SEN {Type INS} {Name InsTest} {Location 0.00,0.00,-0.20} {Orientation 0.00,0.00,0.00}",
     lambda: g.format_sen_ins("InsTest", (0.0, 0.0, -0.2), (0.0, 0.0, 0.0))),
    # [RI] / [UDK] Odometry.uc
    ("SEN {Time 44.5467} {Type Odometry} {Name Odometer} {Pose 0.0000,0.0000,0.0000}",
     lambda: g.format_sen_odometry("Odometer", (0.0, 0.0, 0.0), time=44.55)),
    # [FX] UDK encoders, one line each (the server's --dialect udk)
    ("SEN {Time 477.7582} {Type Encoder} {Name W1} {Tick 0}",
     lambda: pm.format_reading(rd.EncoderReading(sensor="W1", ticks=0, joint="w1", resolution=0.01, **H), True, "udk")),
    # [UDK] RangeSensor.uc: one line per sonar in the UDK release (--dialect udk)
    ("SEN {Time 5608.85} {Type Sonar} {Name F1} {Range 2.5098}",
     lambda: pm.format_reading(rd.RangeReading(sensor="F1", sensor_type="Sonar", range=2.5098, range_min=0.1,
                                                range_max=5.0, field_of_view=0.35, **H), True, "udk")),
    # [UDK] WheeledVehicle.GetGeoData
    ("GEO {Type GroundVehicle} {Name P3AT} {Dimensions 0.2480,0.3600,0.0000} {COG 0.0000,0.0000,0.0000} "
     "{WheelRadius 0.0980} {WheelSeparation 0.3600} {WheelBase 0.2480}",
     lambda: pm.geo_robot(load_robot("P2AT"), "R1")),
    # [FX] / [UDK] Sensor.GetGeoData: one segment per field
    ("GEO {Type RangeScanner} {Name lms200} {Location 0.21,-0.00,-0.20} {Orientation 0.00,-0.00,-0.00} {Mount P3AT}",
     lambda: pm.geo_sensors(load_robot("P2AT"), "R1", "RangeScanner")),
]


@pytest.mark.parametrize("golden, make", SAME_LAYOUT, ids=[l[:40] for l, _ in SAME_LAYOUT])
def test_real_lines_same_layout(golden, make):
    assert layout(make()) == layout(golden)


def test_empty_victim_reading_parses_as_real_clients_expect():
    # [RI] USARSim 3.x without a victim in view: SEN {Time t} {Type VictSensor} {Status NoVictims}.
    # [J] reads the sensor name from the segment after Type and Status from the one after that, so
    # the server names the sensor first; the Status segment is the real one.
    line = pm.format_reading(_victim([]), True)
    assert line == "SEN {Time 19.07} {Type VictSensor} {Name VictimSensor} {Status NoVictims}\r\n"
    real = layout("SEN {Time 5609.4467} {Type VictSensor} {Status NoVictims}")
    assert tuple(seg for seg in layout(line) if seg != ("Name",)) == real


@pytest.mark.parametrize("golden", [
    # [FX] (that server puts Name before Type; the UDK source and this server put Type first)
    "GEO  {Name P3AT} {Type GroundVehicle} {Dimensions 0.2480,0.3600,0.0000} {COG 0.0000,0.0000,0.0000} "
    "{WheelRadius 0.0980} {WheelSeparation 0.3600} {WheelBase 0.2480}",
    "CONF {Name P3AT} {Type GroundVehicle} {SteeringType SkidSteered} {Mass 11.9000} {MaxSpeed 1.2999} "
    "{MaxTorque 50000.0000} {MaxFrontSteer 0} {MaxRearSteer 0}",
])
def test_real_robot_geo_conf_have_the_same_fields(golden):
    spec = load_robot("P2AT")
    ours = pm.geo_robot(spec, "R1") if golden.startswith("GEO") else pm.conf_robot(spec, "R1")
    assert sorted(layout(ours)[1:]) == sorted(layout(golden)[1:])


@pytest.mark.parametrize("golden, sensor_type", [
    # [RI] CONF lines: the real keys appear, in the real order (ours may carry more)
    ("CONF {Type Sonar} {Name R8} {MaxRange 5.0000} {MinRange 0.1000} {BeamAngle 0.3491}", "Sonar"),
    ("CONF {Type Odometry} {Name Odometry} {ScanInterval 0.2000} {EncoderResolution 0.0099}", "Odometry"),
    ("CONF {Type INS} {Name INS} {ScanInterval 0.20}", "INS"),
    ("CONF {Type GPS} {Name GPS} {ScanInterval 0.20}", "GPS"),
])
def test_real_conf_keys_are_present_in_order(golden, sensor_type):
    name = g.parse_message(golden).get("Name")
    ours = [seg[0] for seg in layout(pm.conf_sensors(load_robot("P2AT"), sensor_type, name))[1:]]
    real = [seg[0] for seg in layout(golden)[1:]]
    assert [k for k in ours if k in real] == real
