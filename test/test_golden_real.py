"""Golden lines of both USARSim generations, from their real sources, against what this server emits.

UT2004 era (USARSim 3.1.x, the manual):
- [M] the manual's §9 grammar and examples (one GEO segment per sensor, ``Mount HARD``);
- [RI] USARSim 3.x lines quoted in NIST's usarsim_inf bridge (usarsimInf.cpp, its parsers' comments);
- [J] lines a public Java 3.x controller library parses (maldo/USARSimController);
UDK era:
- [UDK] the UDK UnrealScript (hrnr/robocup-usarsim: Sensor.uc, Item.uc, RangeSensor.uc, RangeScanner.uc,
  WheeledVehicle.uc, USARCamera.uc, GPSSensor.uc, Odometry.uc, Encoder.uc, DefaultUSAR.ini);
- [FX] the transcript of a real UDK-era server in shared/spec/fixtures/usarsim-udk-sample.txt.

``form()`` keeps what a positional parser depends on, byte for byte: the message word, each segment's keys
in order, and the exact text between segments (``} {`` or ``}{``); values become ``_``. Where the numbers
can be reproduced the whole line must match byte for byte. The table in docs/protocol.md lists them.
"""
import re

import pytest

from usarsim.protocol import dialect as eras
from usarsim.protocol import grammar as g
from usarsim.protocol import messages as pm
from usarsim.sim import readings as rd
from usarsim.sim.catalogue import load_robot

_SEGMENT = re.compile(r"\{([^{}]*)\}")


def form(line: str) -> str:
    """The line with every value replaced by ``_``: keys, order, braces and blanks kept."""
    def keys_only(match: re.Match) -> str:
        tokens = re.sub(r",\s+", ",", match.group(1)).split()
        return "{" + " ".join(f"{key} _" for key in tokens[0::2]) + "}"
    return _SEGMENT.sub(keys_only, line.rstrip("\r\n").replace("  ", " "))


H = {"time": 477.7582, "robot": "R1", "frame": "base_link"}
P2AT = load_robot("P2AT")
P3AT = eras.as_asked(P2AT, "USARBot.P3AT")  # what a UDK client that sent INIT {ClassName USARBot.P3AT} sees
ENCODER = next(s.name for s in load_robot("P2DX").sensors if s.type == "Encoder")


def _truth() -> rd.GroundTruthReading:
    return rd.GroundTruthReading(sensor="GndTruth", position=(0.0, 0.0, -0.017), orientation=(0.0, 0.0, 0.0, 1.0),
                                 linear_velocity=(0, 0, 0), angular_velocity=(0, 0, 0), **H)


def _gps(fix: bool) -> rd.GpsReading:
    return rd.GpsReading(sensor="GPS", latitude=39.1338, longitude=-77.2166, altitude=0.0, fix=fix,
                         satellites=8 if fix else 2, horizontal_sigma=1.0, **H)


def _lines(readings, dialect):
    """What the server sends for one robot's readings, stamped as that era stamps them."""
    types = {r.sensor: getattr(r, "sensor_type", r.kind) for r in readings}
    return pm.format_robot_readings(readings, lambda s: eras.stamped(dialect, types[s], False), dialect)


