"""Integration: the real simulator with the shipped worlds and the P2AT (lockstep)."""
import math
import sys

import pytest

from usarsim.config_loading import ConfigError
from usarsim.sim.commands import CommandError, JointTargets, SensorCommand, WheelDrive
from usarsim.sim.readings import GpsReading, GroundTruthReading, OdometryReading, RangeScan, RobotState
from usarsim.sim.simulator import FRONT_DOOR_SWITCH_INTERVAL, Simulator

def latest(readings, cls, sensor=None):
    found = [r for r in readings if isinstance(r, cls) and (sensor is None or r.sensor == sensor)]
    assert found, f"no {cls.__name__} reading"
    return found[-1]


@pytest.fixture(scope="module")
def yellow_run():
    """P2AT in yellow driven forward for 2 s, all readings kept."""
    with Simulator("yellow", seed=3) as sim:
        robot = sim.spawn("P2AT", "R1")
        start = sim.ground_truth("R1").position
        settle = sim.run_for(0.5)
        sim.submit(WheelDrive("R1", 3.0, 3.0))
        readings = sim.run_for(2.0)
        yield {"start": start, "readings": settle + readings, "truth": sim.ground_truth("R1"), "robot": robot}


def test_drive_forward_moves_along_plus_x(yellow_run):
    truth: GroundTruthReading = yellow_run["truth"]
    dx = truth.position[0] - yellow_run["start"][0]
    dy = truth.position[1] - yellow_run["start"][1]
    # 3 rad/s * 0.11 m = 0.33 m/s for ~2 s, minus acceleration
    assert 0.5 < dx < 0.7
    assert abs(dy) < 0.05


def test_odometry_agrees_with_ground_truth(yellow_run):
    odo: OdometryReading = latest(yellow_run["readings"], OdometryReading)
    travelled = scan_time_position(yellow_run, odo.time) - yellow_run["start"][0]
    # wheel odometry on flat ground: within 5 % of the distance (slip, encoder quantisation)
    assert odo.x == pytest.approx(travelled, rel=0.05, abs=0.02)
    assert abs(odo.y) < 0.03
    assert abs(odo.theta) < 0.03


def test_laser_sees_the_wall_ahead(yellow_run):
    scan: RangeScan = latest(yellow_run["readings"], RangeScan)
    centre = len(scan.ranges) // 2
    assert scan.angle_min == pytest.approx(-math.pi / 2, abs=1e-3)
    assert len(scan.ranges) == 181
    robot = yellow_run["robot"]
    mount_x = next(s for s in robot.spec.sensors if s.name == "Scanner").mount.xyz[0]
    wall = _wall_distance()
    expected = wall - (scan_time_position(yellow_run, scan.time) - yellow_run["start"][0]) - mount_x
    assert scan.ranges[centre] == pytest.approx(expected, abs=0.05)


def scan_time_position(run, t):
    truths = [r for r in run["readings"] if isinstance(r, GroundTruthReading) and r.time <= t + 1e-9]
    return truths[-1].position[0]


def _wall_distance() -> float:
    """The distance from yellow's first start pose to the wall ahead, documented in the world file."""
    from usarsim.paths import share_dir
    import re

    text = (share_dir() / "worlds" / "yellow.yaml").read_text()
    match = re.search(r"wall[_ ]ahead[^\d]*([\d.]+)", text, re.IGNORECASE)
    assert match, "yellow.yaml documents the wall distance ahead of start 1"
    return float(match.group(1))


def test_indoor_gps_has_no_fix(yellow_run):
    gps: GpsReading = latest(yellow_run["readings"], GpsReading)
    assert gps.fix is False and gps.satellites == 0


def test_state_reports_battery_draining(yellow_run):
    states = [r for r in yellow_run["readings"] if isinstance(r, RobotState)]
    assert states[0].battery > states[-1].battery
    assert states[-1].vehicle_type == "GroundVehicle"


def test_gps_latitude_increases_driving_north():
    with Simulator("empty", seed=1) as sim:
        sim.spawn("P2AT", "R1")
        first = latest(sim.run_for(1.0), GpsReading)
        sim.submit(WheelDrive("R1", 6.0, 6.0))
        last = latest(sim.run_for(6.0), GpsReading)
    assert first.fix and last.fix
    assert last.satellites >= 4
    # ~3.5 m north is ~3.1e-5 degrees; noise sigma at 12 satellites is 0.5 m
    assert last.latitude - first.latitude > 1.5e-5


def run_readings(seed: int, ticks: int = 300):
    with Simulator("yellow", seed=seed) as sim:
        sim.spawn("P2AT", "R1")
        sim.submit(WheelDrive("R1", 2.0, 1.0))
        return [r.to_dict() for r in sim.step(ticks)]


def test_same_seed_same_readings_bit_for_bit():
    a, b = run_readings(5), run_readings(5)
    assert a == b
    c = run_readings(6)
    assert a != c


def test_unknown_robot_class_lists_known():
    with Simulator("empty") as sim:
        with pytest.raises(ConfigError, match=r"unknown robot class 'Robby'.*P2AT"):
            sim.spawn("Robby")


