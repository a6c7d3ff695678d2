"""Pure tests of the protocol edge: readings -> SEN/STA/MISSTA, specs -> GEO/CONF, commands -> core commands."""
from __future__ import annotations

import math

import pytest

from usarsim.protocol import commands as pc
from usarsim.protocol import grammar as g
from usarsim.protocol import messages as pm
from usarsim.sim import readings as rd
from usarsim.sim.catalogue import load_robot
from usarsim.sim.commands import (AckermannDrive, AerialDrive, Flip, JointTargets, SensorCommand, SetLight,
                                  WheelDrive)
from usarsim.sim.sensors.base import CommandResult

H = {"time": 12.5, "robot": "R1", "frame": "base_link"}


@pytest.fixture(scope="module")
def p2at():
    return load_robot("P2AT")


def _msg(line: str) -> g.Message:
    assert line.endswith("\r\n")
    return g.parse_message(line)


# --------------------------------------------------------------------------- readings

def test_sta_negates_steer_and_floors_battery():
    state = rd.RobotState(sensor="State", vehicle_type="GroundVehicle", battery=3564.9, battery_life=3600,
                          light_on=False, light_intensity=0, front_steer=0.2, rear_steer=0.0, **H)
    [(kind, line)] = pm.format_readings([state])
    assert kind == "STA"
    msg = _msg(line)
    assert msg.get_float("FrontSteer") == pytest.approx(-0.2)
    assert msg.get("Battery") == "3564" and msg.get("LightToggle") == "False"
    assert msg.get("Time") == "12.50"


def test_odometry_ins_ground_truth_frames():
    odo = rd.OdometryReading(sensor="Odometry", x=1.0, y=0.5, theta=0.3, linear_velocity=0, angular_velocity=0,
                             pose_variance=(0, 0, 0), twist_variance=(0, 0), **H)
    pose = _msg(pm.format_readings([odo])[0][1]).get_vector("Pose")
    assert pose == pytest.approx((1.0, -0.5, -0.3))
    ins = rd.InsReading(sensor="INS", position=(1.0, 2.0, 3.0), rpy=(0.1, 0.2, 0.3), angular_velocity=(0, 0, 0),
                        linear_acceleration=(0, 0, 0), position_variance=0, orientation_variance=0,
                        angular_velocity_variance=0, linear_acceleration_variance=0, **H)
    msg = _msg(pm.format_readings([ins])[0][1])
    assert msg.get_vector("Location") == pytest.approx((1.0, -2.0, -3.0))
    r, p, y = msg.get_vector("Orientation")
    assert (r, p, y) == pytest.approx((0.1, 2 * math.pi - 0.2, 2 * math.pi - 0.3), abs=1e-3)  # [0, 2pi)


def test_range_scanner_order_and_fields():
    n = 181
    scan = rd.RangeScan(sensor="Scanner", ranges=tuple(float(i) / 10 for i in range(n)), angle_min=-math.pi / 2,
                        angle_increment=math.pi / (n - 1), range_min=0, range_max=20, scan_time=0.0, **H)
    msg = _msg(pm.format_readings([scan])[0][1])
    assert msg.get("Type") == "RangeScanner" and msg.get("Name") == "Scanner"
    ranges = msg.get_floats("Range")
    assert len(ranges) == n and ranges[0] == 0.0 and ranges[-1] == pytest.approx(18.0)  # beam 0 rightmost (D9)
    assert msg.get_float("FOV") == pytest.approx(math.pi, abs=1e-3)
    assert "Time" not in msg


