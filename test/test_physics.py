"""Physics that holds still and turns true: brakes, heading-independent turning, the
calibrated skid-steer model (twist tracking, odometry) and scan-grid sizes.

The ramp and floor are built here, so the tests do not depend on any arena's layout.
"""
import math

import numpy as np
import pybullet as p
import pytest

from usarsim import rotations
from usarsim.sim.calibration import TURN_SURFACE_SPEED, turn_in_place
from usarsim.sim.catalogue import available_robots, load_robot
from usarsim.sim.commands import WheelDrive
from usarsim.sim.drives import twist_to_wheel_speeds
from usarsim.sim.drives.base import YawRateLoop
from usarsim.sim.raycast import beam_count
from usarsim.sim.readings import OdometryReading
from usarsim.sim.sensors import registry
from usarsim.sim.simulator import Simulator
from usarsim.sim.world import FloorSpec, GpsOrigin, StartPose, WorldSpec
from usarsim.sim.world_geometry import StaticItem

SLOPE = math.radians(15.0)
RAMP_LENGTH = 40.0
GROUND = [c for c in available_robots() if load_robot(c).drive.type not in ("aerial", "none", "blimp", "nautic")]
STANDING_ON_LEGS = {"QRIO"}  # checked on the flat only (it creeps about 1-2 cm a minute down a 15 degree ramp)
SKID = [c for c in available_robots() if load_robot(c).drive.type in ("skid", "differential", "tracked")]


def ramp_world() -> WorldSpec:
    """A flat floor and one long 15 degree ramp rising toward +x, centred on the origin."""
    return WorldSpec(name="ramp", description="brake test", gps_origin=GpsOrigin(lat=0.0, lon=0.0, alt=0.0),
                     start_poses=[StartPose("Start1", (0.0, 0.0, 0.0))], floor=FloorSpec(size=(200.0, 200.0)),
                     static=[StaticItem(kind="ramp", xyz=(0.0, 0.0, 0.0),
                                        size=(RAMP_LENGTH, 8.0 * (len(GROUND) + 1), RAMP_LENGTH * math.tan(SLOPE)))])


def yaw_of(truth) -> float:
    return rotations.euler_from_quaternion(truth.orientation)[2]


@pytest.fixture(scope="module")
def parked():
    """Every ground class parked with zero drive on the floor and on the ramp: drift (mm) in 60 s."""
    with Simulator(ramp_world(), seed=3) as sim:
        names = []
        for k, cls in enumerate(GROUND):
            y = 8.0 * (k - (len(GROUND) - 1) / 2)  # 8 m apart, none near the ramp's sides
            sim.spawn(cls, f"flat_{cls}", position=(-RAMP_LENGTH, y, 0.0))
            ramp_z = (RAMP_LENGTH / 2) * math.tan(SLOPE) + 0.05  # the ramp's surface at x = 0
            sim.spawn(cls, f"ramp_{cls}", position=(0.0, y, ramp_z), rpy=(0.0, -SLOPE, 0.0))
            names += [f"flat_{cls}", f"ramp_{cls}"]
        sim.run_for(3.0)  # settle onto the ground
        start = {n: np.array(sim.ground_truth(n).position) for n in names}
        sim.run_for(60.0)
        yield {n: 1000.0 * float(np.linalg.norm(np.array(sim.ground_truth(n).position) - start[n])) for n in names}


@pytest.mark.slow  # every ground robot parked for 60 s of sim time
@pytest.mark.parametrize("cls", GROUND)
def test_a_parked_robot_stays_parked_on_the_flat_and_on_a_15_degree_ramp(parked, cls):
    assert parked[f"flat_{cls}"] < 1.0, (cls, parked[f"flat_{cls}"])
    if cls in STANDING_ON_LEGS:  # a humanoid on straight PD-held legs is not a parked vehicle on a slope
        return
    assert parked[f"ramp_{cls}"] < 5.0, (cls, parked[f"ramp_{cls}"])


def test_a_dropped_robot_falls_freely():
    """No velocity damping: after 1.2 s of fall a robot, light or heavy, moves at g t within 1 %."""
    with Simulator("empty", seed=3) as sim:
        for k, cls in enumerate(("P2AT", "Hummer")):
            robot = sim.spawn(cls, cls, position=(0.0, 10.0 * k, 0.0))
            p.resetBasePositionAndOrientation(robot.body_id, (0.0, 10.0 * k, 20.0), (0, 0, 0, 1),
                                              physicsClientId=sim.client)
            robot.invalidate()
        sim.run_for(1.2)
        for cls in ("P2AT", "Hummer"):
            assert -sim.ground_truth(cls).linear_velocity[2] == pytest.approx(9.81 * 1.2, rel=0.01)


@pytest.mark.parametrize("cls", SKID)
def test_turn_rate_in_place_does_not_depend_on_heading(cls):
    turn = turn_in_place(cls)
    assert turn.spread < 1.05, (cls, [round(r, 3) for r in turn.sector_rates])


