"""Property tests of the text-protocol grammar: round trips, robustness, spec §12 (a)-(e)."""
from __future__ import annotations

import sys
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

try:
    import usarsim  # noqa: F401
except ImportError:  # running from a checkout without an installed package
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from usarsim.protocol.grammar import (  # noqa: E402
    TRACE_COLORS, Camera, CameraFov, ConfLink, Drive, EffecterOpcode, GeoItem, GeoLink, GetConf,
    GetGeo, GetStartPoses, Init, Line, MisPkg, MisPkgLink, MultiDrive, ProtocolError, RfidTag,
    Set, Trace, Wheel, decode_gps, decode_range_readings, decode_start_poses,
    format_command, format_conf_effecters, format_conf_mispkg, format_conf_sensors,
    format_conf_vehicle, format_err, format_geo_mispkg, format_geo_sensors, format_geo_vehicle,
    format_gps_coordinate, format_line, format_missta, format_nfo_game, format_nfo_start_poses,
    format_res, format_res_camera, format_res_rfid_read, format_res_viewports,
    format_sen_encoder, format_sen_gps, format_sen_ground_truth, format_sen_human_motion,
    format_sen_ins, format_sen_odometry, format_sen_range, format_sen_range_scanner,
    format_sen_range_scanner_3d, format_sen_rfid, format_sen_sound, format_sen_touch,
    format_sen_victim, format_sta, parse_command, parse_gps_coordinate, parse_line,
    parse_message,
)

# Few examples each: the whole grammar suite must stay within a few seconds.
FAST = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Numbers on the 4-decimal grid print and read back exactly; 2-decimal ones for Time/poses.
num4 = st.integers(-10**8, 10**8).map(lambda i: i / 10**4)
num2 = st.integers(0, 10**7).map(lambda i: i / 100)
vec3 = st.tuples(num4, num4, num4)
ints = st.integers(-10**6, 10**6)
# Names start with a letter (as every protocol name does); values are any word.
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
WORD_CHARS = LETTERS + "0123456789_.-"
name = st.builds(str.__add__, st.sampled_from(LETTERS), st.text(WORD_CHARS, max_size=8))
word = st.text(WORD_CHARS, min_size=1, max_size=10)
maybe = lambda s: st.none() | s  # noqa: E731


def roundtrip(command):
    return parse_command(format_command(command))


# --------------------------------------------------------------------------- robustness

@FAST
@given(st.binary(max_size=300))
def test_random_bytes_only_raise_protocol_error(data):
    try:
        line = parse_line(data)
    except ProtocolError:
        return
    for parse in (parse_command, parse_message):
        try:
            parse(line)
        except ProtocolError:
            pass


protocolish = st.text(alphabet="{} ,.-+01239eE\tABCDRIVEINTSNameLftRghLocation", max_size=120)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(["DRIVE ", "INIT ", "MISPKG ", "SET ", "MULTIDRIVE ", "TRACE ",
                        "CAMERA ", "GETGEO ", "SEN ", "NFO ", ""]), protocolish)
def test_protocol_like_text_only_raises_protocol_error(prefix, body):
    try:
        line = parse_line(prefix + body)
    except ProtocolError:
        return
    assert all(isinstance(p, str) for p in line.problems)
    for parse in (parse_command, parse_message, decode_start_poses, decode_range_readings):
        try:
            parse(line)
        except ProtocolError:
            pass


# --------------------------------------------------------------------------- spec §12 (a)-(e)

@FAST
@given(vec3, st.sampled_from([", ", " ,", " , ", " "]))
def test_blanks_around_vector_commas_are_accepted(v, sep):
    # real clients write "4.5000, 1.9000, 1.8000" (Iridium) or "4.5 1.9 1.8"
    text = f"INIT {{ClassName USARBot.P2AT}} {{Location {sep.join(map(str, v))}}} {{Name R1}}"
    line = parse_line(text)
    assert line.get_vector("Location") == v and line.get("Name") == "R1" and line.problems == ()