def test_grouped_sonar_and_timestamps():
    sonars = [rd.RangeReading(sensor=f"F{i}", range=1.0 + i, range_min=0.1, range_max=5, field_of_view=0.3, **H)
              for i in (1, 2, 3)]
    gps = rd.GpsReading(sensor="GPS", latitude=39.5, longitude=-77.25, altitude=0, fix=True, satellites=8,
                        horizontal_sigma=1, **H)
    lines = pm.format_readings(sonars + [gps], lambda robot, sensor: sensor == "F2")
    assert [k for k, _ in lines] == ["SEN", "SEN"]
    sonar = _msg(lines[0][1])
    assert sonar.get("Time") == "12.50"  # one stamped member stamps the shared line
    assert g.decode_range_readings(sonar) == (("F1", 2.0), ("F2", 3.0), ("F3", 4.0))
    lat, lon = g.decode_gps(lines[1][1])
    assert lat == pytest.approx(39.5) and lon == pytest.approx(-77.25)
    assert "{Latitude 39,30.0000,N}" in lines[1][1]


def test_missta_and_skipped_readings():
    pkg = rd.MissionPackageState(sensor="CameraPanTilt", package="CameraPanTilt", links=(1, 2), values=(0.1, -0.2),
                                 torques=(0.0, 1.5), **H)
    image = rd.CameraImage(sensor="Camera", width=1, height=1, rgb=b"\0\0\0", horizontal_fov=1.0, **H)
    lines = pm.format_readings([pkg, image])
    assert len(lines) == 1 and lines[0][0] == "MISSTA"
    msg = _msg(lines[0][1])
    assert msg.get_all("Value") == ("0.1000", "-0.2000") and msg.get("Name") == "CameraPanTilt"


def test_victim_and_rfid_in_sae():
    victim = rd.VictimReading(sensor="Victim", parts=(rd.VictimPartSeen("Head", (2.0, 0.5, 0.1), "V1"),), **H)
    msg = _msg(pm.format_readings([victim])[0][1])
    assert msg.get("PartName") == "Head" and msg.get_vector("Location") == pytest.approx((2.0, -0.5, -0.1))
    assert "V1" not in pm.format_readings([victim])[0][1]  # ground truth id never reaches clients
    rfid = rd.RfidReading(sensor="RFID", tags=(rd.RfidTagSeen(7, "hello", (1, 1, 0), -50.0),), memory_read=True, **H)
    line = pm.format_readings([rfid])[0][1]
    assert "{ID 7 Mem hello}" in line


# --------------------------------------------------------------------------- NFO, GEO, CONF

def test_nfo_lines():
    assert pm.nfo_game("DM-USAR_yellow") == "NFO {Gametype BotDeathMatch} {Level DM-USAR_yellow} {TimeLimit 0}\r\n"

    class Pose:
        def __init__(self, tag, xyz, rpy):
            self.tag, self.xyz, self.rpy = tag, xyz, rpy

    line = pm.nfo_start_poses([Pose("Start1", (4.5, 1.9, 0.0), (0.0, 0.0, 0.5))])
    [pose] = g.decode_start_poses(line)
    # SAE, at the standard spawn height: 0.188 m above the floor is z = -0.19 (z down)
    assert pose.tag == "Start1" and pose.location == pytest.approx((4.5, -1.9, -0.19))
    assert pose.rotation[2] == pytest.approx(-0.5)


def test_geo_conf_of_p2at(p2at):
    geo = _msg(pm.geo_robot(p2at, "R1"))
    assert geo.get("Type") == "GroundVehicle"
    assert geo.get_float("WheelSeparation") == pytest.approx(0.415)
    sonar = _msg(pm.geo_sensors(p2at, "Sonar", "F1"))
    assert sonar.get("Mount") == "HARD"  # the chassis, as USARSim 3.x names it
    assert sonar.get_vector("Location") == pytest.approx((0.145, -0.13, -0.10))
    assert sonar.get_vector("Orientation")[2] == pytest.approx(-1.5708, abs=1e-4)  # left in FLU = -yaw in SAE
    assert pm.geo_sensors(p2at, "Touch") is None
    conf = _msg(pm.conf_robot(p2at, "R1"))
    assert conf.get("SteeringType") == "SkidSteered" and conf.get_float("MaxSpeed") == pytest.approx(6.4)
    mis = _msg(pm.conf_mispkg(p2at))
    assert mis.get_all("MinRange")[0] == "1.0000" and mis.get_all("MaxRange")[0] == "0.0000"  # unconstrained pan
    geo_mis = _msg(pm.geo_mispkg(p2at))
    assert geo_mis.get_all("ParentLink") == ("-1", "1")
    cam = _msg(pm.conf_sensors(p2at, "Camera", current={"Camera": {"fov": 1.0}}))
    assert cam.get_float("CameraFov") == pytest.approx(1.0) and cam.get("Name") == "Camera"


