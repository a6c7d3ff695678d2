"""The SAE J670 edge, end to end: what a classic controller sees over TCP when its robot moves.

USARSim's wire frame is x north/forward, y east/right, z down; positive yaw turns
right (clockwise seen from above). These tests drive a real P2AT in the yellow
arena through the protocol server and check signs, not just formats.
"""
from __future__ import annotations

import math

import pytest
from hypothesis import given, settings, strategies as st

from protocol_client import Client
from usarsim import rotations
from usarsim.protocol import frames
from usarsim.protocol import grammar as g
from usarsim.protocol import messages as pm
from usarsim.protocol.server import ProtocolServer
from usarsim.sim import readings as rd
from usarsim.sim.simulator import Simulator
from patience import PATIENCE


class Reader(Client):
    """Reads protocol messages with a wall-clock bound."""

    def __init__(self, port: int) -> None:
        super().__init__(port, timeout=PATIENCE)

    def send(self, line: str) -> None:
        super().send(line + "\r\n")

    def sensor(self, sensor_type: str, after: float = -1.0) -> tuple[float, g.Message]:
        """Next SEN of ``sensor_type`` sent after sim time ``after`` (time from the preceding STA)."""
        now = -1.0
        for msg in self.messages():
            if msg.type == "STA":
                now = msg.time
            elif msg.type == "ERR":
                raise AssertionError(f"server error: {msg.pairs}")
            elif msg.type == "SEN" and msg.kind == sensor_type and now > after:
                return now, msg
        raise AssertionError("unreachable")

    def command(self, line: str) -> float:
        """Send ``line`` and return the sim time at which it was applied.

        In fast pacing the stream read so far may lag the simulation, so the
        time comes from the RES of a harmless SET (camera FOV back to its
        default) queued right behind it: both are applied in the same tick.
        """
        self.send(line)
        self.send("SET {Type Camera} {Name Camera} {FOV 0}")
        for msg in self.messages():
            if msg.type == "RES" and msg.kind == "Camera":
                return msg.time
            if msg.type == "ERR":
                raise AssertionError(f"server error: {msg.pairs}")
        raise AssertionError("unreachable")


@pytest.fixture(scope="module")
def robot():
    sim = Simulator("yellow", pacing="fast", seed=3)
    server = ProtocolServer(sim, port=0, image_port=None)
    server.start()
    client = Reader(server.port)
    client.send("INIT {ClassName USARBot.P2AT} {Name Frames} {Start Start1}")
    yield client
    client.close()
    server.stop()
    sim.close()


def test_spawn_position_is_in_the_sae_world_frame(robot):
    # Start1 is the manual's yellow start, 4.5,1.9,1.8 in USARSim's frame (y east, z down); the
    # robot stands on the floor 1.988 m below the origin, so its centre is a little less far down
    _, truth = robot.sensor("GroundTruth")
    x, y, z = truth.get_vector("Location")
    assert x == pytest.approx(4.5, abs=0.05) and y == pytest.approx(1.9, abs=0.05)
    assert 1.5 < z < 1.988
    _, ins = robot.sensor("INS")
    assert all(0.0 <= a < 2 * math.pi for a in ins.get_vector("Orientation"))  # INS angles in [0, 2pi)


def test_laser_beam_zero_is_the_rightmost(robot):
    # Facing north at Start1, the arena's east wall is 1.95 m to the right; the left side is open.
    _, scan = robot.sensor("RangeScanner")
    ranges = scan.get_floats("Range")
    assert scan.get_float("FOV") == pytest.approx(3.1416, abs=1e-3)
    assert ranges[0] == pytest.approx(1.95, abs=0.15)
    assert ranges[-1] > ranges[0] + 1.0


