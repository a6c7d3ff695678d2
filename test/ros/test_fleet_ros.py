"""ROS forms of the fleet: motion sensors and depth as messages (REP-145 absent parts), cmd_vel of the
submarine, blimp and omni drive (pure: no node, no DDS)."""
import math

import pytest

pytest.importorskip("sensor_msgs.msg")

from geometry_msgs.msg import TwistStamped  # noqa: E402
from sensor_msgs.msg import FluidPressure, Imu, MagneticField  # noqa: E402

from usarsim.ros import convert  # noqa: E402
from usarsim.ros.commands import twist_to_command  # noqa: E402
from usarsim.sim import readings as rd  # noqa: E402
from usarsim.sim.catalogue import load_robot  # noqa: E402
from usarsim.sim.commands import BlimpDrive, NauticDrive, OmniDrive  # noqa: E402

SPEC = load_robot("Cooper")
NAMES = convert.RobotNames.for_spec("car", SPEC)
H = {"time": 3.5, "robot": "car"}


def _messages(reading):
    return dict(convert.reading_to_messages(reading, NAMES))


def test_accelerometer_and_gyroscope_are_imu_parts():
    accel = _messages(rd.AccelerometerReading(sensor="Accel", frame="accel_link", linear_acceleration=(0.1, 0.0, 9.8),
                                              variance=0.0004, **H))["/car/accelerometer/Accel"]
    assert isinstance(accel, Imu) and accel.linear_acceleration.z == pytest.approx(9.8)
    assert accel.orientation_covariance[0] == -1.0 and accel.angular_velocity_covariance[0] == -1.0
    assert accel.linear_acceleration_covariance[0] == pytest.approx(0.0004)
    assert accel.header.frame_id.endswith("accel_link") and accel.header.stamp.sec == 3
    gyro = _messages(rd.GyroscopeReading(sensor="Gyro", frame="gyro_link", angular_velocity=(0.0, 0.0, 0.5),
                                         variance=0.0, **H))["/car/gyroscope/Gyro"]
    assert gyro.angular_velocity.z == pytest.approx(0.5) and gyro.linear_acceleration_covariance[0] == -1.0


def test_inclinometer_compass_velocimeter_depth():
    incl = _messages(rd.InclinometerReading(sensor="I", frame="i_link", roll=0.1, pitch=0.0, variance=0.01, **H))
    q = incl["/car/inclinometer/I"].orientation
    assert 2 * math.atan2(q.x, q.w) == pytest.approx(0.1)
    # roll and pitch measured, yaw not (REP-145 keeps the part: it has an orientation)
    assert list(incl["/car/inclinometer/I"].orientation_covariance) == [0.01, 0, 0, 0, 0.01, 0, 0, 0, 1e6]
    compass = _messages(rd.CompassReading(sensor="C", frame="c_link", heading=1.0, magnetic_field=(2e-5, 0.0, -4e-5),
                                          heading_variance=0.0, field_variance=0.0, **H))
    assert isinstance(compass["/car/compass/C/field"], MagneticField)
    assert compass["/car/compass/C/heading"].data == pytest.approx(1.0)
    vel = _messages(rd.VelocimeterReading(sensor="V", frame="v_link", linear_velocity=(2.0, 0.0, 0.0), variance=0.0, **H))
    assert isinstance(vel["/car/velocimeter/V"], TwistStamped) and vel["/car/velocimeter/V"].twist.linear.x == 2.0
    depth = _messages(rd.DepthReading(sensor="D", frame="d_link", depth=3.0, variance=0.01,
                                      pressure_per_metre=9810.0, **H))
    assert isinstance(depth["/car/depth/D/pressure"], FluidPressure)
    assert depth["/car/depth/D/pressure"].fluid_pressure == pytest.approx(101325.0 + 29430.0)
    assert depth["/car/depth/D/pressure"].variance == pytest.approx(0.01 * 9810.0 ** 2)
    assert depth["/car/depth/D"].data == pytest.approx(3.0)


def test_cmd_vel_of_submarine_blimp_and_omni():
    sub = load_robot("Submarine")
    cmd = twist_to_command("S", (1.0, 0.0, 0.1), (0.0, 0.0, 0.05), sub.drive, (NauticDrive,))
    assert cmd.propeller == pytest.approx(sub.drive.max_propeller)  # 1 m/s is beyond its 0.305 m/s: full ahead
    assert cmd.rudder == pytest.approx(math.atan(3.1 * 0.05 / 1.0)) and cmd.stern_plane == pytest.approx(math.atan(0.1))
    blimp = load_robot("Passarola")
    up = twist_to_command("B", (0.0, 0.0, 1.0), (0.0, 0.0, 0.3), blimp.drive, (BlimpDrive,))
    assert up == BlimpDrive("B", math.pi / 2, 1.0, 0.3)
    back = twist_to_command("B", (-1.0, 0.0, 0.0), (0.0, 0.0, 0.0), blimp.drive, (BlimpDrive,))
    assert back.xz_angle == pytest.approx(0.0) and back.thrust == pytest.approx(-1.0)
    lisa = load_robot("Lisa")
    turn = twist_to_command("L", (0.0, 0.0, 0.0), (0.0, 0.0, 1.0), lisa.drive, (OmniDrive,), lisa.body)
    assert {round(s, 4) for _, s, _ in turn.wheels} == {round(math.hypot(0.28, 0.18) / 0.1, 4)}