# (era, source, real line, what we send)
SAME_FORM = [
    # ---------------------------------------------------------------- UT2004
    ("ut2004", "[M] §9 GEO", "GEO {Type RangeScanner} {Name Scanner1 Location 0.1439,0.0000,-0.0920 "
     "Orientation 0.0000,0.0000,0.0000 Mount HARD}", lambda: pm.geo_sensors(P2AT, "RangeScanner")),
    ("ut2004", "[RI] GEO Sonar", "GEO {Type Sonar} {Name F2 Location 0.1850,-0.1150,0.0000 "
     "Orientation 0.0000,0.0000,-0.8727 Mount HARD}", lambda: pm.geo_sensors(P2AT, "Sonar", "F2")),
    ("ut2004", "[RI] GEO GPS", "GEO {Type GPS} {Name GPS Location 0.0000,0.0000,0.0000 "
     "Orientation 0.0000,-0.0000,0.0000 Mount HARD}", lambda: pm.geo_sensors(P2AT, "GPS")),
    ("ut2004", "[RI] GEO INS", "GEO {Type INS} {Name INS Location 0.0000,0.0000,0.0000 "
     "Orientation 0.0000,-0.0000,0.0000 Mount HARD}", lambda: pm.geo_sensors(P2AT, "INS")),
    ("ut2004", "[RI] GEO GroundTruth", "GEO {Type GroundTruth} {Name GroundTruth Location 0.0000,0.0000,0.0000 "
     "Orientation 0.0000,0.0000,0.0000 Mount HARD}", lambda: pm.geo_sensors(P2AT, "GroundTruth")),
    ("ut2004", "[RI] GEO VictSensor", "GEO {Type VictSensor} {Name VictSensor Location 0.0600,0.0000,-0.0087 "
     "Orientation 0.0000,0.0000,0.0000 Mount CameraPanTilt_Link2}",
     lambda: pm.geo_sensors(load_robot("RescueP2AT"), "VictSensor")),
    ("ut2004", "[RI] CONF RangeScanner", "CONF {Type RangeScanner} {Name Scanner1} {MaxRange 20.0000} "
     "{MinRange 0.1000} {Resolution 0.0174} {Fov 3.1415} {Paning True} {Tilting False}",
     lambda: pm.conf_sensors(P2AT, "RangeScanner")),
    ("ut2004", "[RI] CONF Sonar", "CONF {Type Sonar} {Name R8} {MaxRange 5.0000} {MinRange 0.1000} "
     "{BeamAngle 0.3491}", lambda: pm.conf_sensors(P2AT, "Sonar", "R8")),
    ("ut2004", "[RI] CONF Odometry", "CONF {Type Odometry} {Name Odometry} {ScanInterval 0.2000} "
     "{EncoderResolution 0.0099}", lambda: pm.conf_sensors(P2AT, "Odometry")),
    ("ut2004", "[RI] CONF GroundTruth", "CONF {Type GroundTruth} {Name GroundTruth} {ScanInterval 0.05}",
     lambda: pm.conf_sensors(P2AT, "GroundTruth")),
    ("ut2004", "[RI] CONF GPS", "CONF {Type GPS} {Name GPS} {ScanInterval 0.20}", lambda: pm.conf_sensors(P2AT, "GPS")),
    ("ut2004", "[RI] CONF INS", "CONF {Type INS} {Name INS} {ScanInterval 0.20}", lambda: pm.conf_sensors(P2AT, "INS")),
    ("ut2004", "[RI] CONF VictSensor", "CONF {Type VictSensor} {Name VictSensor} {MaxRange 6.0000} "
     "{HorizontalFOV 0.6981} {VerticalFOV 0.6981}", lambda: pm.conf_sensors(load_robot("RescueP2AT"), "VictSensor")),
    ("ut2004", "[RI] CONF Encoder", "CONF {Type Encoder} {Name ECLeft} {Resolution 0.0174}",
     lambda: pm.conf_sensors(load_robot("P2DX"), "Encoder", ENCODER)),
    ("ut2004", "[RI] CONF Gripper", "CONF {Type Gripper} {Name Gripper1} {Opcode GRIP} {MaxVal 1} {MinVal 0}",
     lambda: pm.conf_effecters(load_robot("Talon"), {"Gripper": {"Open": (0.0, 1.0)}}, item_type="Gripper")),
    ("ut2004", "[J] STA", "STA {Type GroundVehicle} {Time 19.07} {FrontSteer 0.0000} {RearSteer 0.0000} "
     "{LightToggle False} {LightIntensity 0} {Battery 1192} {View -1}",
     lambda: g.format_sta("GroundVehicle", 19.07, light_toggle=False, light_intensity=0, battery=1192)),
    ("ut2004", "[RI] SEN GroundTruth", "SEN {Time 5608.8500} {Type GroundTruth} {Name GroundTruth} "
     "{Location 12.61,-2.68,1.64} {Orientation 0.00,6.23,0.00}",
     lambda: g.format_sen_ground_truth("GroundTruth", (12.61, -2.68, 1.64), (0.0, 6.23, 0.0), time=5608.85)),
    ("ut2004", "[RI] SEN Sonar", "SEN {Time 5608.85} {Type Sonar} {Name F1 Range 2.5098} {Name F2 Range 3.3153}",
     lambda: g.format_sen_sonar([("F1", 2.5098), ("F2", 3.3153)], time=5608.85)),
    ("ut2004", "[J] SEN GPS without a fix", "SEN {Type GPS} {Name GPS} {Fix 0} {Satellites 2}",
     lambda: _lines([_gps(False)], "ut2004")[0]),
    ("ut2004", "[M] NFO", "NFO {Gametype BotDeathMatch} {Level DM-USAR_yellow} {TimeLimit 0}",
     lambda: pm.nfo_game("DM-USAR_yellow")),
    # ---------------------------------------------------------------- UDK
    ("udk", "[FX] GEO RangeScanner", "GEO {Type RangeScanner} {Name lms200} {Location 0.21,-0.00,-0.20} "
     "{Orientation 0.00,-0.00,-0.00}{Mount P3AT}", lambda: pm.geo_sensors(P3AT, "RangeScanner", dialect="udk")),
    ("udk", "[FX] GEO INS", "GEO {Type INS} {Name InsTest} {Location -0.00,-0.00,-0.20} "
     "{Orientation 0.00,-0.00,-0.00}{Mount P3AT}", lambda: pm.geo_sensors(P3AT, "INS", dialect="udk")),
    ("udk", "[UDK] Sensor.GetGeoData on a mission package", "GEO {Type Camera} {Name Camera} "
     "{Location 0.03,0.00,0.00} {Orientation 0.00,0.00,0.00}{Mount CameraPanTilt}{MountLink 2}",
     lambda: pm.geo_sensors(P3AT, "Camera", dialect="udk")),
    ("udk", "[FX] CONF RangeScanner", "CONF {Type RangeScanner} {Name lms200} {MaxRange 20.0000} {MinRange 0.1000} "
     "{Resolution 0.0174} {Fov 3.1414} {Panning True} {Tilting False}",
     lambda: pm.conf_sensors(P3AT, "RangeScanner", dialect="udk")),
    ("udk", "[FX] CONF INS", "CONF {Type INS} {Name InsTest} {ScanInterval 0.2000}",
     lambda: pm.conf_sensors(P3AT, "INS", dialect="udk")),
    ("udk", "[FX] CONF GroundTruth", "CONF {Type GroundTruth} {Name GndTruth} {ScanInterval 0.1000}",
     lambda: pm.conf_sensors(P3AT, "GroundTruth", dialect="udk")),
    ("udk", "[FX] CONF Camera", "CONF {Type Camera} {Name Camera}{TextureOffsetX 320}{TextureOffsetY 0}"
     "{TextureResolutionX 320}{TextureResolutionY 240}{CameraDefFov 80.0000}{CameraMinFov 20.0000}"
     "{CameraMaxFov 120.0000}{CameraFov 80.0000}", lambda: pm.conf_sensors(P3AT, "Camera", dialect="udk")),
    ("udk", "[FX] CONF Robot", "CONF {Name P3AT} {Type GroundVehicle} {SteeringType SkidSteered} {Mass 11.9000} "
     "{MaxSpeed 1.2999} {MaxTorque 50000.0000} {MaxFrontSteer 0} {MaxRearSteer 0}",
     lambda: pm.conf_robot(P3AT, "R1", "udk")),
    ("udk", "[UDK] WheeledVehicle.GetGeoData", "GEO {Type GroundVehicle} {Name P3AT} {Dimensions 0.2480,0.3600,0.0000} "
     "{COG 0.0000,0.0000,0.0000} {WheelRadius 0.0980} {WheelSeparation 0.3600} {WheelBase 0.2480}",
     lambda: pm.geo_robot(P3AT, "R1", "udk")),
    ("udk", "[FX] STA", "STA {Time 477.7582} {Battery 99999} {Type GroundVehicle} {LightToggle False} "
     "{LightIntensity 100} {FrontSteer 0} {RearSteer 0}",
     lambda: g.format_sta("GroundVehicle", 477.76, light_toggle=False, light_intensity=100, battery=99999,
                          dialect="udk")),
    ("udk", "[FX] SEN GroundTruth, stamped", "SEN {Time 477.7582} {Type GroundTruth} {Name GndTruth} "
     "{Location -0.000,-0.000,0.017} {Orientation -0.000,0.000,0.000}", lambda: _lines([_truth()], "udk")[0]),
    ("udk", "[FX] SEN Encoder, stamped, one per line", "SEN {Time 477.7582} {Type Encoder} {Name W1} {Tick 0}",
     lambda: _lines([rd.EncoderReading(sensor="W1", joint="w1", ticks=0, resolution=0.01, **H)], "udk")[0]),
    ("udk", "[FX] SEN INS, not stamped", "SEN {Type INS} {Name InsTest} {Location 0.00,0.00,-0.20} "
     "{Orientation 0.00,0.00,0.00}",
     lambda: _lines([rd.InsReading(sensor="InsTest", position=(0, 0, 0.2), rpy=(0, 0, 0), angular_velocity=(0, 0, 0),
                                   linear_acceleration=(0, 0, 9.8), position_variance=0, orientation_variance=0,
                                   angular_velocity_variance=0, linear_acceleration_variance=0, **H)], "udk")[0]),
    ("udk", "[FX] SEN RangeScanner, stamped", "SEN {Time 477.8550} {Type RangeScanner} {Name lms200} "
     "{Resolution 0.0174} {FOV 3.1414} {Range 9.38,9.38,9.38}",
     lambda: _lines([rd.RangeScan(sensor="lms200", ranges=(9.38, 9.38, 9.38), angle_min=-0.0174, angle_increment=0.0174,
                                  range_min=0.1, range_max=20.0, scan_time=0.0, **H)], "udk")[0]),
    ("udk", "[UDK] GPSSensor.GetData without a fix", "SEN {Type GPS} {Name GPS} {Fix 0} {Satellites 2}",
     lambda: _lines([_gps(False)], "udk")[0]),
    ("udk", "[FX] NFO", "NFO {Gametype BotDeathMatch} {Level EmptyRoom} {TimeLimit 20}",
     lambda: pm.nfo_game("EmptyRoom", 20)),
]


