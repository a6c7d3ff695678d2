"""How often the ROS front door publishes each kind of sensor, by default.

USARSim's catalogue intervals suit its text protocol (odometry and the INS at 5 Hz, a laser at
5-10 Hz). ROS consumers expect more: Nav2 wants odom -> base_link at 20 Hz, robot_localization
and other filters an IMU at 50-100 Hz. The live node (``rates.<kind>`` parameters, the launch
files' ``<kind>_rate`` arguments) and ``usarsim record`` both start from these, so a bag holds
the streams a live run gives. A kind not named keeps the catalogue's interval.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Mapping

if TYPE_CHECKING:
    from usarsim.sim.robot import Robot

DEFAULT_RATES: dict[str, float] = {"odom": 20.0, "imu": 50.0}  # Hz of sim time
DEFAULT_CLOCK_RATE = 50.0  # Hz of sim time of /clock (gazebo_ros uses 10)


def apply_rates(robot: "Robot", rates: Mapping[str, float], kinds: Mapping[str, tuple[str, ...]]) -> None:
    """Set the interval of every sensor of ``robot`` whose kind has a rate above 0 in ``rates``;
    ``kinds`` maps a kind to the catalogue sensor types it paces (``convert.rate_kinds()``)."""
    for kind, types in kinds.items():
        rate = float(rates.get(kind, 0.0))
        if rate > 0:
            for sensor in robot.sensors:
                if sensor.type_name in types:
                    sensor.interval = 1.0 / rate  # the sensor's own cadence attribute