@FAST
@given(vec3, st.sampled_from([",,", ", ,", ",  ,"]))
def test_an_empty_vector_element_is_malformed(v, sep):
    text = f"INIT {{ClassName USARBot.P2AT}} {{Location {sep.join(map(str, v))}}} {{Name R1}}"
    line = parse_line(text)
    assert "Location" not in line and line.get("Name") == "R1"
    assert len(line.problems) == 1 and "malformed segment" in line.problems[0]


@FAST
@given(st.sampled_from(["true", "TRUE", "True", "tRuE", "1"]),
       st.sampled_from(["light", "LIGHT", "lIGHT"]))
def test_b_values_are_case_insensitive_names_are_not(value, wrong_name):
    assert parse_command(f"DRIVE {{Light {value}}}") == Drive(light=True)
    assert parse_command(f"DRIVE {{{wrong_name} {value}}}") == Drive()


pair_lists = st.lists(st.tuples(st.sampled_from(["Status", "Name", "Link", "Value", "X"]), word),
                      min_size=1, max_size=12)


@FAST
@given(pair_lists, st.booleans())
def test_c_repeated_names_keep_their_order(pairs, grouped):
    segments = [pairs] if grouped else pairs
    line = parse_line(format_line("RES", segments))
    assert line.pairs == tuple(pairs)
    assert line.get_all("Status") == tuple(v for n, v in pairs if n == "Status")


@FAST
@given(pair_lists, st.sampled_from(["", "\n", "\r\n"]))
def test_d_terminator_does_not_change_the_line(pairs, ending):
    text = format_line("SEN", pairs)
    assert text.endswith("\r\n")
    assert parse_line(text[:-2] + ending) == parse_line(text)


drives = st.builds(Drive, left=maybe(num4), right=maybe(num4), normalized=maybe(st.booleans()),
                   light=maybe(st.booleans()))


@FAST
@given(drives, st.lists(st.tuples(st.sampled_from(["Turbo", "left", "Colour", "X1"]), word),
                        max_size=4), st.randoms(use_true_random=False))
def test_e_unknown_segments_are_ignored(drive, extra, rnd):
    segments = list(Drive.segments(drive)) + extra
    rnd.shuffle(segments)
    assert parse_command(format_line("DRIVE", segments)) == drive


# --------------------------------------------------------------------------- generic round trip

@FAST
@given(st.lists(st.lists(st.tuples(name, word), min_size=1, max_size=4), max_size=8))
def test_format_then_parse_gives_the_same_pairs(segments):
    line = parse_line(format_line("GEO", segments))
    assert line.problems == ()
    assert line.pairs == tuple(p for seg in segments for p in seg)


@FAST
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e9, max_value=1e9),
                min_size=1, max_size=20))
def test_any_float_list_reads_back_within_printed_precision(values):
    line = parse_line(format_line("SEN", [("Range", values)]))
    back = line.get_floats("Range")
    assert len(back) == len(values)
    assert all(abs(a - b) <= 0.5e-4 + 1e-9 * abs(b) for a, b in zip(back, values))


# --------------------------------------------------------------------------- commands

inits = st.one_of(
    st.builds(Init, class_name=word, name=maybe(word), location=vec3, rotation=maybe(vec3),
              start=maybe(word)),
    st.builds(Init, class_name=word, name=maybe(word), start=word),
)
wheels = st.lists(st.builds(Wheel, number=st.integers(0, 9), speed=maybe(num4),
                            steer=maybe(num4)), max_size=3).map(tuple)
full_drives = st.builds(
    Drive, left=maybe(num4), right=maybe(num4), normalized=maybe(st.booleans()),
    light=maybe(st.booleans()), flip=maybe(st.booleans()), speed=maybe(num4),
    front_steer=maybe(num4), rear_steer=maybe(num4), propeller=maybe(num4), rudder=maybe(num4),
    stern_plane=maybe(num4), altitude_velocity=maybe(num4), linear_velocity=maybe(num4),
    lateral_velocity=maybe(num4), rotational_velocity=maybe(num4), wheels=wheels,
    name=maybe(word), steer=maybe(num4), order=maybe(st.integers(0, 2)), value=maybe(num4),
    xz_angle=maybe(num4), thrust_propeller=maybe(num4), tail_propeller=maybe(num4))