@pytest.mark.parametrize("era, source, golden, make", SAME_FORM, ids=[f"{e} {s}" for e, s, _, _ in SAME_FORM])
def test_each_era_sends_its_real_form(era, source, golden, make):
    assert form(make()) == form(golden)


BYTE_EXACT = [
    # [J] GroundStateInterface / AerialStateInterface: USARSim 3.x STA
    ("STA {Type GroundVehicle} {Time 19.07} {FrontSteer 0.0000} {RearSteer 0.0000} {LightToggle False} "
     "{LightIntensity 0} {Battery 1192} {View -1}",
     lambda: g.format_sta("GroundVehicle", 19.07, light_toggle=False, light_intensity=0, battery=1192,
                          front_steer=0.0, rear_steer=0.0)),
    ("STA {Type AerialVehicle} {Time 268.50} {LightToggle False} {LightIntensity 0} {Battery 1192} {View -1}",
     lambda: g.format_sta("AerialVehicle", 268.5, light_toggle=False, light_intensity=0, battery=1192)),
    # [M] the manual's one-segment GEO, with its numbers
    ("GEO {Type RangeScanner} {Name Scanner1 Location 0.1439,0.0000,-0.0920 Orientation 0.0000,0.0000,0.0000 "
     "Mount HARD}",
     lambda: g.format_geo_sensors("RangeScanner", [g.GeoItem("Scanner1", (0.1439, 0, -0.092), (0, 0, 0), "HARD")])),
    # [RI] CONF RangeScanner as USARSim 3.x spelled it
    ("CONF {Type RangeScanner} {Name Scanner1} {MaxRange 20.0000} {MinRange 0.1000} {Resolution 0.0174} "
     "{Fov 3.1415} {Paning True} {Tilting False}",
     lambda: pm.conf_sensors(_scanner(20.0, 0.1, 0.0174, 3.1415, "Scanner1"), "RangeScanner")),
    # [FX] the same in the UDK release
    ("CONF {Type RangeScanner} {Name lms200} {MaxRange 20.0000} {MinRange 0.1000} {Resolution 0.0174} "
     "{Fov 3.1414} {Panning True} {Tilting False}",
     lambda: pm.conf_sensors(_scanner(20.0, 0.1, 0.0174, 3.1414, "lms200"), "RangeScanner", dialect="udk")),
    # [RI] handleSenRangescanner; [UDK] GPSSensor.uc header comment; [RI] handleSenTouch
    ("SEN {Time 5608.85} {Type RangeScanner} {Name Scanner1} {Resolution 0.0174} {FOV 3.1415} "
     "{Range 11.3059,11.3014,11.3002}",
     lambda: g.format_sen_range_scanner("Scanner1", 0.0174, 3.1415, [11.3059, 11.3014, 11.3002], time=5608.85)),
    ("SEN {Type GPS} {Name GPS1} {Latitude 47,40.3323,N} {Longitude 122,18.5977,W} {Fix 1} {Satellites 8}",
     lambda: g.format_sen_gps("GPS1", 47 + 40.3323 / 60, -(122 + 18.5977 / 60), 1, 8)),
    ("SEN {Type Touch} {Name Touch Touch False}", lambda: g.format_sen_touch([("Touch", False)])),
    ("SEN {Time 5608.85} {Type Sonar} {Name F1 Range 2.5098} {Name F2 Range 3.3153}",
     lambda: g.format_sen_sonar([("F1", 2.5098), ("F2", 3.3153)], time=5608.85)),
    # [FX] the first line a client gets; [FX] a UDK encoder
    ("NFO {Gametype BotDeathMatch} {Level EmptyRoom} {TimeLimit 20}",
     lambda: g.format_nfo_game("BotDeathMatch", "EmptyRoom", 20)),
    ("SEN {Time 477.7582} {Type Encoder} {Name W1} {Tick 0}",
     lambda: _lines([rd.EncoderReading(sensor="W1", joint="w1", ticks=0, resolution=0.01, **H)], "udk")[0]),
    # [UDK] GPSSensor.GetData with Fix 0
    ("SEN {Type GPS} {Name GPS} {Fix 0} {Satellites 2}", lambda: _lines([_gps(False)], "udk")[0]),
]