def test_the_yaw_loop_integrates_past_its_target_but_not_while_spinning_up():
    loop = YawRateLoop(load_robot("Kurt3D").drive)
    loop.correction(0.4, 0.1, 0.005)  # spinning up, far below the target: proportional only
    assert loop.integral == 0.0
    loop.reset()
    for _ in range(100):  # a jolt left it turning at 0.65 for a 0.4 target: the integral pulls back
        loop.correction(0.4, 0.65, 0.005)
    assert loop.integral < -0.1
    assert loop.correction(0.4, 0.65, 0.005) < loop.gain * loop.KP * (0.4 - 0.65)


@pytest.mark.parametrize("cls", ["P2AT", "ATRVJr", "Kenaf"])
@pytest.mark.parametrize("linear,angular", [(0.3, 0.0), (0.0, 0.5), (0.25, 0.3)])
def test_a_skid_steer_base_tracks_the_commanded_twist(cls, linear, angular):
    spec = load_robot(cls)
    with Simulator("empty", seed=2) as sim:
        sim.spawn(cls, "r", position=(0.0, 0.0, 0.0))
        sim.run_for(0.5)
        sim.submit(WheelDrive("r", *twist_to_wheel_speeds(linear, angular, spec.drive)))
        sim.run_for(1.0)  # spin up
        before = sim.ground_truth("r")
        unwrapped, last, seconds = 0.0, yaw_of(before), 4.0
        for _ in range(int(seconds / 0.05)):
            sim.run_for(0.05)
            yaw = yaw_of(sim.ground_truth("r"))
            unwrapped += math.remainder(yaw - last, 2 * math.pi)
            last = yaw
        after = sim.ground_truth("r")
    omega = unwrapped / seconds
    # mean forward speed: the chord of an arc understates it, so compare the path speed along the arc
    chord = float(np.linalg.norm(np.array(after.position[:2]) - np.array(before.position[:2])))
    speed = chord / seconds if abs(unwrapped) < 1e-3 else chord * abs(unwrapped) / (2 * math.sin(abs(unwrapped) / 2)) / seconds
    assert omega == pytest.approx(angular, abs=0.1 * max(abs(angular), 0.05)), omega
    if linear:  # turning in place, the centre wanders a few cm: no speed to compare
        assert speed == pytest.approx(abs(linear), rel=0.1), speed


@pytest.mark.parametrize("cls", ["P2AT", "ATRVJr", "Kenaf", "Zerg"])
def test_wheel_odometry_heading_over_a_full_turn_in_place(cls):
    """Odometry integrates the wheels with the drive's own track width: a full turn reads as one."""
    drive = load_robot(cls).drive
    spin = min(TURN_SURFACE_SPEED / drive.wheel_radius, drive.max_wheel_speed)
    with Simulator("empty", seed=2) as sim:
        sim.spawn(cls, "r", position=(0.0, 0.0, 0.0))
        sim.run_for(0.5)
        sim.submit(WheelDrive("r", -spin, spin))
        true_turn, odo_turn, last_yaw, last_theta = 0.0, 0.0, yaw_of(sim.ground_truth("r")), None
        while true_turn < 2 * math.pi and sim.time < 120:
            for reading in sim.run_for(0.05):
                if isinstance(reading, OdometryReading):
                    if last_theta is not None:
                        odo_turn += math.remainder(reading.theta - last_theta, 2 * math.pi)
                    last_theta = reading.theta
            yaw = yaw_of(sim.ground_truth("r"))
            true_turn += math.remainder(yaw - last_yaw, 2 * math.pi)
            last_yaw = yaw
    assert true_turn >= 2 * math.pi
    assert odo_turn == pytest.approx(true_turn, rel=0.05), (odo_turn, true_turn)


@pytest.mark.parametrize("fov,step,count", [(math.pi, 0.0174533, 181), (3.1416, 0.0174, 181),
                                            (0.5235988, 0.0349066, 16), (math.radians(30), math.radians(2), 16),
                                            (math.pi, 0.0174, 181)])
def test_beam_count_of_documented_fans(fov, step, count):
    assert beam_count(fov, step) == count


def documented_count(fov: float, step: float) -> int:
    """Beams a fan's parameters describe: one per whole step, the edge included when fov/step is
    a whole number up to the rounding of the step (the documents give steps to 6-7 digits)."""
    ratio = fov / step
    whole = round(ratio)
    return (whole if abs(ratio - whole) < 1e-4 * max(whole, 1) else math.floor(ratio)) + 1


def test_every_shipped_scanner_and_laser_has_the_grid_its_parameters_describe():
    checked = 0
    with Simulator("empty", seed=0) as sim:
        for cls in available_robots():
            spec = load_robot(cls)
            lasers = [s for s in spec.sensors if s.type in ("RangeScanner", "IRScanner", "RangeScanner3D", "RangeImager")]
            if not lasers:
                continue
            robot = sim.spawn(cls, f"g_{cls}", position=(6.0 * checked - 60.0, 50.0, 0.0))
            for s in lasers:
                prm = registry.params_for(s)
                sensor = robot.sensor(s.name)
                if s.type in ("RangeScanner", "IRScanner"):
                    expected = documented_count(prm.fov, prm.resolution)
                else:
                    expected = (documented_count(prm.vertical_fov, prm.vertical_step)
                                * documented_count(prm.horizontal_fov, prm.horizontal_step))
                assert len(sensor._local) == expected, (cls, s.name, len(sensor._local), expected)
                checked += 1
    assert checked >= 5