# --------------------------------------------------------------------------- commands

def test_drive_skid(p2at):
    cmds = pc.drive_commands(g.parse_command("DRIVE {Left 1.5} {Right -1} {Light true} {Flip true}"), "R1", p2at)
    assert cmds == [WheelDrive("R1", 1.5, -1.0, False), SetLight("R1", True), Flip("R1")]
    [norm] = pc.drive_commands(g.parse_command("DRIVE {Left 50} {Right 50} {Normalized True}"), "R1", p2at)
    assert norm.normalized is True
    # a line of which nothing fits the vehicle is refused, naming what did not apply
    with pytest.raises(pc.Unsupported, match="Speed/FrontSteer/RearSteer do not apply"):
        pc.drive_commands(g.parse_command("DRIVE {Speed 1}"), "R1", p2at)
    with pytest.raises(pc.Unsupported, match="AltitudeVelocity"):
        pc.drive_commands(g.parse_command("DRIVE {AltitudeVelocity 1}"), "R1", p2at)
    with pytest.raises(pc.Unsupported, match="Propeller/Rudder/SternPlane do not apply"):
        pc.drive_commands(g.parse_command("DRIVE {Propeller 1}"), "R1", p2at)


IRIDIUM_STOP = ("DRIVE {Left 0} {Right 0} {Speed 0} {AltitudeVelocity 0} {LinearVelocity 0} "
                "{LateralVelocity 0} {RotationalVelocity 0}")


def test_drive_applies_the_fields_that_fit_and_ignores_the_rest(p2at):
    # Iridium's Stop button sends one line for every vehicle type; each robot takes its part
    assert pc.drive_commands(g.parse_command(IRIDIUM_STOP), "R1", p2at) == [WheelDrive("R1", 0.0, 0.0, False)]
    hummer, air = load_robot("Hummer"), load_robot("AirRobot")
    assert pc.drive_commands(g.parse_command(IRIDIUM_STOP), "H", hummer) == [AckermannDrive("H", 0.0, 0.0, 0.0, False)]
    assert pc.drive_commands(g.parse_command(IRIDIUM_STOP), "A", air) == [AerialDrive("A", 0.0, 0.0, 0.0, 0.0)]
    # a ROS 1 bridge names the robot in DRIVE: not a joint drive
    assert pc.drive_commands(g.parse_command("DRIVE {Name robot_0} {Left 1} {Right 2}"), "R1", p2at) == \
        [WheelDrive("R1", 1.0, 2.0, False)]


def test_drive_ackermann_and_aerial_signs():
    hummer, air = load_robot("Hummer"), load_robot("AirRobot")
    [ack] = pc.drive_commands(g.parse_command("DRIVE {Speed 2} {FrontSteer 0.5}"), "H", hummer)
    assert ack == AckermannDrive("H", 2.0, -0.5, 0.0, False)  # SAE +right -> core +left
    [aer] = pc.drive_commands(g.parse_command(
        "DRIVE {AltitudeVelocity 1} {LinearVelocity 2} {LateralVelocity 0.5} {RotationalVelocity 0.1}"), "A", air)
    assert aer == AerialDrive("A", linear=2.0, lateral=-0.5, altitude=1.0, yaw_rate=-0.1)