def _scanner(max_range, min_range, resolution, fov, name):
    import dataclasses
    scanner = next(s for s in P2AT.sensors if s.type == "RangeScanner")
    params = dict(scanner.params, max_range=max_range, min_range=min_range, resolution=resolution, fov=fov)
    return dataclasses.replace(P2AT, sensors=[dataclasses.replace(scanner, name=name, params=params)], device_names={})


@pytest.mark.parametrize("golden, make", BYTE_EXACT, ids=[l[:48] for l, _ in BYTE_EXACT])
def test_real_lines_byte_for_byte(golden, make):
    assert make() == golden + "\r\n"


def test_mount_names_the_chassis_as_each_era_does():
    # [M]/[RI] Mount HARD; [UDK] String(Platform.Class), which the transcript shows as P3AT
    assert g.parse_message(pm.geo_sensors(P2AT, "INS")).get("Mount") == "HARD"
    assert g.parse_message(pm.geo_sensors(P3AT, "INS", dialect="udk")).get("Mount") == "P3AT"


@pytest.mark.parametrize("sensor_type, stamped", [
    # [UDK] DefaultUSAR.ini: [USARSensor.Sensor] bWithTimeStamp=true; INS and GPSSensor false
    ("GroundTruth", True), ("Odometry", True), ("RangeScanner", True), ("Encoder", True), ("Sonar", True),
    ("INS", False), ("GPS", False)])
