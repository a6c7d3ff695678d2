"""ROS messages of the single-quantity motion sensors (compass, accelerometer, gyroscope,
velocimeter, inclinometer) and the depth gauge (docs/ros.md): the converters ``convert.ROS_FORMS``
names for these reading types, each giving the (topic, message) pairs of one reading.

REP-145: a sensor_msgs/Imu that lacks a part marks it with -1 in the first element of that
part's covariance, so the accelerometer, gyroscope and inclinometer each publish an Imu
carrying only what they measure.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from geometry_msgs.msg import TwistStamped
from sensor_msgs.msg import FluidPressure, Imu, MagneticField
from std_msgs.msg import Float32

from usarsim import rotations
from usarsim.ros.covariance import UNMEASURED, absent, diag3, diagonal
from usarsim.ros.stamps import set_header
from usarsim.sim import readings as rd

if TYPE_CHECKING:
    from usarsim.ros.convert import RobotNames

Pairs = list[tuple[str, Any]]


def _imu(r: rd.Reading, names: "RobotNames") -> Imu:
    msg = Imu()
    set_header(msg, r.time, names.frame(r.frame))
    msg.orientation_covariance = absent()
    msg.angular_velocity_covariance = absent()
    msg.linear_acceleration_covariance = absent()
    return msg


def accelerometer(r: rd.AccelerometerReading, names: "RobotNames") -> Pairs:
    """sensor_msgs/Imu with only linear_acceleration (specific force, sensor frame)."""
    msg = _imu(r, names)
    msg.linear_acceleration.x, msg.linear_acceleration.y, msg.linear_acceleration.z = r.linear_acceleration
    msg.linear_acceleration_covariance = diag3(r.variance)
    return [(names.topic(f"accelerometer/{r.sensor}"), msg)]


def gyroscope(r: rd.GyroscopeReading, names: "RobotNames") -> Pairs:
    """sensor_msgs/Imu with only angular_velocity."""
    msg = _imu(r, names)
    msg.angular_velocity.x, msg.angular_velocity.y, msg.angular_velocity.z = r.angular_velocity
    msg.angular_velocity_covariance = diag3(r.variance)
    return [(names.topic(f"gyroscope/{r.sensor}"), msg)]


def inclinometer(r: rd.InclinometerReading, names: "RobotNames") -> Pairs:
    """sensor_msgs/Imu with only orientation: roll and pitch measured, yaw unknown (UNMEASURED variance)."""
    msg = _imu(r, names)
    x, y, z, w = rotations.quaternion_from_euler((r.roll, r.pitch, 0.0))
    msg.orientation.x, msg.orientation.y, msg.orientation.z, msg.orientation.w = x, y, z, w
    msg.orientation_covariance = diagonal((r.variance, r.variance, UNMEASURED))
    return [(names.topic(f"inclinometer/{r.sensor}"), msg)]


def compass(r: rd.CompassReading, names: "RobotNames") -> Pairs:
    """sensor_msgs/MagneticField (tesla, sensor frame) and the heading (rad clockwise from magnetic north)."""
    field = MagneticField()
    set_header(field, r.time, names.frame(r.frame))
    field.magnetic_field.x, field.magnetic_field.y, field.magnetic_field.z = r.magnetic_field
    field.magnetic_field_covariance = diag3(r.field_variance)
    return [(names.topic(f"compass/{r.sensor}/field"), field),
            (names.topic(f"compass/{r.sensor}/heading"), Float32(data=float(r.heading)))]


def velocimeter(r: rd.VelocimeterReading, names: "RobotNames") -> Pairs:
    """geometry_msgs/TwistStamped: linear velocity in the sensor frame (angular left zero)."""
    msg = TwistStamped()
    set_header(msg, r.time, names.frame(r.frame))
    msg.twist.linear.x, msg.twist.linear.y, msg.twist.linear.z = r.linear_velocity
    return [(names.topic(f"velocimeter/{r.sensor}"), msg)]


def depth(r: rd.DepthReading, names: "RobotNames") -> Pairs:
    """sensor_msgs/FluidPressure (absolute, Pa) and the depth itself (m, positive down)."""
    msg = FluidPressure()
    set_header(msg, r.time, names.frame(r.frame))
    msg.fluid_pressure = float(r.absolute_pressure)
    msg.variance = float(r.pressure_variance)
    return [(names.topic(f"depth/{r.sensor}/pressure"), msg), (names.topic(f"depth/{r.sensor}"),
                                                                Float32(data=float(r.depth)))]


__all__ = ["accelerometer", "compass", "depth", "gyroscope", "inclinometer", "velocimeter"]
