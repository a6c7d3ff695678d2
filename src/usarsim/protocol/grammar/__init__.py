"""USARSim text protocol: parse and format lines, commands and messages (pure, no I/O).

Three concerns, one module each: ``lines`` (lexing, values, number format), ``commands``
(what clients send) and ``formats`` (what the server sends). Everything works on wire
values: SAE J670 frame, SI units, exactly as sent; frame conversion belongs to
``usarsim.protocol.frames``. Callers import from here; the names below are the public surface.
"""
from __future__ import annotations

from usarsim.protocol.grammar.lines import (  # noqa: F401
    ProtocolError, MAX_LINE_LENGTH, FLOAT_DIGITS, TIME_DIGITS, POSE_DIGITS, Fixed, Line, joined_floats,
    parse_line, parse_float, parse_int, parse_bool, parse_vector, parse_floats, fmt_float,
    format_value, format_line, format_gps_coordinate, parse_gps_coordinate, Pair, Vec3, Scalar,
    Value, PairIn, Segment,
)
from usarsim.protocol.grammar.commands import (  # noqa: F401
    COMMAND_WORDS, Command, Init, Drive, Wheel, MultiDrive, MisPkg, MisPkgLink, Set, CameraFov,
    GetGeo, GetConf, GetStartPoses, Trace, Camera, parse_command, format_command, TRACE_COLORS,
)
from usarsim.protocol.grammar.formats import (  # noqa: F401
    Message, parse_message, MESSAGE_TYPES, StartPose, RfidTag, GeoItem, GeoLink, ConfLink,
    EffecterOpcode, format_nfo_game, format_nfo_start_poses, format_sta, format_missta,
    format_sen_range, format_sen_sonar, format_sen_ir, format_sen_range_scanner,
    format_sen_range_scanner_3d, format_sen_odometry, format_sen_gps, format_sen_ins,
    format_sen_encoder, format_sen_touch, format_sen_rfid, format_sen_victim,
    format_sen_human_motion, format_sen_sound, format_sen_ground_truth, format_sen_depth, format_sen_compass,
    format_sen_vector, format_sen_inclinometer, format_sen_udk, format_geo_vehicle,
    format_geo_sensors, format_geo_effecters, format_geo_mispkg, format_conf_vehicle,
    format_conf_sensors, format_conf_effecters, format_conf_mispkg, format_res,
    format_res_camera, format_res_viewports, format_res_rfid_read, format_err,
    decode_start_poses, decode_range_readings, decode_gps, DIALECTS, Num, Vec, Time,
)

__all__ = [
    # errors, limits, values
    "ProtocolError", "MAX_LINE_LENGTH", "FLOAT_DIGITS", "TIME_DIGITS", "POSE_DIGITS",
    "Fixed", "Line", "Message", "parse_line", "parse_message",
    "parse_float", "parse_int", "parse_bool", "parse_vector", "parse_floats",
    "fmt_float", "format_value", "format_line", "joined_floats",
    "format_gps_coordinate", "parse_gps_coordinate",
    # commands
    "COMMAND_WORDS", "Command", "Init", "Drive", "Wheel", "MultiDrive", "MisPkg", "MisPkgLink",
    "Set", "CameraFov", "GetGeo", "GetConf", "GetStartPoses", "Trace", "Camera", "TRACE_COLORS",
    "parse_command", "format_command",
    # messages
    "MESSAGE_TYPES", "StartPose", "RfidTag", "GeoItem", "GeoLink", "ConfLink", "EffecterOpcode",
    "format_nfo_game", "format_nfo_start_poses", "format_sta", "format_missta",
    "format_sen_range", "format_sen_sonar", "format_sen_ir", "format_sen_range_scanner",
    "format_sen_range_scanner_3d", "format_sen_odometry", "format_sen_gps", "format_sen_ins",
    "format_sen_encoder", "format_sen_touch", "format_sen_rfid", "format_sen_victim",
    "format_sen_human_motion", "format_sen_sound", "format_sen_ground_truth", "format_sen_depth",
    "format_sen_compass", "format_sen_vector", "format_sen_inclinometer",
    "format_geo_vehicle", "format_geo_sensors", "format_geo_effecters", "format_geo_mispkg",
    "format_conf_vehicle", "format_conf_sensors", "format_conf_effecters", "format_conf_mispkg",
    "format_res", "format_res_camera", "format_res_viewports", "format_res_rfid_read",
    "format_sen_udk", "format_err", "decode_start_poses", "decode_range_readings", "decode_gps", "DIALECTS",
]