def test_joint_level_multidrive_mispkg(p2at):
    cmds = pc.drive_commands(g.parse_command("DRIVE {Name camera_pan_joint} {Order 1} {Value 0.1}"), "R1", p2at)
    assert cmds == [JointTargets("R1", {"camera_pan_joint": 0.1}, order=1)]
    assert pc.multidrive_commands(g.parse_command("MULTIDRIVE {FRFlipper 1} {FLFlipper 1}"), "R1", p2at) == [
        JointTargets("R1", {"FRFlipper": 1.0, "FLFlipper": 1.0}, order=0)]
    cmds = pc.mispkg_commands(g.parse_command("MISPKG {Name CameraPanTilt} {Link 1} {Value 1.5} {Link 2} {Value 0.1} {Order 1}"),
                              "R1", p2at)
    assert cmds == [JointTargets("R1", {"CameraPanTilt:1": 1.5}, order=0),
                    JointTargets("R1", {"CameraPanTilt:2": 0.1}, order=1)]
    with pytest.raises(pc.Unsupported, match="no mission package"):
        pc.mispkg_commands(g.parse_command("MISPKG {Name Arm} {Link 1} {Value 1}"), "R1", p2at)
    with pytest.raises(pc.Unsupported, match="links 1..2"):
        pc.mispkg_commands(g.parse_command("MISPKG {Name CameraPanTilt} {Link 3} {Value 1}"), "R1", p2at)


def test_spawn_request_converts_frame():
    req = pc.spawn_request(g.parse_command("INIT {ClassName USARBot.P2AT} {Location 4.5,1.9,-0.2} {Rotation 0,0.1,1.0}"))
    assert req.position == pytest.approx((4.5, -1.9, 0.2)) and req.rpy == pytest.approx((0.0, -0.1, -1.0))
    assert req.start is None
    req = pc.spawn_request(g.parse_command("INIT {ClassName USARBot.P2DX} {Name Robot1} {Start PlayerStart}"))
    assert (req.name, req.start, req.position) == ("Robot1", "PlayerStart", None)
    assert not req.station
    station = pc.spawn_request(g.parse_command("INIT {ClassName USARBot.ComStation} {Location 1,1,-0.5}"))
    assert station.station and station.position == pytest.approx((1.0, -1.0, 0.5))