def test_forward_is_plus_x_and_a_right_turn_is_positive_yaw(robot):
    _, start = robot.sensor("GroundTruth")
    x0, y0, _ = start.get_vector("Location")
    t0 = robot.command("DRIVE {Left 3} {Right 3}")
    _, moved = robot.sensor("GroundTruth", after=t0 + 1.5)
    x1, y1, _ = moved.get_vector("Location")
    assert x1 - x0 > 0.3 and abs(y1 - y0) < 0.1
    _, odo = robot.sensor("Odometry", after=t0 + 1.5)
    ox, oy, _ = odo.get_vector("Pose")
    assert ox > 0.3 and abs(oy) < 0.1

    t1 = robot.command("DRIVE {Left 2} {Right -2}")  # left wheels forward: clockwise seen from above
    _, turned = robot.sensor("GroundTruth", after=t1 + 1.0)
    yaw = turned.get_vector("Orientation")[2]
    assert 0.2 < yaw < math.pi
    _, odo = robot.sensor("Odometry", after=t1 + 1.0)
    assert odo.get_vector("Pose")[2] > 0.2
    _, ins = robot.sensor("INS", after=t1 + 1.0)
    assert 0.2 < ins.get_vector("Orientation")[2] < math.pi
    robot.send("DRIVE {Left 0} {Right 0}")


# --------------------------------------------------------------------------- pure: format then parse

coord = st.floats(-1000, 1000, allow_nan=False)
angle = st.floats(-20, 20, allow_nan=False)
HEAD = {"time": 1.25, "robot": "R", "frame": "base_link"}


def _close_angle(a: float, b: float) -> bool:
    return abs(rotations.wrap_pi(a - b)) < 2e-4


@settings(max_examples=200, deadline=None)
@given(st.tuples(coord, coord, coord), st.tuples(angle, angle, angle))
def test_ins_and_ground_truth_round_trip_through_the_wire(position, rpy):
    ins = rd.InsReading(sensor="INS", position=position, rpy=rpy, angular_velocity=(0, 0, 0),
                        linear_acceleration=(0, 0, 0), position_variance=0, orientation_variance=0,
                        angular_velocity_variance=0, linear_acceleration_variance=0, **HEAD)
    msg = g.parse_message(pm.format_reading(ins))
    loc, orn = msg.get_vector("Location"), msg.get_vector("Orientation")
    assert loc == pytest.approx(frames.flip_vector(position), abs=6e-5)
    assert all(0.0 <= a < 2 * math.pi for a in orn)  # D10, even after rounding to 4 decimals
    for got, want in zip(orn, frames.flip_euler(rpy)):
        assert _close_angle(got, want)

    quat = rotations.quaternion_from_euler(rpy)
    truth = rd.GroundTruthReading(sensor="GroundTruth", position=position, orientation=quat,
                                  linear_velocity=(0, 0, 0), angular_velocity=(0, 0, 0), **HEAD)
    msg = g.parse_message(pm.format_reading(truth))
    orn = msg.get_vector("Orientation")
    assert all(-math.pi < a <= 3.1416 for a in orn)  # (-pi, pi]; pi itself prints as 3.1416
    # same attitude: compare rotation matrices (Euler angles are not unique near gimbal lock)
    back = rotations.rotation_matrix(rotations.quaternion_from_euler(frames.flip_euler(orn)))
    assert back == pytest.approx(rotations.rotation_matrix(quat), abs=1e-3)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(0, 80, allow_nan=False), min_size=2, max_size=400))
def test_scan_ranges_keep_their_order_and_values(ranges):
    n = len(ranges)
    scan = rd.RangeScan(sensor="Scanner", ranges=tuple(ranges), angle_min=-(n - 1) * 0.01 / 2, angle_increment=0.01,
                        range_min=0, range_max=80, scan_time=0.1, **HEAD)
    msg = g.parse_message(pm.format_reading(scan, stamped=True))
    assert msg.time == pytest.approx(1.25)
    assert msg.get_floats("Range") == pytest.approx(ranges, abs=6e-5)
    assert msg.get_float("Resolution") == pytest.approx(0.01)