multidrives = st.builds(MultiDrive, st.lists(st.tuples(name, num4), min_size=1,
                                             max_size=6).map(tuple))
mispkgs = st.builds(MisPkg, name=word, links=st.lists(
    st.builds(MisPkgLink, st.integers(1, 9), num4, st.integers(0, 2)),
    min_size=1, max_size=5).map(tuple))
sets = st.one_of(
    st.builds(Set, type=word, name=maybe(word), opcode=maybe(word), params=maybe(word)),
    st.builds(Set, type=st.just("Viewports"), config=maybe(word),
              viewports=st.tuples(*[maybe(word)] * 4)),
    st.builds(Set, type=st.just("Camera"), robot=maybe(word), name=maybe(word), client=word),
    st.lists(st.builds(CameraFov, word, num4), min_size=1, max_size=3).map(
        lambda cams: Set("Camera", name=cams[0].name, cameras=tuple(cams))),
)
queries = st.one_of(st.builds(GetGeo, word, maybe(word)), st.builds(GetConf, word, maybe(word)),
                    st.just(GetStartPoses()))
traces = st.builds(Trace, on=maybe(st.booleans()), interval=maybe(num4),
                   color=maybe(st.sampled_from(TRACE_COLORS)))
cameras = st.builds(Camera, rotation=maybe(vec3), order=maybe(st.integers(0, 1)),
                    zoom=maybe(num4))
commands = st.one_of(inits, full_drives, multidrives, mispkgs, sets, queries, traces, cameras)


@settings(max_examples=150, deadline=None)
@given(commands)
def test_every_command_round_trips(command):
    assert roundtrip(command) == command


@FAST
@given(st.floats(-1e6, 1e6, allow_nan=False), st.floats(-1e6, 1e6, allow_nan=False))
def test_drive_with_any_floats_round_trips_within_precision(left, right):
    back = roundtrip(Drive(left=left, right=right))
    assert abs(back.left - left) <= 0.5e-4 + 1e-9 and abs(back.right - right) <= 0.5e-4 + 1e-9


# --------------------------------------------------------------------------- messages

time2 = num2
times = st.none() | num2


@FAST
@given(word, word, st.integers(0, 10**6))
def test_nfo_game_round_trips(gametype, level, limit):
    msg = parse_message(format_nfo_game(gametype, level, limit))
    assert (msg.get("Gametype"), msg.get("Level"), msg.get_int("TimeLimit")) == \
        (gametype, level, limit)


pose_num = st.integers(-10**6, 10**6).map(lambda i: i / 100)
pose3 = st.tuples(pose_num, pose_num, pose_num)


@FAST
@given(st.lists(st.tuples(name, pose3, pose3), max_size=6))
def test_start_poses_round_trip(poses):
    back = decode_start_poses(format_nfo_start_poses(poses))
    assert [tuple(p) for p in back] == [tuple(p) for p in poses]


vehicle = st.sampled_from(["GroundVehicle", "NauticVehicle", "AerialVehicle", "LeggedRobot"])


@FAST
@given(vehicle, time2, st.booleans(), st.integers(0, 100), st.integers(0, 10**5), num4, num4)
def test_sta_round_trips(vtype, time, light, intensity, battery, a, b):
    kwargs = {}
    if vtype == "GroundVehicle":
        kwargs = {"front_steer": a, "rear_steer": b}
    elif vtype == "NauticVehicle":
        kwargs = {"stern_plane_angle": a, "rudder_angle": b}
    msg = parse_message(format_sta(vtype, time, light_toggle=light, light_intensity=intensity,
                                   battery=battery, **kwargs))
    assert msg.kind == vtype and msg.time == time
    assert msg.get_bool("LightToggle") is light
    assert msg.get_int("LightIntensity") == intensity and msg.get_int("Battery") == battery
    for key, wire in (("front_steer", "FrontSteer"), ("rear_steer", "RearSteer"),
                      ("stern_plane_angle", "SternPlaneAngle"), ("rudder_angle", "RudderAngle")):
        assert msg.get_float(wire) == kwargs.get(key)


