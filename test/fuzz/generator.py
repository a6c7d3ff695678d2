"""A seeded generator of hostile USARSim protocol lines.

Each line starts from the shape of a real command (INIT, DRIVE, MULTIDRIVE, MISPKG,
SET, GETGEO, GETCONF, CAMERA, ...) with field names a client would send, and fills the
values with what breaks naive parsers: integers past Python's digit limit, floats that
overflow, NaN and infinities, empty and short vectors, locations far outside any world,
signs, hex, bytes that are not ASCII, unbalanced braces, and over-long tokens. A
share of lines is mangled further at the byte level. The same seed gives the same lines.
"""
from __future__ import annotations

import random
from typing import Callable, Iterator

HUGE_INT = "9" * 5000  # past Python's 4300-digit int() limit
NUMBERS = [
    "0", "1", "-1", "2.5", "-0.0", "1e300", "-1e300", "1e309", "-1e999", "1e-320", "nan", "NaN", "-nan", "inf",
    "-inf", "Infinity", HUGE_INT, "-" + HUGE_INT, "1" + "0" * 400, "0x10", "1_000", "+3", "--1", "1.2.3", "", " ",
    "1e", ".", "١٢", "4294967296", "-9223372036854775809", "3.4028235e38", "1" * 20,
]
VECTORS = ["", ",", ",,", "1", "1,2", "1,2,3", "1,2,3,4", "nan,0,0", "0,inf,0", "4.5,1e300,0", "1e6,1e6,0",
           "-1e9,0,-1e9", f"{HUGE_INT},0,0", "a,b,c", "1,,3", "0,0,0,0,0,0", "1e308,1e308,1e308"]
WORDS = ["P2AT", "USARBot.P2AT", "usarbot.p2dx", "Kenaf", "AirRobot", "ComStation", "USARBot.", "", "R1", "../x",
         "Start1", "start1", "Nowhere", "Camera", "Laser", "Sonar", "INS", "RFID", "Gripper", "CameraPanTilt",
         "FRFlipper", "Joint", "Viewports", "true", "false", "Yes", "é", "\u202e", "x" * 300]
SENSOR_TYPES = ["Robot", "MisPkg", "Effecter", "RangeScanner", "Sonar", "Odometry", "INS", "GPS", "Camera",
                "RFID", "VictSensor", "Encoder", "Touch", "GroundTruth", "Nothing", ""]
OPCODES = ["", "0", "1", "2", "Angle", "Velocity", "Torque", "POSE", "Read", "Write", "Release", "Open",
           "Close", "RESET", HUGE_INT]
ROBOTS = ["P2AT", "P2DX", "Kenaf", "AirRobot", "Talon", "Sedan", "ATRVJr"]


def _num(rng: random.Random) -> str:
    return rng.choice(NUMBERS) if rng.random() < 0.7 else repr(rng.uniform(-1e3, 1e3))


def _vec(rng: random.Random) -> str:
    return rng.choice(VECTORS) if rng.random() < 0.7 else ",".join(_num(rng) for _ in range(rng.randint(0, 7)))


def _word(rng: random.Random) -> str:
    return rng.choice(WORDS)


def _init(rng: random.Random) -> str:
    segs = [f"{{ClassName {rng.choice(ROBOTS) if rng.random() < 0.6 else _word(rng)}}}"]
    if rng.random() < 0.5:
        segs.append(f"{{Name {_word(rng)}}}")
    if rng.random() < 0.5:
        segs.append(f"{{Location {_vec(rng)}}}")
    else:
        segs.append(f"{{Start {_word(rng)}}}")
    if rng.random() < 0.5:
        segs.append(f"{{Rotation {_vec(rng)}}}")
    return "INIT " + " ".join(segs)


def _drive(rng: random.Random) -> str:
    fields = ["Left", "Right", "Normalized", "Light", "Flip", "Speed", "FrontSteer", "RearSteer", "Propeller",
              "Rudder", "SternPlane", "AltitudeVelocity", "LinearVelocity", "LateralVelocity",
              "RotationalVelocity", "Name", "Steer", "Order", "Value", "WheelNumber", "WheelSpeed", "WheelSteer",
              "XZAngle", "ThrustPropeller", "TailPropeller"]
    segs = [f"{{{rng.choice(fields)} {_num(rng) if rng.random() < 0.8 else _word(rng)}}}"
            for _ in range(rng.randint(0, 5))]
    return "DRIVE " + " ".join(segs)


