"""Compass, accelerometer, gyroscope, velocimeter and inclinometer (the SEAR / AutoSim sensors):
readings at rest and moving, the noise model, SEN lines."""
import math
from dataclasses import replace

import numpy as np
import pytest

from usarsim import rotations
from usarsim.protocol import messages as pm
from usarsim.sim.commands import AckermannDrive, JointTargets
from usarsim.sim.noise import DriftingChannel
from usarsim.sim.readings import (AccelerometerReading, CompassReading, GyroscopeReading, InclinometerReading,
                                  VelocimeterReading)
from usarsim.sim.sensors.compass import magnetic_field, magnetic_heading
from usarsim.sim.simulator import Simulator

from fleet_worlds import DECLINATION, dry_world


def last(readings, kind):
    return [r for r in readings if isinstance(r, kind)][-1]


@pytest.fixture(scope="module")
def drive():
    out = {}
    with Simulator(dry_world(), seed=6) as sim:
        sim.spawn("Cooper", "C", position=(0.0, 0.0, 0.0), rpy=(0.0, 0.0, math.pi / 2))  # facing west
        out["rest"] = sim.run_for(2.0)
        sim.submit(AckermannDrive("C", 10.0, 0.0))
        sim.run_for(4.0)
        out["moving"] = sim.run_for(1.0)
    return out


def test_at_rest_gravity_up_no_rate_level(drive):
    accel = last(drive["rest"], AccelerometerReading).linear_acceleration
    assert accel[2] == pytest.approx(9.81, abs=0.2) and abs(accel[0]) < 0.2 and abs(accel[1]) < 0.2
    assert max(abs(v) for v in last(drive["rest"], GyroscopeReading).angular_velocity) < 0.02
    incl = last(drive["rest"], InclinometerReading)
    assert abs(incl.roll) < 0.02 and abs(incl.pitch) < 0.02


def test_compass_heading_uses_the_world_declination(drive):
    heading = last(drive["rest"], CompassReading).heading
    assert heading == pytest.approx(3 * math.pi / 2 - DECLINATION, abs=0.03)  # west is 270 deg true


def test_velocimeter_reads_forward_speed(drive):
    v = last(drive["moving"], VelocimeterReading).linear_velocity
    assert v[0] > 1.0 and abs(v[1]) < 0.2


def test_sen_lines(drive):
    line = pm.format_reading(last(drive["rest"], AccelerometerReading))
    assert line.startswith("SEN {Type AcceleroMeter} {Name Accel} {ProperAcceleration ")
    assert ",-9.8" in line  # SAE: z down, so the reaction to gravity reads negative
    assert pm.format_reading(last(drive["rest"], GyroscopeReading)).startswith("SEN {Type Gyroscope} {Name Gyro} {AngularVel ")
    assert "{Heading 4.5" in pm.format_reading(last(drive["rest"], CompassReading))
    incl = pm.format_reading(last(drive["rest"], InclinometerReading))
    assert incl.startswith("SEN {Type Inclinometer} {Name Inclinometer} {Roll ")
    vel = pm.format_reading(last(drive["moving"], VelocimeterReading))
    assert vel.startswith("SEN {Type Velocimeter} {Name Velocimeter} {Velocity ")


def test_drifting_channel_bandwidth_bias_and_determinism():
    rng = np.random.default_rng(1)
    filtered = DriftingChannel(bandwidth=1.0, bias_drift=0.0, sigma=0.0)
    filtered([0.0, 0.0, 0.0], 0.01, rng)
    out = [filtered([1.0, 0.0, 0.0], 0.01, rng)[0] for _ in range(16)]
    assert out[-1] == pytest.approx(1.0 - math.exp(-2 * math.pi * 1.0 * 0.16), rel=1e-6)  # first-order step
    walks = []
    for seed in range(200):
        channel = DriftingChannel(bandwidth=0.0, bias_drift=0.1, sigma=0.0)
        r = np.random.default_rng(seed)
        for _ in range(100):
            value = channel([0.0, 0.0, 0.0], 0.01, r)
        walks.append(value[0])
    assert np.std(walks) == pytest.approx(0.1 * math.sqrt(1.0), rel=0.15)  # random walk: sigma * sqrt(t)
    a = DriftingChannel(5.0, 0.01, 0.02)
    b = DriftingChannel(5.0, 0.01, 0.02)
    ra, rb = np.random.default_rng(7), np.random.default_rng(7)
    assert np.array_equal(a([1, 2, 3], 0.02, ra), b([1, 2, 3], 0.02, rb))