@FAST
@given(time2, word, st.lists(st.tuples(st.integers(1, 9), num4, num4), max_size=5))
def test_missta_round_trips(time, pkg, links):
    msg = parse_message(format_missta(time, pkg, links))
    assert msg.time == time and msg.get("Name") == pkg
    back = [(Line("", g).get_int("Link"), Line("", g).get_float("Value"),
             Line("", g).get_float("Torque")) for g in msg.groups("Link")]
    assert back == links


@FAST
@given(st.sampled_from(["Sonar", "IR"]), st.lists(st.tuples(name, num4), max_size=8), times)
def test_sen_range_round_trips(kind, readings, time):
    msg = parse_message(format_sen_range(kind, readings, time))
    assert msg.kind == kind and msg.time == time
    assert list(decode_range_readings(msg)) == readings


@FAST
@given(word, num4, num4, st.lists(num4, min_size=1, max_size=50), times,
       st.sampled_from(["RangeScanner", "IRScanner"]))
def test_sen_range_scanner_round_trips(sensor, res, fov, ranges, time, kind):
    msg = parse_message(format_sen_range_scanner(sensor, res, fov, ranges, time, kind))
    assert (msg.kind, msg.get("Name"), msg.get_float("Resolution"), msg.get_float("FOV")) == \
        (kind, sensor, res, fov)
    assert list(msg.get_floats("Range")) == ranges and msg.time == time


@FAST
@given(word, st.tuples(num4, num4), st.tuples(num4, num4), st.lists(num4, min_size=1,
                                                                    max_size=50), times)
def test_sen_range_scanner_3d_round_trips(sensor, res, fov, ranges, time):
    msg = parse_message(format_sen_range_scanner_3d(sensor, res, fov, ranges, time))
    assert msg.get_vector("Resolution", 2) == res and msg.get_vector("FOV", 2) == fov
    assert list(msg.get_floats("Range")) == ranges and msg.time == time


@FAST
@given(word, vec3, vec3, times, st.sampled_from(["INS", "GroundTruth", "Odometry"]))
def test_sen_pose_sensors_round_trip(sensor, location, orientation, time, kind):
    if kind == "INS":
        line = format_sen_ins(sensor, location, orientation, time)
    elif kind == "GroundTruth":
        line = format_sen_ground_truth(sensor, location, orientation, time)
    else:
        line = format_sen_odometry(sensor, location, time)
    msg = parse_message(line)
    assert msg.kind == kind and msg.get("Name") == sensor and msg.time == time
    if kind == "Odometry":
        assert msg.get_vector("Pose") == location
    else:
        assert msg.get_vector("Location") == location
        assert msg.get_vector("Orientation") == orientation


@FAST
@given(word, st.floats(-90, 90), st.floats(-180, 180), st.integers(0, 1), st.integers(0, 12),
       times)
def test_sen_gps_round_trips_within_printed_precision(sensor, lat, lon, fix, sats, time):
    msg = parse_message(format_sen_gps(sensor, lat, lon, fix, sats, time))
    if not fix:  # no fix, no position (GPSSensor.GetData)
        assert msg.get("Latitude") is None and msg.get("Longitude") is None
        return
    back_lat, back_lon = decode_gps(msg)
    # 4 decimals of a minute = 1/600000 degree; half of that is the rounding error.
    assert abs(back_lat - lat) <= 1e-6 and abs(back_lon - lon) <= 1e-6
    assert (msg.get_int("Fix"), msg.get_int("Satellites"), msg.time) == (fix, sats, time)


@FAST
@given(st.floats(-180, 180), st.booleans())
def test_gps_coordinate_round_trips(value, is_latitude):
    value = value / 2 if is_latitude else value
    assert abs(parse_gps_coordinate(format_gps_coordinate(value, is_latitude)) - value) <= 1e-6