def test_set_requests_and_replies(p2at):
    req = pc.set_request(g.parse_command("SET {Type Odometry} {Name Odo1} {Opcode RESET} {Params 1}"), "R1", p2at)
    assert req.commands == (SensorCommand("R1", "Odo1", "RESET", ("1",)),)
    assert pc.set_reply(req, 61.2, [CommandResult(True)]) == "RES {Time 61.20} {Type Odometry} {Name Odo1} {Status OK}\r\n"
    assert "Failed" in pc.set_reply(req, 1.0, [CommandResult(False)])
    # a failure says why (the device's message) in a last {Reason} segment; a success has none
    assert pc.set_reply(req, 1.0, [CommandResult(False, message="Odometry 'Odo1' has no opcode 'RESTE'")]) == \
        "RES {Time 1.00} {Type Odometry} {Name Odo1} {Status Failed} {Reason Odometry_'Odo1'_has_no_opcode_'RESTE'}\r\n"
    unknown = pc.set_request(g.parse_command("SET {Type Gripper} {Opcode Open}"), "R1", p2at)
    assert pc.set_reply(unknown, 1.0, []).endswith("{Status Failed} {Reason this_robot_has_no_device_of_type_Gripper}\r\n")
    # no Name: the robot's first sensor of the type
    req = pc.set_request(g.parse_command("SET {Type Odometry} {Opcode RESET}"), "R1", p2at)
    assert req.names == ("Odometry",)
    # INS POSE converted to the core frame; missing commas -> Failed without a command
    req = pc.set_request(g.parse_command("SET {Type INS} {Name INS} {Opcode POSE} {Params 1,2,3,0.1,0.2,0.3}"), "R1", p2at)
    assert req.commands[0].params == pytest.approx((1.0, -2.0, -3.0, 0.1, -0.2, -0.3))
    bad = pc.set_request(g.parse_command("SET {Type INS} {Name INS} {Opcode POSE} {Params 1}"), "R1", p2at)
    assert bad.kind == "failed" and not bad.commands
    assert pc.set_reply(bad, 2.0, []) == ("RES {Time 2.00} {Type INS} {Name INS} {Status Failed} "
                                          "{Reason POSE_needs_six_numbers_x,y,z,roll,pitch,yaw}\r\n")
    # camera FOV: RES Camera with the FOV in force
    cam = pc.set_request(g.parse_command("SET {Type Camera} {Name Camera} {FOV 5}"), "R1", p2at)
    assert cam.commands == (SensorCommand("R1", "Camera", "FOV", (5.0,)),)
    line = pc.set_reply(cam, 3.0, [CommandResult(True, (("FOV", 2.0944),))])
    assert line == "RES {Time 3.00} {Type Camera} {Name Camera FOV 2.0944 Status OK}\r\n"
    line = pc.set_reply(cam, 3.0, [CommandResult(False, message="FOV needs a number")])
    assert line == "RES {Time 3.00} {Type Camera} {Name Camera FOV 0.0000 Status Failed Reason FOV_needs_a_number}\r\n"
    # joint: Angle is relative
    joint = pc.set_request(g.parse_command("SET {Type Joint} {Name camera_pan_joint} {Opcode Angle} {Params 0.5}"), "R1", p2at)
    assert joint.commands == (JointTargets("R1", {"camera_pan_joint": 0.5}, order=0, relative=True),)
    assert pc.set_reply(joint, 1.0, [ValueError("no joint")]).endswith("{Status Failed} {Reason no_joint}\r\n")
    # RFID read result fields are appended
    rfid = pc.set_request(g.parse_command("SET {Type RFID} {Name RFID} {Opcode Read} {Params 7}"), "R1", p2at)
    assert pc.set_reply(rfid, 12.3, [CommandResult(True, (("ID", 7), ("Mem", "0")))]) == \
        "RES {Time 12.30} {Type RFID} {Name RFID} {Status OK} {ID 7} {Mem 0}\r\n"
    # the manual writes RFID parameters blank-separated
    write = pc.set_request(g.parse_command("SET {Type RFID} {Name RFID} {Opcode Write} {Params 1001 victim_here}"),
                           "R1", load_robot("RescueP2AT"))
    assert write.commands == (SensorCommand("R1", "RFID", "Write", ("1001", "victim_here")),)


def test_rescue_variant_is_the_p2at_plus_the_rescue_devices(p2at):
    rescue = load_robot("RescueP2AT")
    assert {s.type for s in p2at.sensors} & {"RFID", "VictSensor"} == {"RFID"} and p2at.effecters == []
    assert [s.name for s in rescue.sensors] == [s.name for s in p2at.sensors] + ["VictSensor"]
    assert [e.type for e in rescue.effecters] == ["RFIDReleaser"]
    assert (rescue.class_name, rescue.drive, rescue.body) == ("RescueP2AT", p2at.drive, p2at.body)


def test_viewports_reply(p2at):
    req = pc.set_request(g.parse_command(
        "SET {Type Viewports} {Config QuadView} {Viewport1 Camera} {Viewport2 Nope} {Viewport3 Disable}"), "R1", p2at)
    line = pc.set_reply(req, 56.68, [])
    assert line == ("RES {Time 56.68} {Type Viewports} {Config QuadView} {Status OK} {Viewport1 Camera} {Status OK} "
                    "{Viewport2 None} {Status Failed} {Viewport3 Disabled} {Status OK}\r\n")


def test_legacy_camera(p2at):
    cmds = pc.camera_commands(g.parse_command("CAMERA {Rotation 0.1,0.2,0} {Zoom 45}"), "R1", p2at)
    assert cmds[0] == SensorCommand("R1", "Camera", "PanTilt", (-0.2, -0.1, 0.0))
    assert cmds[1].opcode == "FOV" and cmds[1].params[0] == pytest.approx(math.pi / 4)


def test_compass_heading_just_below_a_full_turn_goes_out_as_zero():
    reading = rd.CompassReading(time=1.0, robot="R", sensor="Compass", frame="compass_link", heading=2 * math.pi - 1e-9,
                                magnetic_field=(2e-5, 0.0, -4e-5), heading_variance=0.0, field_variance=0.0)
    assert "{Heading 0.0000}" in pm.format_reading(reading)


