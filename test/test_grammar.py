"""Text-protocol grammar: lexing, values, commands and messages against the spec's golden lines."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

try:
    import usarsim  # noqa: F401
except ImportError:  # running from a checkout without an installed package
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from real_fixtures import UDK_SAMPLE, fixture  # noqa: E402
from usarsim.protocol.grammar import (  # noqa: E402
    MAX_LINE_LENGTH, Camera, CameraFov, ConfLink, Drive, EffecterOpcode, Fixed, GeoItem, GeoLink,
    GetConf, GetGeo, GetStartPoses, Init, Line, Message, MisPkg, MisPkgLink, MultiDrive,
    ProtocolError, RfidTag, Set, StartPose, Trace, Wheel, decode_gps, decode_range_readings,
    decode_start_poses, fmt_float, format_command, format_conf_effecters, format_conf_mispkg,
    format_conf_sensors, format_conf_vehicle, format_err, format_geo_effecters,
    format_geo_mispkg, format_geo_sensors, format_geo_vehicle, format_gps_coordinate,
    format_line, format_missta, format_nfo_game, format_nfo_start_poses, format_res,
    format_res_camera, format_res_rfid_read, format_res_viewports, format_sen_encoder,
    format_sen_gps, format_sen_ground_truth, format_sen_human_motion, format_sen_ins,
    format_sen_ir, format_sen_odometry, format_sen_range_scanner, format_sen_range_scanner_3d,
    format_sen_rfid, format_sen_sonar, format_sen_sound, format_sen_touch, format_sen_victim,
    format_sta, format_value, parse_bool, parse_command, parse_float, parse_floats,
    parse_gps_coordinate, parse_int, parse_line, parse_message, parse_vector,
)

FIXTURE = fixture(UDK_SAMPLE)


# --------------------------------------------------------------------------- lexing

def test_pairs_are_flattened_in_order_and_values_kept_as_text():
    line = parse_line("SEN {Type Sonar} {Name L0 Range 1.8396} {Name R0 Range 4.9954}\r\n")
    assert line == Line("SEN", (("Type", "Sonar"), ("Name", "L0"), ("Range", "1.8396"),
                                ("Name", "R0"), ("Range", "4.9954")))
    assert line.get("Name") == "L0"
    assert line.get_all("Range") == ("1.8396", "4.9954")
    assert line.get("Missing", "x") == "x"
    assert "Type" in line and "type" not in line


@pytest.mark.parametrize("ending", ["", "\n", "\r\n", "\r"])
def test_line_terminator_is_optional(ending):
    assert parse_line("DRIVE {Left 1.0} {Right 1.0}" + ending) == \
        Line("DRIVE", (("Left", "1.0"), ("Right", "1.0")))


def test_bytes_and_str_parse_the_same():
    text = "DRIVE {Left 1.0} {Right 1.0}\r\n"
    assert parse_line(text.encode()) == parse_line(text)
    assert parse_line(bytearray(text.encode())) == parse_line(text)


def test_lenient_spacing_between_segments_and_tokens():
    # Real peers: '}{' without a blank, two blanks after the TYPE, tabs, trailing blanks.
    line = parse_line("GEO  {Name P3AT}{Type GroundVehicle} {Location\t0.21,-0.00,-0.20}  ")
    assert line.pairs == (("Name", "P3AT"), ("Type", "GroundVehicle"),
                          ("Location", "0.21,-0.00,-0.20"))
    assert line.problems == ()
    assert parse_line("DRIVE{Left 1}").pairs == (("Left", "1"),)


def test_space_separated_vector_is_accepted():
    line = parse_line("INIT {ClassName USARBot.P2AT} {Location 4.5 -1.9 1.8} {Name R1}")
    assert line.get_vector("Location") == (4.5, -1.9, 1.8)
    assert line.get("Name") == "R1" and line.problems == ()


def test_blanks_after_commas_stay_in_the_vector():
    # NIST's Iridium GUI sends Java's "%.4f, %.4f, %.4f"
    line = parse_line("INIT {ClassName USARBot.P2AT} {Location 4.5000, 1.9000, 1.8000} {Name R1}")
    assert line.get_vector("Location") == (4.5, 1.9, 1.8) and line.problems == ()
    assert parse_line("INIT {Location 4.5 ,1.9, 1.8}").get_vector("Location") == (4.5, 1.9, 1.8)


@pytest.mark.parametrize("segment, why", [
    ("{Left}", "has no value"),
    ("{Name F1 Range}", "has no value"),
    ("{}", "no name/value pair"),
    ("{   }", "no name/value pair"),
    ("{Location 1,2,}", "stray comma"),
    ("{Location ,1,2}", "stray comma"),
])
def test_malformed_segment_is_skipped_and_reported(segment, why):
    line = parse_line(f"DRIVE {{Left 1}} {segment} {{Right 2}}")
    assert line.pairs == (("Left", "1"), ("Right", "2"))
    assert len(line.problems) == 1 and why in line.problems[0]


def test_text_outside_braces_is_reported():
    line = parse_line("DRIVE {Left 1} stray words {Right 2} tail")
    assert line.pairs == (("Left", "1"), ("Right", "2"))
    assert line.problems == ("text outside braces ignored: 'stray words'",
                             "text outside braces ignored: 'tail'")


def test_type_word_case():
    assert parse_line("Trace {On true}").type == "TRACE"
    assert parse_line("trace {On true}").type == "TRACE"
    assert parse_line("drive {Left 1}").type == "drive"  # left to the command layer
    with pytest.raises(ProtocolError, match="unknown command 'drive'"):
        parse_command("drive {Left 1}")


def test_groups_start_at_each_opener():
    line = parse_line("MISPKG {Name TalonArm} {Link 1} {Value 0.70} {Link 3} {Value 0.1} {Order 1}")
    assert line.groups("Link") == ((("Link", "1"), ("Value", "0.70")),
                                   (("Link", "3"), ("Value", "0.1"), ("Order", "1")))
    assert line.groups("Nothing") == ()


def test_typed_getters_name_the_field_on_error():
    line = parse_line("DRIVE {Left abc} {Location 1,2}")
    with pytest.raises(ProtocolError, match=r"\{Left abc\}: not a finite decimal number"):
        line.get_float("Left")
    with pytest.raises(ProtocolError, match="expected 3 comma-separated numbers, got 2"):
        line.get_vector("Location")
    assert line.get_float("Right") is None
    assert line.get_float("Right", 2.0) == 2.0


# --------------------------------------------------------------------------- bad input

def test_line_longer_than_the_limit_is_rejected_quickly():
    huge = "SEN {Type RangeScanner} {Range " + "1.0," * 262144 + "1.0}\r\n"  # ~1 MB
    assert len(huge) > 1_000_000
    with pytest.raises(ProtocolError, match="exceeds the limit of 65536"):
        parse_line(huge)
    with pytest.raises(ProtocolError, match="exceeds the limit"):
        parse_line(huge.encode())
    assert parse_line(huge[:2000] + "}", max_length=None).get_floats("Range")[-1] == 1.0


def test_limit_is_configurable_and_excludes_the_terminator():
    text = "DRIVE {Left 1}"
    assert parse_line(text + "\r\n", max_length=len(text)).type == "DRIVE"
    with pytest.raises(ProtocolError):
        parse_line(text, max_length=len(text) - 1)
    assert MAX_LINE_LENGTH == 65536


@pytest.mark.parametrize("raw, message", [
    (b"DRIVE {Left \xff}\r\n", "not ASCII: byte 0xff"),
    (b"DRIVE {Left \xc3\xa9}", "not ASCII"),
    ("DRIVE {Name caf\u00e9}", "non-ASCII character"),
    ("DRIVE {Left 1}\x00", "control character"),
    ("DRIVE {Left 1}\r\nDRIVE {Left 2}", "control character"),
    ("", "empty line"),
    ("\r\n", "empty line"),
    ("   \t ", "empty line"),
    ("{Left 1}", "no TYPE word"),
    ("DR1VE {Left 1}", "letters only"),
    ("DRIVE {Left 1", "never closed"),
    ("DRIVE {Left 1}}", "no matching"),
    ("DRIVE Left 1}", "no matching"),
    ("DRIVE {Left {1}}", "inside a segment"),
])
def test_unusable_lines_raise(raw, message):
    with pytest.raises(ProtocolError, match=message):
        parse_line(raw)


def test_parse_line_rejects_other_types():
    with pytest.raises(TypeError):
        parse_line(12)  # type: ignore[arg-type]


@pytest.mark.parametrize("text", ["nan", "NaN", "inf", "-inf", "Infinity", "", " 1", "1 ",
                                  "1_000", "0x10", "1e999", "abc", "1,2"])
def test_parse_float_rejects(text):
    with pytest.raises(ProtocolError):
        parse_float(text)


def test_nan_in_a_command_is_rejected_with_context():
    with pytest.raises(ProtocolError, match=r"DRIVE: \{Left nan\}"):
        parse_command("DRIVE {Left nan} {Right 1.0}")
    with pytest.raises(ProtocolError, match="INIT"):
        parse_command("INIT {ClassName USARBot.P2AT} {Location 1,inf,2}")


# --------------------------------------------------------------------------- values

def test_value_parsers():
    assert parse_float("4.500000") == 4.5
    assert parse_float("-.5") == -0.5
    assert parse_float("1e-3") == 0.001
    assert parse_int("-1") == -1 and parse_int("2.0") == 2
    with pytest.raises(ProtocolError):
        parse_int("1.5")
    for text in ("True", "true", "TRUE", "1"):
        assert parse_bool(text) is True
    for text in ("False", "false", "FALSE", "0"):
        assert parse_bool(text) is False
    with pytest.raises(ProtocolError):
        parse_bool("yes")
    assert parse_vector("4.5,1.9,1.8") == (4.5, 1.9, 1.8)
    assert parse_vector("1,2", n=2) == (1.0, 2.0)
    assert parse_floats("2.2109,2.2075") == (2.2109, 2.2075)
    for bad in ("4.5,,1.8", "4.5,1.9", "4.5, 1.9, 1.8", ""):
        with pytest.raises(ProtocolError):
            parse_vector(bad)


def test_format_value():
    assert format_value(0.0) == "0.0000"
    assert format_value(-0.0) == "0.0000"
    assert format_value(-0.00001) == "0.0000"
    assert format_value(2.0943951) == "2.0944"
    assert format_value(3564) == "3564"
    assert format_value(True) == "True" and format_value(False) == "False"
    assert format_value((4.5, 1, -0.25)) == "4.5000,1.0000,-0.2500"
    assert format_value(Fixed(62.014, 2)) == "62.01"
    assert format_value("USARBot.P2AT") == "USARBot.P2AT"
    assert fmt_float(1.23456, 2) == "1.23"
    for bad in ("two words", "a{b", "a}b", "", "tab\t", "caf\u00e9", float("nan"),
                float("inf"), (), object()):
        with pytest.raises(ProtocolError):
            format_value(bad)


def test_format_line():
    assert format_line("DRIVE", [("Left", 1.0), ("Right", 1.0)]) == \
        "DRIVE {Left 1.0000} {Right 1.0000}\r\n"
    assert format_line("SEN", [[("Name", "F1"), ("Range", 4.469)]]) == \
        "SEN {Name F1 Range 4.4690}\r\n"
    assert format_line("GETSTARTPOSES", []) == "GETSTARTPOSES\r\n"
    for bad_type in ("drive", "DR1VE", ""):
        with pytest.raises(ProtocolError):
            format_line(bad_type, [])
    with pytest.raises(ProtocolError):
        format_line("SEN", [[("Name", "F1"), ("1st", 2)]])  # would read back as a vector
    with pytest.raises(ProtocolError):
        format_line("SEN", [[]])
    with pytest.raises(ProtocolError):
        format_line("SEN", [("bad name", 1)])


def test_gps_coordinates():
    assert format_gps_coordinate(47 + 40.3323 / 60, True) == "47,40.3323,N"
    assert format_gps_coordinate(-(122 + 18.5977 / 60), False) == "122,18.5977,W"
    assert format_gps_coordinate(-33.5, True) == "33,30.0000,S"
    assert format_gps_coordinate(0.0, False) == "0,0.0000,E"
    assert format_gps_coordinate(-1e-9, True) == "0,0.0000,N"
    assert format_gps_coordinate(10.9999999999, True) == "11,0.0000,N"
    assert parse_gps_coordinate("47,40.3323,N") == pytest.approx(47.672205)
    assert parse_gps_coordinate("122,18.5977,W") == pytest.approx(-122.30996167)
    assert parse_gps_coordinate("33,30,s") == -33.5
    assert parse_gps_coordinate("47,40.5899") == pytest.approx(47.67649833)  # older form
    assert parse_gps_coordinate("-0,30") == -0.5
    for bad in ("47", "47,60,N", "47,40,X", "-47,40,N", "a,b,N", "200,0,E"):
        with pytest.raises(ProtocolError):
            parse_gps_coordinate(bad)
    for value, lat in ((91.0, True), (-181.0, False), (float("nan"), True)):
        with pytest.raises(ProtocolError):
            format_gps_coordinate(value, lat)


# --------------------------------------------------------------------------- golden commands

GOLDEN_COMMANDS = [
    (1, "INIT {ClassName USARBot.P2DX} {Location 4.5,1.9,1.8} {Name R1}",
     Init("USARBot.P2DX", name="R1", location=(4.5, 1.9, 1.8))),
    (2, "INIT {ClassName USARBot.P2DX} {Name Robot1} {Start PlayerStart}",
     Init("USARBot.P2DX", name="Robot1", start="PlayerStart")),
    (3, "INIT {ClassName USARBot.ATRVJr} {Location 200,600,-450}",
     Init("USARBot.ATRVJr", location=(200.0, 600.0, -450.0))),
    (4, "INIT {ClassName USARBot.P2AT} {Location 312,-600,-305}",
     Init("USARBot.P2AT", location=(312.0, -600.0, -305.0))),
    (5, "GETSTARTPOSES", GetStartPoses()),
    (9, "DRIVE {Left 1.0} {Right 1.0}", Drive(left=1.0, right=1.0)),
    (10, "DRIVE {Left -1.0} {Right 1.0}", Drive(left=-1.0, right=1.0)),
    (11, "DRIVE {Light true}", Drive(light=True)),
    (12, "DRIVE {Flip true}", Drive(flip=True)),
    (13, "DRIVE {Speed 1.0} {FrontSteer 0.523599}", Drive(speed=1.0, front_steer=0.523599)),
    (14, "DRIVE {Propeller 1.0} {Rudder 0.523599}", Drive(propeller=1.0, rudder=0.523599)),
    (15, "DRIVE {AltitudeVelocity 1}", Drive(altitude_velocity=1.0)),
    (16, "DRIVE {RotationalVelocity 0.1}", Drive(rotational_velocity=0.1)),
    (17, "DRIVE {LinearVelocity -3}", Drive(linear_velocity=-3.0)),
    (18, "DRIVE {WheelNumber 0} {WheelSpeed 3.14} {WheelSteer 0.75} {WheelNumber 1} "
         "{WheelSpeed -3.14} {WheelSteer 0.75}",
     Drive(wheels=(Wheel(0, 3.14, 0.75), Wheel(1, -3.14, 0.75)))),
    (19, "DRIVE {Name LeftFWheel} {Steer 1.57}", Drive(name="LeftFWheel", steer=1.57)),
    (20, "DRIVE {Name LeftFWheel} {Order 1} {Value 0.175}",
     Drive(name="LeftFWheel", order=1, value=0.175)),
    (21, "DRIVE {XZAngle 0.5}", Drive(xz_angle=0.5)),
    (21, "DRIVE {ThrustPropeller 1}", Drive(thrust_propeller=1.0)),
    (21, "DRIVE {TailPropeller 0.3}", Drive(tail_propeller=0.3)),
    (22, "MULTIDRIVE {FRFlipper 1.57} {FLFlipper 1.57}",
     MultiDrive((("FRFlipper", 1.57), ("FLFlipper", 1.57)))),
    (23, "MULTIDRIVE {FRFlipper 1.5} {FLFlipper 1.5} {RRFlipper 1.5} {RLFlipper 1.5}",
     MultiDrive((("FRFlipper", 1.5), ("FLFlipper", 1.5), ("RRFlipper", 1.5),
                 ("RLFlipper", 1.5)))),
    (24, "MULTIDRIVE {kenafCameraPan 1.0} {kenafCameraTilt 0.0}",
     MultiDrive((("kenafCameraPan", 1.0), ("kenafCameraTilt", 0.0)))),
    (25, "MISPKG {Name CameraPanTilt} {Link 1} {Value 1.5} {Link 2} {Value 0}",
     MisPkg("CameraPanTilt", (MisPkgLink(1, 1.5, 0), MisPkgLink(2, 0.0, 0)))),
    (26, "MISPKG {Name TalonArm} {Link 1} {Value 0.70} {Link 3} {Value 0.1} {Order 1}",
     MisPkg("TalonArm", (MisPkgLink(1, 0.7, 0), MisPkgLink(3, 0.1, 1)))),
    (27, "MISPKG {Name TeleMaxArm} {Link 1} {Value 0} {Link 2} {Value 2} {Link 3} {Value 0} "
         "{Link 4} {Value 2} {Link 5} {Value 0} {Link 6} {Value 0} {Link 7} {Value 0}",
     MisPkg("TeleMaxArm", tuple(MisPkgLink(i, v, 0) for i, v in
                                enumerate((0.0, 2.0, 0.0, 2.0, 0.0, 0.0, 0.0), start=1)))),
    (28, "SET {Type Gripper} {Name Gripper} {Opcode Open} {Params 0.8}",
     Set("Gripper", name="Gripper", opcode="Open", params="0.8")),
    (29, "SET {Type Joint} {Name UpperArm} {Opcode Angle} {Params 1.25}",
     Set("Joint", name="UpperArm", opcode="Angle", params="1.25")),
    (30, "SET {Type Odometry} {Name Odo1} {Opcode RESET} {Params 1}",
     Set("Odometry", name="Odo1", opcode="RESET", params="1")),
    (32, "SET {Type Viewports} {Config QuadView} {Viewport1 Camera1} {Viewport2 Camera2} "
         "{Viewport3 Disable} {Viewport4 Disable}",
     Set("Viewports", config="QuadView",
         viewports=("Camera1", "Camera2", "Disable", "Disable"))),
    (34, "SET {Type Camera} {Name Camera} {FOV 1}",
     Set("Camera", name="Camera", cameras=(CameraFov("Camera", 1.0),))),
    (36, "SET {Type Camera} {Client 10.0.0.2}", Set("Camera", client="10.0.0.2")),
    (37, "SET {Type RFID} {Name RFID} {Opcode Read} {Params 7}",
     Set("RFID", name="RFID", opcode="Read", params="7")),
    (38, "TRACE {On true} {Interval 1} {Color Green}", Trace(on=True, interval=1.0, color="Green")),
    (39, "GETGEO {Type Sonar}", GetGeo("Sonar")),
    (39, "GETGEO {Type Robot}", GetGeo("Robot")),
    (39, "GETCONF {Type MisPkg}", GetConf("MisPkg")),
    (39, "GETCONF {Type Effecter}", GetConf("Effecter")),
    (62, "CAMERA {Rotation 1820,0,0} {Order 0}", Camera(rotation=(1820.0, 0.0, 0.0), order=0)),
    (62, "CAMERA {Zoom 20}", Camera(zoom=20.0)),
    (63, "DRIVE {Name LeftFWheel} {Order 1} {Value 2000}",
     Drive(name="LeftFWheel", order=1, value=2000.0)),
]


@pytest.mark.parametrize("number, text, expected", GOLDEN_COMMANDS,
                         ids=[f"v{n}-{t.split()[0]}" for n, t, _ in GOLDEN_COMMANDS])
def test_golden_command(number, text, expected):
    line = parse_line(text + "\r\n")
    assert line.problems == ()
    command = parse_command(line)
    assert command == expected
    # Our own formatting of the command reads back to the same command.
    assert parse_command(format_command(command, digits=6)) == expected


def test_golden_command_aliases():
    assert parse_command("STARTPOSES") == GetStartPoses()  # D5
    assert parse_command("MISSPKG {Name CameraPanTilt} {Link 1} {Value 1.5}") == \
        MisPkg("CameraPanTilt", (MisPkgLink(1, 1.5, 0),))
    assert parse_command("Trace {On True} {Color 2}") == Trace(on=True, color="Green")  # D14


def test_set_camera_client_form():
    assert parse_command("SET {Type Camera} {Robot R1} {Name Camera} {Client 10.0.0.2}") == \
        Set("Camera", name="Camera", robot="R1", client="10.0.0.2")


def test_set_camera_several_fovs():
    cmd = parse_command("SET {Type Camera} {Name Camera} {FOV 1} {Name Camera2} {FOV 0}")
    assert cmd.cameras == (CameraFov("Camera", 1.0), CameraFov("Camera2", 0.0))


def test_mispkg_order_rules():
    cmd = parse_command("MISPKG {Name A} {Link 1} {Order 2} {Value 0.5} {Link 2} {Value 1}")
    assert cmd.links == (MisPkgLink(1, 0.5, 2), MisPkgLink(2, 1.0, 0))
    # An Order before the first Link is the default for links without one.
    cmd = parse_command("MISPKG {Name A} {Order 1} {Link 1} {Value 0.5} {Link 2} {Value 1} "
                        "{Order 0}")
    assert cmd.links == (MisPkgLink(1, 0.5, 1), MisPkgLink(2, 1.0, 0))


@pytest.mark.parametrize("text, message", [
    ("INIT {Location 1,2,3}", r"INIT: missing required \{ClassName"),
    ("INIT {ClassName USARBot.P2AT} {Name R1}", r"missing \{Location x,y,z\} \(or \{Start tag\}\)"),
    ("INIT {ClassName USARBot.P2AT} {Location 4.5,, 1.9, 1.8}", "missing {Location"),
    ("INIT {ClassName USARBot.P2AT} {Location 1,2}", "expected 3"),
    ("MISPKG {Link 1} {Value 2}", r"MISPKG: missing required \{Name"),
    ("MISPKG {Name A}", "missing {Link"),
    ("MISPKG {Name A} {Link 1} {Order 1}", "has no {Value"),
    ("MULTIDRIVE", "at least one"),
    ("MULTIDRIVE {FRFlipper up}", "FRFlipper up"),
    ("SET {Name Odo1}", r"SET: missing required \{Type"),
    ("GETGEO", "GETGEO: missing required"),
    ("GETCONF {Name x}", "GETCONF: missing required"),
    ("TRACE {Color Magenta}", "unknown trace"),
    ("TRACE {On maybe}", "not a boolean"),
    ("DRIVE {Order 1.5}", "not an integer"),
    ("DRIVE {WheelNumber x}", "WheelNumber"),
    ("CAMERA {Rotation 1,2}", "expected 3"),
    ("KILL {Name R1}", r"unknown command 'KILL'; known commands: CAMERA, DRIVE"),
])
def test_bad_commands(text, message):
    with pytest.raises(ProtocolError, match=message if "\\" in message else None) as info:
        parse_command(text)
    if "\\" not in message:
        assert message in str(info.value)


def test_unknown_pairs_and_wrong_case_names_are_ignored():
    cmd = parse_command("DRIVE {Left 1.0} {Right 1.0} {Turbo 9} {light true}")
    assert cmd == Drive(left=1.0, right=1.0)
    assert parse_command("INIT {ClassName x} {Location 1,2,3} {Battery 3600}") == \
        Init("x", location=(1.0, 2.0, 3.0))


def test_ignore_name_case_is_opt_in():
    assert parse_command("DRIVE {RIGHT 1.0} {LEFT 1.0}") == Drive()
    assert parse_command("DRIVE {RIGHT 1.0} {LEFT 1.0}", ignore_name_case=True) == \
        Drive(left=1.0, right=1.0)
    # The exact name wins when both are present.
    assert parse_command("DRIVE {LEFT 2} {Left 1}", ignore_name_case=True).left == 1.0
    assert parse_command("set {type Camera} {name C} {fov 1}".replace("set", "SET"),
                         ignore_name_case=True).cameras == (CameraFov("C", 1.0),)


def test_first_occurrence_wins():
    assert parse_command("DRIVE {Left 1} {Left 2}").left == 1.0


def test_drive_repr_lists_given_fields_only():
    assert repr(Drive(left=1.0, wheels=(Wheel(0, 1.0),))) == \
        "Drive(left=1.0, wheels=(Wheel(number=0, speed=1.0, steer=None),))"


def test_format_command_examples():
    assert format_command(Init("USARBot.P2AT", name="R1", location=(4.5, 1.9, 1.8))) == \
        "INIT {ClassName USARBot.P2AT} {Name R1} {Location 4.5000,1.9000,1.8000}\r\n"
    assert format_command(Drive(left=1.0, right=-1.0, normalized=True)) == \
        "DRIVE {Left 1.0000} {Right -1.0000} {Normalized True}\r\n"
    assert format_command(MisPkg("TalonArm", (MisPkgLink(1, 0.7), MisPkgLink(3, 0.1, 1)))) == \
        "MISPKG {Name TalonArm} {Link 1} {Value 0.7000} {Link 3} {Value 0.1000} {Order 1}\r\n"
    assert format_command(GetStartPoses()) == "GETSTARTPOSES\r\n"
    assert format_command(Trace(on=True, interval=1.0, color="Green"), digits=0) == \
        "TRACE {On True} {Interval 1} {Color Green}\r\n"


# --------------------------------------------------------------------------- golden messages

def _sonar8():
    return list(zip(["F1", "F2", "F3", "F4", "F5", "F6", "F7", "F8"],
                    [4.4690, 1.9387, 1.9159, 1.6547, 0.8889, 0.7640, 1.1075, 2.0773]))


F2 = lambda v: Fixed(v, 2)  # noqa: E731 - the manual's 2-decimal examples

GOLDEN_MESSAGES = [
    (6, "NFO {StartPoses 3} {BlueGoal -2.55,0.00,-0.19 0.00,0.03,0.01 MiddleField "
        "0.01,0.00,-0.19 0.00,0.00,0.00 YellowGoal 2.57,0.01,-0.19 0.00,0.00,3.13}",
     lambda: format_nfo_start_poses([("BlueGoal", (-2.55, 0.0, -0.19), (0.0, 0.03, 0.01)),
                                     ("MiddleField", (0.01, 0.0, -0.19), (0.0, 0.0, 0.0)),
                                     ("YellowGoal", (2.57, 0.01, -0.19), (0.0, 0.0, 3.13))])),
    (7, "NFO {StartPoses 0}", lambda: format_nfo_start_poses([])),
    (8, "NFO {Gametype BotDeathMatch} {Level DM-ARDA_250} {TimeLimit 0}",
     lambda: format_nfo_game("BotDeathMatch", "DM-ARDA_250", 0)),
    (31, "RES {Time 61.20} {Type Odometry} {Name Odo1} {Status OK}",
     lambda: format_res(61.2, "Odometry", "Odo1", True)),
    (33, "RES {Time 56.68} {Type Viewports} {Config SingleView} {Status OK} {Viewport1 Camera} "
         "{Status OK} {Viewport2 Disabled} {Status OK} {Viewport3 Disabled} {Status OK} "
         "{Viewport4 Disabled} {Status OK}",
     lambda: format_res_viewports(56.68, "SingleView", True,
                                  [("Camera", True), ("Disabled", True), ("Disabled", True),
                                   ("Disabled", True)])),
    (35, "RES {Time 426.76} {Type Camera} {Name Camera FOV 0.7853 Status OK} "
         "{Name Camera2 FOV 0.7853 Status OK}",
     lambda: format_res_camera(426.76, [("Camera", 0.7853, True), ("Camera2", 0.7853, True)])),
    (37, "RES {Time 12.30} {Type RFID} {Name RFID} {Status OK} {ID 7} {Mem 0}",
     lambda: format_res_rfid_read(12.3, "RFID", True, 7, "0")),
    (40, "GEO {Type GroundVehicle} {Name ATRVJr} {Dimensions 0.7744,0.6318,0.5754} "
         "{COG 0.0000,0.0000,0.1000} {WheelRadius 0.1922} {WheelSeparation 0.5120} "
         "{WheelBase 0.3880}",  # the key as USARSim sends it (UDK WheeledVehicle.uc)
     lambda: format_geo_vehicle("GroundVehicle", "ATRVJr", (0.7744, 0.6318, 0.5754),
                                (0.0, 0.0, 0.1), wheel_radius=0.1922, wheel_separation=0.512,
                                wheelbase=0.388)),
    # USARSim 3.x: one segment per sensor (the manual's §9 grammar)
    (41, "GEO {Type Camera} {Name Camera Location 0.0820,0.0002,0.0613 "
         "Orientation 0.0000,0.0000,0.0000 Mount CameraPanTilt_Link2}",
     lambda: format_geo_sensors("Camera", [GeoItem("Camera", (0.082, 0.0002, 0.0613),
                                                   (0.0, 0.0, 0.0), "CameraPanTilt_Link2")])),
    (42, "GEO {Type MisPkg} {Name CameraPanTilt} {Link 1} {ParentLink -1} "
         "{Location 0.1239,0.0000,0.2036} {Orientation 3.1415,0.0000,0.0000} {Link 2} "
         "{ParentLink 1} {Location 0.0000,0.0000,0.0599} {Orientation 1.5707,0.0000,0.0000}",
     lambda: format_geo_mispkg([("CameraPanTilt", [
         GeoLink(1, -1, (0.1239, 0.0, 0.2036), (3.1415, 0.0, 0.0)),
         GeoLink(2, 1, (0.0, 0.0, 0.0599), (1.5707, 0.0, 0.0))])])),
    (43, "CONF {Type GroundVehicle} {Name ATRVJr} {SteeringType SkidSteered} {Mass 50.0000} "
         "{MaxSpeed 2.0943} {MaxTorque 60.0000} {MaxFrontSteer 0.0000} {MaxRearSteer 0.0000}",
     lambda: format_conf_vehicle("GroundVehicle", "ATRVJr", "SkidSteered", 50.0,
                                 max_speed=2.0943, max_torque=60.0, max_front_steer=0.0,
                                 max_rear_steer=0.0)),
    (44, "CONF {Type Camera} {Name Camera} {CameraDefFov 0.8727} {CameraMinFov 0.3491} "
         "{CameraMaxFov 2.0943} {CameraFov 0.8726}",
     lambda: format_conf_sensors("Camera", [("Camera", [("CameraDefFov", 0.8727),
                                                    ("CameraMinFov", 0.3491),
                                                    ("CameraMaxFov", 2.0943),
                                                    ("CameraFov", 0.8726)])])),
    (45, "CONF {Type Effecter} {Name Roller} {Opcode Animate} {MaxVal 6} {MinVal -6}",
     lambda: format_conf_effecters([("Roller", [EffecterOpcode("Animate", 6, -6)])])),
    (46, "CONF {Type MisPkg} {Name CameraPanTilt} {Link 1} {JointType Revolute} "
         "{MaxSpeed 0.17} {MaxTorque 20.00} {MinRange 1} {MaxRange 0} {Link 2} "
         "{JointType Revolute} {MaxSpeed 0.17} {MaxTorque 20} {MinRange 0.16} {MaxRange 0.40}",
     lambda: format_conf_mispkg([("CameraPanTilt", [
         ConfLink(1, "Revolute", F2(0.17), F2(20), 1, 0),
         ConfLink(2, "Revolute", F2(0.17), 20, F2(0.16), F2(0.4))])])),
    (47, "CONF {Type LeggedRobot} {Name QRIO} {SteeringType TwoLegs} {Mass 50.0000}",
     lambda: format_conf_vehicle("LeggedRobot", "QRIO", "TwoLegs", 50.0)),
    (47, "CONF {Type NauticVehicle} {Name Submarine} {SteeringType Underwater} {Mass 50.0000}",
     lambda: format_conf_vehicle("NauticVehicle", "Submarine", "Underwater", 50.0)),
    (47, "CONF {Type AerialVehicle} {Name AirRobot} {SteeringType RotaryWing} {Mass 50.0000}",
     lambda: format_conf_vehicle("AerialVehicle", "AirRobot", "RotaryWing", 50.0)),
    # USARSim 3.x ends the line with {View -1}, which its clients parse as a number
    (48, "STA {Type GroundVehicle} {Time 62.01} {FrontSteer 0.0000} {RearSteer 0.0000} "
         "{LightToggle False} {LightIntensity 0} {Battery 3564} {View -1}",
     lambda: format_sta("GroundVehicle", 62.01, light_toggle=False, light_intensity=0,
                        battery=3564, front_steer=0.0, rear_steer=0.0)),
    (49, "MISSTA {Time 102.09} {Name CameraPanTilt} {Link 1} {Value 0.0000} {Torque 20.0000} "
         "{Link 2} {Value 0.1600} {Torque 20.0000}",
     lambda: format_missta(102.09, "CameraPanTilt", [(1, 0.0, 20.0), (2, 0.16, 20.0)])),
    (50, "SEN {Type Sonar} {Name L0 Range 1.8396} {Name R0 Range 4.9954}",
     lambda: format_sen_sonar([("L0", 1.8396), ("R0", 4.9954)])),
    (51, "SEN {Time 45.14} {Type Sonar} {Name F1 Range 4.4690} {Name F2 Range 1.9387} "
         "{Name F3 Range 1.9159} {Name F4 Range 1.6547} {Name F5 Range 0.8889} "
         "{Name F6 Range 0.7640} {Name F7 Range 1.1075} {Name F8 Range 2.0773}",
     lambda: format_sen_sonar(_sonar8(), time=45.14)),
    (52, "SEN {Type RangeScanner} {Name Scanner} {Resolution 0.0174} {FOV 3.1415} "
         "{Range 2.2109,2.2075,2.2124,2.2122,2.2156,2.2166,2.2207,2.2283}",
     lambda: format_sen_range_scanner("Scanner", 0.0174, 3.1415,
                                      [2.2109, 2.2075, 2.2124, 2.2122, 2.2156, 2.2166, 2.2207,
                                       2.2283])),
    (53, "SEN {Type Odometry} {Name Odometry} {Pose 0.2415,0.0029,0.5157}",
     lambda: format_sen_odometry("Odometry", (0.2415, 0.0029, 0.5157))),
    (54, "SEN {Type GPS} {Name GPS1} {Latitude 47,40.3323,N} {Longitude 122,18.5977,W} "
         "{Fix 1} {Satellites 8}",
     lambda: format_sen_gps("GPS1", 47 + 40.3323 / 60, -(122 + 18.5977 / 60), 1, 8)),
    (55, "SEN {Type INS} {Name INS} {Location 1.23,2.23,0.12} {Orientation 4.57,3.14,1.507}",
     lambda: format_sen_ins("INS", (F2(1.23), F2(2.23), F2(0.12)),
                            (F2(4.57), F2(3.14), Fixed(1.507, 3)))),
    (56, "SEN {Type Encoder} {Name ECLeft Tick 61} {Name ECRight Tick 282} "
         "{Name ECTilt Tick 0} {Name ECPan Tick 0}",
     lambda: format_sen_encoder([("ECLeft", 61), ("ECRight", 282), ("ECTilt", 0),
                                 ("ECPan", 0)])),
    (57, "SEN {Type Touch} {Name Front Touch True} {Name Left Touch False} "
         "{Name Right Touch False}",
     lambda: format_sen_touch([("Front", True), ("Left", False), ("Right", False)])),
    (58, "SEN {Type RFID} {Name RFID} {ID 1 Mem 0} {ID 2 Mem 0}",
     lambda: format_sen_rfid("RFID", [RfidTag(1, "0"), RfidTag(2, "0")])),
    # parts as separate segments, as USARSim 3.x sent them (and its Java clients split them)
    (59, "SEN {Type VictSensor} {Name VictimSensor} {PartName Leg} {Location 2.05,0.33,0.46} "
         "{PartName Leg} {Location 2.51,0.44,0.39}",
     lambda: format_sen_victim("VictimSensor", [("Leg", (F2(2.05), F2(0.33), F2(0.46))),
                                                ("Leg", (F2(2.51), F2(0.44), F2(0.39)))])),
    (60, "SEN {Type HumanMotion} {Name Motion} {Prob 0.81}",
     lambda: format_sen_human_motion("Motion", F2(0.81))),
    (61, "SEN {Type Sound} {Name Sound} {Loudness 17.22} {Duration 6.63}",
     lambda: format_sen_sound("Sound", F2(17.22), F2(6.63))),
]


@pytest.mark.parametrize("number, golden, make", GOLDEN_MESSAGES,
                         ids=[f"v{n}-{g.split()[0]}" for n, g, _ in GOLDEN_MESSAGES])
def test_golden_message_byte_for_byte(number, golden, make):
    out = make()
    assert out == golden + "\r\n"
    assert out.encode("ascii") == (golden + "\r\n").encode("ascii")
    msg = parse_message(out)
    assert msg.problems == ()
    assert msg.pairs == parse_line(golden).pairs


# Golden lines the manual prints with fewer than 4 decimals, as our plain floats print them.
FOUR_DECIMAL_VARIANTS = [
    (46, "CONF {Type MisPkg} {Name CameraPanTilt} {Link 1} {JointType Revolute} "
         "{MaxSpeed 0.1700} {MaxTorque 20.0000} {MinRange 1.0000} {MaxRange 0.0000} {Link 2} "
         "{JointType Revolute} {MaxSpeed 0.1700} {MaxTorque 20.0000} {MinRange 0.1600} "
         "{MaxRange 0.4000}",
     lambda: format_conf_mispkg([("CameraPanTilt", [
         ConfLink(1, "Revolute", 0.17, 20.0, 1.0, 0.0),
         ConfLink(2, "Revolute", 0.17, 20.0, 0.16, 0.4)])])),
    (55, "SEN {Type INS} {Name INS} {Location 1.2300,2.2300,0.1200} "
         "{Orientation 4.5700,3.1400,1.5070}",
     lambda: format_sen_ins("INS", (1.23, 2.23, 0.12), (4.57, 3.14, 1.507))),
    (59, "SEN {Type VictSensor} {Name VictimSensor} "
         "{PartName Leg} {Location 2.0500,0.3300,0.4600} {PartName Leg} {Location 2.5100,0.4400,0.3900}",
     lambda: format_sen_victim("VictimSensor", [("Leg", (2.05, 0.33, 0.46)),
                                                ("Leg", (2.51, 0.44, 0.39))])),
    (60, "SEN {Type HumanMotion} {Name Motion} {Prob 0.8100}",
     lambda: format_sen_human_motion("Motion", 0.81)),
    (61, "SEN {Type Sound} {Name Sound} {Loudness 17.2200} {Duration 6.6300}",
     lambda: format_sen_sound("Sound", 17.22, 6.63)),
]


@pytest.mark.parametrize("number, expected, make", FOUR_DECIMAL_VARIANTS,
                         ids=[f"v{n}" for n, _, _ in FOUR_DECIMAL_VARIANTS])
def test_golden_message_with_default_precision(number, expected, make):
    assert make() == expected + "\r\n"


def test_golden_messages_decode():
    poses = decode_start_poses(GOLDEN_MESSAGES[0][1])
    assert poses[0] == StartPose("BlueGoal", (-2.55, 0.0, -0.19), (0.0, 0.03, 0.01))
    assert [p.tag for p in poses] == ["BlueGoal", "MiddleField", "YellowGoal"]
    assert decode_start_poses("NFO {StartPoses 0}") == ()
    with pytest.raises(ProtocolError):
        decode_start_poses("NFO {StartPoses 2} {A 1,2,3 4,5,6}")
    with pytest.raises(ProtocolError):
        decode_start_poses("NFO {Gametype X}")

    sonar = parse_message(GOLDEN_MESSAGES[[g[0] for g in GOLDEN_MESSAGES].index(51)][1])
    assert isinstance(sonar, Message)
    assert sonar.kind == "Sonar" and sonar.time == 45.14
    assert decode_range_readings(sonar) == tuple(_sonar8())

    lat, lon = decode_gps("SEN {Type GPS} {Name GPS1} {Latitude 47,40.3323,N} "
                          "{Longitude 122,18.5977,W} {Fix 1} {Satellites 8}")
    assert lat == pytest.approx(47 + 40.3323 / 60) and lon == pytest.approx(-(122 + 18.5977 / 60))

    viewports = parse_message("RES {Time 56.68} {Type Viewports} {Config SingleView} {Status OK} "
                              "{Viewport1 Camera} {Status Failed}")
    assert viewports.get_all("Status") == ("OK", "Failed")  # order kept (property c)

    ins = parse_message("SEN {Type INS} {Name INS} {Location 1.23,2.23,0.12} "
                        "{Orientation 4.57,3.14,1.507}")
    assert ins.get_vector("Orientation") == (4.57, 3.14, 1.507)
    assert ins.time is None


def test_parse_message_rejects_commands():
    with pytest.raises(ProtocolError, match="unknown message type 'DRIVE'"):
        parse_message("DRIVE {Left 1}")


def test_parse_message_has_no_length_limit_by_default():
    ranges = [1.0] * 20000
    line = format_sen_range_scanner_3d("Scan3D", (0.01, 0.02), (3.1415, 0.5), ranges)
    assert len(line) > MAX_LINE_LENGTH
    msg = parse_message(line)
    assert msg.get_vector("Resolution", 2) == (0.01, 0.02)
    assert len(msg.get_floats("Range")) == 20000


# --------------------------------------------------------------------------- other formatters

def test_sta_field_sets():
    assert format_sta("NauticVehicle", 1.0, light_toggle=True, light_intensity=100, battery=10,
                      rudder_angle=0.1) == \
        ("STA {Type NauticVehicle} {Time 1.00} {SternPlaneAngle 0.0000} {RudderAngle 0.1000} "
         "{LightToggle True} {LightIntensity 100} {Battery 10} {View -1}\r\n")
    assert format_sta("AerialVehicle", Fixed(3.14159, 4), light_toggle=False, light_intensity=0,
                      battery=5) == \
        "STA {Type AerialVehicle} {Time 3.1416} {LightToggle False} {LightIntensity 0} {Battery 5} {View -1}\r\n"
    assert format_sta("LeggedRobot", "7.5", light_toggle=False, light_intensity=0, battery=1) == \
        "STA {Type LeggedRobot} {Time 7.5} {LightToggle False} {LightIntensity 0} {Battery 1} {View -1}\r\n"
    with pytest.raises(ProtocolError, match="has no FrontSteer"):
        format_sta("AerialVehicle", 1.0, light_toggle=False, light_intensity=0, battery=1,
                   front_steer=0.1)


def test_sen_formatters_with_time_and_extensions():
    assert format_sen_ir([("IR1", 0.5)], time=1.5) == \
        "SEN {Time 1.50} {Type IR} {Name IR1 Range 0.5000}\r\n"
    assert format_sen_range_scanner("Ir", 0.1, 0.2, [1.0], sensor_type="IRScanner") == \
        "SEN {Type IRScanner} {Name Ir} {Resolution 0.1000} {FOV 0.2000} {Range 1.0000}\r\n"
    assert format_sen_range_scanner_3d("S", (0.1, 0.2), (1.0, 0.5), [1.0, 2.0], time=2.0) == \
        ("SEN {Time 2.00} {Type RangeScanner3D} {Name S} {Resolution 0.1000,0.2000} "
         "{FOV 1.0000,0.5000} {Range 1.0000,2.0000}\r\n")
    assert format_sen_ground_truth("GT", (1.0, 2.0, -0.5), (0.0, 0.0, 3.1416)) == \
        ("SEN {Type GroundTruth} {Name GT} {Location 1.0000,2.0000,-0.5000} "
         "{Orientation 0.0000,0.0000,3.1416}\r\n")
    assert format_sen_rfid("RFID", [RfidTag(5), RfidTag(6, "hello", (1.0, 2.0, 3.0))]) == \
        "SEN {Type RFID} {Name RFID} {ID 5} {ID 6 Mem hello Location 1.0000,2.0000,3.0000}\r\n"
    with pytest.raises(ProtocolError):
        format_sen_odometry("Odo", (1.0, 2.0))
    with pytest.raises(ProtocolError):
        format_sen_range_scanner_3d("S", (0.1,), (1.0, 0.5), [1.0])


def test_geo_conf_res_extras():
    assert format_geo_effecters([("Gripper", (0.5, 0, 0), (0, 0, 0), "HARD")]) == \
        ("GEO {Type Effecter} {Name Gripper Location 0.5000,0.0000,0.0000 "
         "Orientation 0.0000,0.0000,0.0000 Mount HARD}\r\n")
    assert format_geo_effecters([("Gripper", (0.5, 0, 0), (0, 0, 0), "TalonArm", 3)], "udk") == \
        ("GEO {Type Effecter} {Name Gripper} {Location 0.5000,0.0000,0.0000} "
         "{Orientation 0.0000,0.0000,0.0000}{Mount TalonArm}{MountLink 3}\r\n")
    assert format_geo_vehicle("AerialVehicle", "AirRobot", (0.999, 0.999, 0.194), (0, 0, 0)) == \
        ("GEO {Type AerialVehicle} {Name AirRobot} {Dimensions 0.9990,0.9990,0.1940} "
         "{COG 0.0000,0.0000,0.0000}\r\n")
    assert format_conf_sensors("Sonar", [("F1", [("MaxRange", 5.0)]),
                                         ("F2", [("MaxRange", 5.0)])]) == \
        "CONF {Type Sonar} {Name F1} {MaxRange 5.0000} {Name F2} {MaxRange 5.0000}\r\n"
    assert format_conf_vehicle("NauticVehicle", "Submarine", "Underwater", 50.0,
                               max_rudder=0.4363, max_stern_plane=0.4363,
                               max_propeller=6.28) == \
        ("CONF {Type NauticVehicle} {Name Submarine} {SteeringType Underwater} {Mass 50.0000} "
         "{MaxRudder 0.4363} {MaxSternPlane 0.4363} {MaxPropeller 6.2800}\r\n")
    assert format_res(1.0, "RFID", "RFID", False) == \
        "RES {Time 1.00} {Type RFID} {Name RFID} {Status Failed}\r\n"
    assert format_res_rfid_read(1.0, "RFID", False) == \
        "RES {Time 1.00} {Type RFID} {Name RFID} {Status Failed}\r\n"
    assert format_res(2.0, "RFIDReleaser", "Rel", 7) == \
        "RES {Time 2.00} {Type RFIDReleaser} {Name Rel} {Status 7}\r\n"
    assert format_res_viewports(1.0, "QuadView", True, [("None", False)]) == \
        ("RES {Time 1.00} {Type Viewports} {Config QuadView} {Status OK} {Viewport1 None} "
         "{Status Failed}\r\n")


def test_format_err_sanitises():
    assert format_err("FOO", "unknown command") == "ERR {Command FOO} {Reason unknown_command}\r\n"
    assert format_err("INIT", "  missing {Location x,y,z}\t\x00") == \
        "ERR {Command INIT} {Reason missing_Location_x,y,z}\r\n"
    assert format_err("{}", "") == "ERR {Command UNKNOWN} {Reason error}\r\n"
    msg = parse_message(format_err("DRIVE", "DRIVE: {Left nan}: not a finite number"))
    assert msg.type == "ERR" and msg.get("Command") == "DRIVE"


# --------------------------------------------------------------------------- real-world lines

def test_udk_sample_lines_parse():
    if FIXTURE is None:
        pytest.skip("shared fixtures not available")
    lines = [ln for ln in FIXTURE.read_text().splitlines() if ln and not ln.startswith("#")]
    assert len(lines) > 30
    for text in lines:
        line = parse_line(text)
        if line.type in ("NFO", "STA", "SEN", "GEO", "CONF", "RES", "MISSTA"):
            parse_message(line)
        else:
            cmd = parse_command(line, ignore_name_case=True)
            if isinstance(cmd, Drive):
                assert cmd.left == 1.0 and cmd.right == 1.0
            if isinstance(cmd, Init):
                assert cmd.location is not None and cmd.start == "Point1"


# --------------------------------------------------------------------------- fast paths = exact paths

@pytest.mark.parametrize("values", [
    [1.0, 2.5, 0.123456], [0, 3, 7], [-0.00001, 1.0], [float("nan")], [], [1e300, -2.0],
    ["word", 2.0], [Fixed(1.0, 2), 3.5],
])
def test_joined_floats_is_the_exact_list_text(values):
    from usarsim.protocol.grammar import format_value, joined_floats
    fast = joined_floats(values)
    try:
        exact = format_value(tuple(values))
    except ProtocolError:
        assert isinstance(fast, tuple)  # the exact path is taken, and raises there
        return
    assert format_value(fast) == exact


def test_udk_single_sensor_line_parses_back():
    from usarsim.protocol.grammar import format_sen_udk, parse_message
    line = format_sen_udk("Sonar", "F1", "Range", 4.469, 12.5)
    assert line == "SEN {Time 12.50} {Type Sonar} {Name F1} {Range 4.4690}\r\n"
    assert parse_message(line).get("Name") == "F1"


def test_misspkg_spelling_takes_the_terminal_pose_with_names_in_any_case():
    cmd = parse_command("MISSPKG {NAME Arm} {LOCATION 0.5,0,0.3} {ROTATION 0,0,0}", ignore_name_case=True)
    assert cmd.location == (0.5, 0.0, 0.3) and cmd.rotation == (0.0, 0.0, 0.0)