@FAST
@given(st.lists(st.tuples(name, ints), max_size=6), st.lists(st.tuples(name, st.booleans()),
                                                             max_size=6), times)
def test_sen_encoder_and_touch_round_trip(ticks, touches, time):
    enc = parse_message(format_sen_encoder(ticks, time))
    assert [(Line("", g).get("Name"), Line("", g).get_int("Tick")) for g in enc.groups("Name")] \
        == ticks
    touch = parse_message(format_sen_touch(touches, time))
    assert [(Line("", g).get("Name"), Line("", g).get_bool("Touch"))
            for g in touch.groups("Name")] == touches


@FAST
@given(word, st.lists(st.builds(RfidTag, st.integers(-1, 5000), maybe(word), maybe(vec3)),
                      max_size=5), times)
def test_sen_rfid_round_trips(sensor, tags, time):
    msg = parse_message(format_sen_rfid(sensor, tags, time))
    back = [RfidTag(Line("", g).get_int("ID"), Line("", g).get("Mem"),
                    Line("", g).get_vector("Location")) for g in msg.groups("ID")]
    assert back == tags and msg.get("Name") == sensor


@FAST
@given(word, st.lists(st.tuples(st.sampled_from(["Head", "Arm", "Leg"]), vec3), max_size=5),
       num4, num4, num4, times)
def test_sen_victim_motion_sound_round_trip(sensor, parts, prob, loud, dur, time):
    victim = parse_message(format_sen_victim(sensor, parts, time))
    assert [(Line("", g).get("PartName"), Line("", g).get_vector("Location"))
            for g in victim.groups("PartName")] == parts
    assert parse_message(format_sen_human_motion(sensor, prob, time)).get_float("Prob") == prob
    sound = parse_message(format_sen_sound(sensor, loud, dur, time))
    assert (sound.get_float("Loudness"), sound.get_float("Duration")) == (loud, dur)


@FAST
@given(vehicle, word, vec3, vec3, maybe(num4), maybe(num4), maybe(num4))
def test_geo_vehicle_round_trips(vtype, robot, dims, cog, radius, sep, base):
    msg = parse_message(format_geo_vehicle(vtype, robot, dims, cog, wheel_radius=radius,
                                           wheel_separation=sep, wheelbase=base))
    assert (msg.kind, msg.get("Name"), msg.get_vector("Dimensions"), msg.get_vector("COG")) == \
        (vtype, robot, dims, cog)
    assert (msg.get_float("WheelRadius"), msg.get_float("WheelSeparation"),
            msg.get_float("WheelBase")) == (radius, sep, base)


@FAST
@given(word, st.lists(st.builds(GeoItem, word, vec3, vec3, word, maybe(st.integers(1, 9))), max_size=4),
       st.sampled_from(["ut2004", "udk"]))
def test_geo_sensors_round_trip(kind, items, dialect):
    msg = parse_message(format_geo_sensors(kind, items, dialect))
    back = [GeoItem(g.get("Name"), g.get_vector("Location"), g.get_vector("Orientation"),
                    g.get("Mount"), g.get_int("MountLink")) for g in (Line("", grp) for grp in msg.groups("Name"))]
    # UT2004 has no MountLink: the link is part of the mount's name there
    assert back == [item._replace(mount_link=None) if dialect == "ut2004" else item for item in items]


@FAST
@given(st.lists(st.tuples(word, st.lists(st.builds(GeoLink, st.integers(1, 9),
                                                   st.integers(-1, 9), vec3, vec3),
                                         max_size=3)), max_size=3))
def test_geo_mispkg_round_trips(packages):
    msg = parse_message(format_geo_mispkg(packages))
    links = [GeoLink(g.get_int("Link"), g.get_int("ParentLink"), g.get_vector("Location"),
                     g.get_vector("Orientation"))
             for g in (Line("", grp) for grp in msg.groups("Link"))]
    assert msg.get_all("Name") == tuple(p for p, _ in packages)
    assert links == [link for _, ls in packages for link in ls]