# --------------------------------------------------------------------------- the manual's names

def test_joints_answer_to_the_manual_and_udk_names(p2at):
    # the manual's §9.4 example, and the UDK P3AT's wheel joint (P3AT.uc)
    [cmd] = pc.drive_commands(g.parse_command("DRIVE {Name LeftFWheel} {Order 1} {Value 0.175}"), "R1", p2at)
    assert cmd == JointTargets("R1", {"left_front_wheel_joint": 0.175}, order=1)
    [multi] = pc.multidrive_commands(g.parse_command("MULTIDRIVE {rightrwheel 0.5} {FLWheelRoll 0.1}"), "R1", p2at)
    assert multi.targets == {"right_rear_wheel_joint": 0.5, "left_front_wheel_joint": 0.1}
    req = pc.set_request(g.parse_command("SET {Type Joint} {Name RightFWheel} {Opcode Velocity} {Params 2}"),
                         "R1", p2at)
    assert req.commands == (JointTargets("R1", {"right_front_wheel_joint": 2.0}, order=1),)


def test_set_joint_second_parameter_steers_a_steerable_wheel(p2at):
    cooper = load_robot("Cooper")
    req = pc.set_request(g.parse_command(
        "SET {Type Joint} {Name left_front_wheel_joint} {Opcode Velocity} {Params 3.0,0.2}"), "C", cooper)
    # p2 is SAE (+right): the core's steer is +left
    assert req.commands == (JointTargets("C", {"left_front_wheel_joint": 3.0}, order=1),
                            JointTargets("C", {"left_front_wheel_joint": -0.2}, steer=True))
    blank = pc.set_request(g.parse_command(
        "SET {Type Joint} {Name left_front_wheel_joint} {Opcode Velocity} {Params 3.0 0.2}"), "C", cooper)
    assert blank.commands == req.commands  # the manual's blank-separated Params
    # a skid-steered wheel cannot steer: p2 is ignored, the value still applies
    skid = pc.set_request(g.parse_command("SET {Type Joint} {Name LeftFWheel} {Opcode Velocity} {Params 1,0.3}"),
                          "R1", p2at)
    assert skid.commands == (JointTargets("R1", {"left_front_wheel_joint": 1.0}, order=1),)
    bad = pc.set_request(g.parse_command("SET {Type Joint} {Name LeftFWheel} {Opcode Velocity} {Params 1,2,3}"),
                         "R1", p2at)
    assert bad.kind == "failed"


def test_udk_p3at_spawns_the_pioneer_and_p2at_carries_the_manuals_rfid(p2at):
    assert load_robot("USARBot.P3AT") is p2at and load_robot("usarbot.atrv").class_name == "ATRVJr"
    assert [s.name for s in p2at.sensors if s.type == "RFID"] == ["RFID"]  # manual §12.1.1


def test_devices_answer_to_the_manual_and_udk_names(p2at):
    robot = type("R", (), {"spec": p2at, "name": "R1", "sensors": [], "effecters": {}})()
    # GETGEO {Type RangeScanner} {Name Scanner1} (the manual's) or {Name lms200} (UDK P3AT's) find the laser
    for asked in ("Scanner1", "LMS200"):
        assert g.parse_message(pm.geo_reply(robot, "RangeScanner", asked)).get("Name") == "Scanner"
    req = pc.set_request(g.parse_command("SET {Type GroundTruth} {Name GndTruth} {Opcode RESET}"), "R1", p2at)
    assert req.commands[0].device == "GroundTruth"


def test_a_flipper_carrying_wheels_is_no_steering_knuckle():
    kenaf = load_robot("Kenaf")
    wheel = next(w.joint for w in kenaf.body.wheels if w.parent != "base_link")
    assert kenaf.knuckle(wheel) is None  # the flipper turns about y: SET Joint's p2 must not swing it
    assert load_robot("Lisa").knuckle("wheel0_joint") == "steer0_joint"