def test_bad_commands_fail_their_future_and_the_sim_goes_on():
    with Simulator("empty") as sim:
        sim.spawn("P2AT", "R1")
        with pytest.raises(CommandError):
            WheelDrive("R1", float("nan"), 1.0)
        unknown_robot = sim.submit(WheelDrive("Nobody", 1.0, 1.0))
        unknown_joint = sim.submit(JointTargets("R1", {"no_such_joint": 1.0}))
        unknown_sensor = sim.submit(SensorCommand("R1", device="Nope", opcode="RESET"))
        reset = sim.submit(SensorCommand("R1", device="Odometry", opcode="RESET"))
        sim.step(2)
        with pytest.raises(CommandError, match="no robot named"):
            unknown_robot.result(0)
        with pytest.raises(CommandError, match="has no joint"):
            unknown_joint.result(0)
        assert unknown_sensor.result(0).ok is False
        assert reset.result(0).ok is True
        assert sim.step(10) is not None


def test_duplicate_names_and_removal():
    with Simulator("empty") as sim:
        sim.spawn("P2AT", "R1")
        with pytest.raises(CommandError, match="already exists"):
            sim.spawn("P2AT", "R1")
        auto = sim.spawn("P2AT", start=sim.spec.start_poses[1].tag)
        assert auto.name == "P2AT_1"
        sim.remove("R1")
        assert "R1" not in sim.robots
        sim.step(5)


def test_pan_tilt_respects_limits():
    with Simulator("empty") as sim:
        robot = sim.spawn("P2AT", "R1")
        sim.submit(JointTargets("R1", {"CameraPanTilt:2": 2.0}))
        sim.run_for(5.0)
        group = robot.joint_groups["CameraPanTilt"]
        positions, _, _ = group.state()
        assert positions[1] == pytest.approx(0.4, abs=0.02)


def test_realtime_pacing_tracks_wall_clock():
    import time

    with Simulator("empty", pacing="realtime") as sim:
        sim.spawn("P2AT", "R1")
        start = time.monotonic()
        sim.start()
        time.sleep(0.5)
        sim.stop()
        elapsed = time.monotonic() - start
    # realtime pacing never runs ahead of the wall clock
    assert 0.0 < sim.time <= elapsed + 0.02


@pytest.mark.parametrize("before, after", [(0.005, FRONT_DOOR_SWITCH_INTERVAL), (0.0002, 0.0002)])
def test_a_running_loop_lets_other_threads_in_at_least_every_millisecond(before, after):
    saved = sys.getswitchinterval()
    try:
        sys.setswitchinterval(before)
        with Simulator("empty", pacing="fast") as sim:
            sim.start()
            sim.stop()
        assert sys.getswitchinterval() == pytest.approx(after, rel=0.01)  # lowered to 1 ms, never raised
    finally:
        sys.setswitchinterval(saved)


def test_manual_sensor_reads_once_per_scan_request_even_between_scheduled_readings():
    with Simulator("yellow", seed=1) as sim:
        robot = sim.spawn("P2AT", "R1")
        laser = robot.sensor("Scanner")
        laser.params.manual = True
        sim.step(1)  # the spawn-time readings
        scans = lambda readings: [r for r in readings if isinstance(r, RangeScan)]  # noqa: E731
        assert scans(sim.run_for(0.5)) == []
        sim.submit(SensorCommand("R1", device="Scanner", opcode="SCAN"))
        assert len(scans(sim.step(1))) == 1
        assert scans(sim.run_for(0.5)) == []


def test_camera_renders_from_the_tick_after_it_is_switched_on():
    with Simulator("yellow", seed=1) as sim:
        robot = sim.spawn("P2AT", "R1")
        camera = robot.sensor("Camera")
        images = lambda readings: [r for r in readings if r.sensor == "Camera"]  # noqa: E731
        assert images(sim.run_for(1.0)) == []
        camera.active = True
        assert len(images(sim.step(1))) == 1


def test_camera_fov_opcode_clamps_restores_and_refuses_negative_angles():
    with Simulator("empty") as sim:
        sim.spawn("P2AT", "R1")
        results = [sim.submit(SensorCommand("R1", device="Camera", opcode="FOV", params=(v,))) for v in (9.0, 0.0, -0.5)]
        sim.step(1)
        wide, default, negative = (f.result(0) for f in results)
        assert wide.ok and dict(wide.fields)["FOV"] < 9.0  # clamped to the camera's max_fov
        assert default.ok and dict(default.fields)["FOV"] == pytest.approx(sim.robot("R1").sensor("Camera").params.fov)
        assert not negative.ok and "FOV" in negative.message


def test_core_public_surface_resolves():
    import usarsim.sim as core
    from usarsim.sim.simulator import Simulator as Defined

    assert core.Simulator is Defined
    for name in core.__all__:
        assert getattr(core, name) is not None
    with pytest.raises(AttributeError):
        core.NoSuchThing  # noqa: B018
    assert sorted(core.__all__) == sorted([*core._EXPORTS, *core._SUBMODULES])