def _multidrive(rng: random.Random) -> str:
    return "MULTIDRIVE " + " ".join(f"{{{_word(rng) or 'J'} {_num(rng)}}}" for _ in range(rng.randint(0, 4)))


def _mispkg(rng: random.Random) -> str:
    segs = [f"{{Name {_word(rng)}}}"]
    for _ in range(rng.randint(0, 4)):
        segs.append(f"{{Link {_num(rng)}}} {{Value {_num(rng)}}}")
        if rng.random() < 0.5:
            segs.append(f"{{Order {_num(rng)}}}")
    return rng.choice(["MISPKG ", "MISSPKG "]) + " ".join(segs)


def _segments(rng: random.Random, optional: list[tuple[float, Callable[[], str]]]) -> str:
    """Each optional segment with its probability, in order."""
    return " ".join(make() for chance, make in optional if rng.random() < chance)


def _set(rng: random.Random) -> str:
    kind = rng.choice(SENSOR_TYPES + ["Joint", "Camera", "Viewports", "Gripper"])
    return f"SET {{Type {kind}}} " + _segments(rng, [
        (0.8, lambda: f"{{Name {_word(rng)}}}"),
        (0.7, lambda: f"{{Opcode {rng.choice(OPCODES)}}}"),
        (0.7, lambda: f"{{Params {_vec(rng) if rng.random() < 0.7 else _num(rng)}}}"),
        (0.2, lambda: f"{{FOV {_num(rng)}}}"),
        (0.1, lambda: f"{{Robot {_word(rng)}}} {{Client {_word(rng)}}}"),
        (0.1, lambda: f"{{Config {_word(rng)}}} {{Viewport1 {_word(rng)}}}"),
    ])


def _query(rng: random.Random) -> str:
    name = f" {{Name {_word(rng)}}}" if rng.random() < 0.5 else ""
    return f"{rng.choice(['GETGEO', 'GETCONF'])} {{Type {rng.choice(SENSOR_TYPES)}}}{name}"


def _camera(rng: random.Random) -> str:
    return "CAMERA " + _segments(rng, [
        (0.7, lambda: f"{{Rotation {_vec(rng)}}}"),
        (0.5, lambda: f"{{Order {_num(rng)}}}"),
        (0.5, lambda: f"{{Zoom {_num(rng)}}}"),
    ])


def _other(rng: random.Random) -> str:
    return rng.choice(["GETSTARTPOSES", "STARTPOSES", "TRACE {On true} {Interval " + _num(rng) + "}",
                       "", "   ", "{}", "{{{", "}}}", "DRIVE {Left 1", "NOPE {A 1}", "drive {left 1} {right 1}",
                       "INIT", "SET", "GETGEO", "MISPKG", "DRIVE {}", "DRIVE {Left}", "DRIVE {{Left 1}}",
                       "DRIVE Left 1", "X" * 70000])


_BUILDERS = [_init, _drive, _drive, _drive, _multidrive, _mispkg, _set, _set, _query, _camera, _other]


def _mangle(rng: random.Random, line: bytes) -> bytes:
    """Byte-level damage: flipped bytes, inserted control/non-ASCII bytes, truncation, duplication."""
    data = bytearray(line)
    for _ in range(rng.randint(1, 3)):
        op = rng.randrange(4)
        pos = rng.randrange(len(data) + 1)
        if op == 0 and data:
            data[min(pos, len(data) - 1)] = rng.randrange(256)
        elif op == 1:
            data[pos:pos] = bytes([rng.choice([0, 7, 9, 13, 27, 127, 0x80, 0xC3, 0xFF])])
        elif op == 2:
            del data[pos:]
        else:
            data[pos:pos] = data[:pos]
    return bytes(data).replace(b"\n", b" ")


def lines(seed: int, count: int) -> Iterator[bytes]:
    """``count`` hostile lines (each ending in CRLF), the same for the same seed."""
    rng = random.Random(seed)
    for _ in range(count):
        line = rng.choice(_BUILDERS)(rng).encode("utf-8", "surrogatepass")
        if rng.random() < 0.15:
            line = _mangle(rng, line)
        yield line + b"\r\n"


__all__ = ["lines", "HUGE_INT"]