def test_udk_stamps_as_its_default_configuration(sensor_type, stamped):
    assert eras.stamped("udk", sensor_type, False) is stamped
    assert eras.stamped("ut2004", sensor_type, False) is False  # the catalogue's bWithTimeStamp decides


def test_udk_class_names_are_detected_and_spawn_a_fitting_robot():
    assert eras.of_init("USARBot.P3AT", eras.AUTO) == "udk" and load_robot("USARBot.P3AT").class_name == "P2AT"
    assert eras.of_init("USARBot.P2AT", eras.AUTO) == "ut2004"
    assert eras.of_init("USARBot.P3AT", "ut2004") == "ut2004"  # a forced dialect wins


def test_compass_field_is_readable_in_four_decimals():
    # 50 uT must not print as 0.0000 (it did in tesla)
    reading = rd.CompassReading(sensor="Compass", heading=0.5, magnetic_field=(2.2e-5, 0.0, -4.4e-5),
                                heading_variance=0.0, field_variance=0.0, **H)
    field = g.parse_message(pm.format_reading(reading)).get_vector("Field")
    assert field == pytest.approx((22.0, 0.0, 44.0))


def test_human_motion_range_of_the_manual_in_metres():
    # USARBot.ini MaxRange=1000 (Unreal units: 4 m), FOV=60 (degrees)
    line = g.parse_message(pm.conf_sensors(_with_motion(), "HumanMotion"))
    assert line.get_float("MaxRange") == pytest.approx(4.0) and line.get_float("FOV") == pytest.approx(1.0472, abs=1e-4)