def test_compass_and_inclinometer_formulas():
    assert magnetic_heading(np.eye(3), 0.0) == pytest.approx(0.0)
    assert magnetic_heading(np.eye(3), 0.1) == pytest.approx(2 * math.pi - 0.1)
    field = magnetic_field(0.0, math.radians(60), 5e-5)
    assert field[0] > 0 and field[2] < 0 and np.linalg.norm(field) == pytest.approx(5e-5)
    c, s = math.cos(0.3), math.sin(0.3)
    pitched = np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])  # rotation about y by +0.3: nose down (REP-103)
    assert rotations.euler_from_matrix(pitched)[:2] == pytest.approx((0.0, 0.3))


def test_gyroscope_turns_with_the_link_it_is_mounted_on():
    """The QRIO's gyro sits on its torso: turning the waist turns the gyro, not the pelvis."""
    with Simulator("empty", seed=3) as sim:
        robot = sim.spawn("QRIO", "Q", position=(0.0, 0.0, 0.0))
        sim.run_for(1.0)
        sim.submit(JointTargets("Q", {"WaistYaw": 0.9}))
        rates = []
        for _ in range(40):  # 0.2 s: the waist turns at up to 3 rad/s
            rates += [r.angular_velocity[2] for r in sim.step(1) if isinstance(r, GyroscopeReading)]
        pelvis = abs(float(robot.base.angular_velocity[2]))
    assert max(rates) > 1.0 and pelvis < 0.5  # the torso turns fast, the body under it hardly


def test_inclinometer_reads_the_sensed_gravity_while_braking():
    """A gravity-referenced inclinometer pitches nose down by atan(b / g) while the car brakes at b."""
    with Simulator(dry_world(), seed=6, noise=False) as sim:
        sim.spawn("Cooper", "C", position=(0.0, 0.0, 0.0))
        sim.run_for(1.0)
        sim.submit(AckermannDrive("C", 10.0, 0.0))
        sim.run_for(4.0)
        sim.submit(AckermannDrive("C", 0.0, 0.0))
        truth = {}  # sim time -> (forward velocity, true pitch)
        readings = []
        for _ in range(60):
            state = sim.ground_truth("C")
            truth[round(sim.time, 3)] = (state.linear_velocity[0], rotations.euler_from_quaternion(state.orientation)[1])
            readings += [r for r in sim.step(1) if isinstance(r, InclinometerReading)]
    braking = next(r for r in readings if round(r.time - 0.1, 3) in truth)  # a whole sample interval of braking
    before, after = truth[round(braking.time - 0.1, 3)][0], truth[round(braking.time, 3)][0]
    deceleration = (before - after) / 0.1
    assert deceleration > 1.0
    assert braking.pitch == pytest.approx(math.atan2(deceleration, 9.81), abs=0.01)
    assert abs(truth[round(braking.time, 3)][1]) < 0.02  # the car itself hardly pitches


def test_compass_field_comes_from_the_world_magnetic_model_at_the_worlds_location():
    """The empty world lies at NIST, Gaithersburg MD: WMM2025 gives declination -10.6 deg, dip 65.1 deg, 50.6 uT."""
    with Simulator("empty", seed=6, noise=False) as sim:
        sim.spawn("Cooper", "C", position=(0.0, 0.0, 0.0))  # facing true north
        compass = last(sim.run_for(1.0), CompassReading)
    assert math.degrees(compass.heading) == pytest.approx(10.64, abs=0.1)  # magnetic north is 10.6 deg west
    bx, by, bz = compass.magnetic_field
    assert math.degrees(math.atan2(-bz, math.hypot(bx, by))) == pytest.approx(65.1, abs=0.2)
    assert math.sqrt(bx * bx + by * by + bz * bz) == pytest.approx(50.58e-6, rel=0.01)


@pytest.mark.parametrize("sensor", ["Accel", "Gyro"])
def test_noise_off_drops_the_initial_bias(sensor):
    """With noise off an accelerometer and a gyroscope read the true value: no constant bias either."""
    with Simulator(dry_world(), seed=6, noise=False) as sim:
        robot = sim.spawn("Cooper", "C", position=(0.0, 0.0, 0.0))
        device = robot.sensor(sensor)
        device.params = replace(device.params, initial_bias=0.5)
        device.on_spawned(sim.time)
        reading = [r for r in sim.run_for(1.0) if isinstance(r, (AccelerometerReading, GyroscopeReading))
                   and r.sensor == sensor][-1]
    values = reading.linear_acceleration if sensor == "Accel" else reading.angular_velocity
    assert values[0] == pytest.approx(0.0, abs=0.02) and values[1] == pytest.approx(0.0, abs=0.02)