@FAST
@given(vehicle, word, word, num4, maybe(num4), maybe(num4), maybe(num4))
def test_conf_vehicle_round_trips(vtype, robot, steering, mass, speed, torque, rudder):
    msg = parse_message(format_conf_vehicle(vtype, robot, steering, mass, max_speed=speed,
                                            max_torque=torque, max_rudder=rudder))
    assert (msg.kind, msg.get("Name"), msg.get("SteeringType"), msg.get_float("Mass")) == \
        (vtype, robot, steering, mass)
    assert (msg.get_float("MaxSpeed"), msg.get_float("MaxTorque"),
            msg.get_float("MaxRudder")) == (speed, torque, rudder)


@FAST
@given(word, st.lists(st.tuples(word, st.lists(st.tuples(name.filter(
    lambda n: n != "Name"), num4), max_size=3)), max_size=3), st.booleans())
def test_conf_sensors_round_trip(kind, sensors, tight):
    msg = parse_message(format_conf_sensors(kind, sensors, tight))
    assert msg.kind == kind
    expected = [p for nm, fs in sensors for p in [("Name", nm)] + fs]
    assert list(msg.pairs[1:]) == [(n, v if isinstance(v, str) else f"{v:.4f}".replace(
        "-0.0000", "0.0000")) for n, v in expected]


@FAST
@given(st.lists(st.tuples(word, st.lists(st.builds(EffecterOpcode, word, num4, num4),
                                         min_size=1, max_size=3)), max_size=3),
       st.lists(st.tuples(word, st.lists(st.builds(ConfLink, st.integers(1, 9),
                                                   st.sampled_from(["Revolute", "Prismatic"]),
                                                   num4, num4, num4, num4), max_size=3)),
                max_size=3))
def test_conf_effecters_and_mispkg_round_trip(effecters, packages):
    eff = parse_message(format_conf_effecters(effecters))
    assert [EffecterOpcode(g.get("Opcode"), g.get_float("MaxVal"), g.get_float("MinVal"))
            for g in (Line("", grp) for grp in eff.groups("Opcode"))] == \
        [op for _, ops in effecters for op in ops]
    mis = parse_message(format_conf_mispkg(packages))
    assert [ConfLink(g.get_int("Link"), g.get("JointType"), g.get_float("MaxSpeed"),
                     g.get_float("MaxTorque"), g.get_float("MinRange"), g.get_float("MaxRange"))
            for g in (Line("", grp) for grp in mis.groups("Link"))] == \
        [link for _, ls in packages for link in ls]


@FAST
@given(time2, word, maybe(word), st.booleans(), st.lists(st.tuples(word, num4, st.booleans()),
                                                          max_size=3),
       st.lists(st.tuples(word, st.booleans()), max_size=4), maybe(ints), maybe(word))
def test_res_round_trips(time, kind, item, ok, cams, viewports, tag, mem):
    res = parse_message(format_res(time, kind, item, ok))
    assert (res.time, res.kind, res.get("Name"), res.get("Status")) == \
        (time, kind, item, "OK" if ok else "Failed")
    cam = parse_message(format_res_camera(time, cams))
    assert [(g.get("Name"), g.get_float("FOV"), g.get("Status") == "OK")
            for g in (Line("", grp) for grp in cam.groups("Name"))] == cams
    vp = parse_message(format_res_viewports(time, "QuadView", ok, viewports))
    assert vp.get_all("Status") == tuple("OK" if s else "Failed"
                                         for s in [ok] + [v for _, v in viewports])
    rfid = parse_message(format_res_rfid_read(time, "RFID", ok, tag, mem))
    assert (rfid.get_int("ID"), rfid.get("Mem")) == (tag, mem)


@FAST
@given(st.text(max_size=40), st.text(max_size=80))
def test_err_line_is_always_well_formed(command, reason):
    line = format_err(command, reason)
    msg = parse_message(line)
    assert msg.problems == () and [n for n, _ in msg.pairs] == ["Command", "Reason"]