def _with_motion():
    import dataclasses

    from usarsim.sim.catalogue import SensorSpec
    return dataclasses.replace(P2AT, sensors=[SensorSpec(type="HumanMotion", name="Motion")], device_names={})


def test_effecter_geo_reports_where_it_acts():
    talon = load_robot("Talon")
    geo = g.parse_message(pm.geo_effecters(talon))
    # between the fingers, on the arm's last link (not the chassis origin)
    assert geo.get("Mount") == "TalonArm_Link3" and geo.get_vector("Location") == pytest.approx((0.05, 0.0, 0.0))
    udk = g.parse_message(pm.geo_effecters(talon, dialect="udk"))
    assert (udk.get("Mount"), udk.get_int("MountLink")) == ("TalonArm", 3)


def test_missta_head_and_time_in_each_era():
    # [M] MISSTA {Time t} {Name p} {Link i} {Value v} {Torque q}; [UDK] Actuator.GetMisPkgHead, timed as SEN are
    state = rd.MissionPackageState(package="CameraPanTilt", links=(1,), values=(0.1,), torques=(0.0,),
                                   **dict(H, sensor="CameraPanTilt"))
    assert pm.format_reading(state) == "MISSTA {Time 477.76} {Name CameraPanTilt} {Link 1} {Value 0.1000} {Torque 0.0000}\r\n"
    assert pm.format_reading(state, dialect="udk").startswith("MISSTA {Time 477.7582} {Name CameraPanTilt} {Link 1}")
