"""Water volumes, the Submarine (propeller, rudder, stern plane) and the Passarola blimp.

Tolerances: the boat placed mid-water, once up to speed (10 s) with the propeller at full spin and
both fins at zero, keeps its depth within 0.10 m over 10 s at 0.305 m/s (the pitch per revolution) within
5 %; stern plane +0.4 rad pitches it nose up by the fin's moment over the keel's righting moment within
40 % (about 0.3 deg: at 0.3 m/s the plane cannot steer the depth); rudder +0.4 rad (SAE, right) turns it
right by more than 0.4 rad in 20 s. In a 0.2 m/s current it moves through the water: with the propeller
at 0 it drifts with the current within 5 %, at full spin it makes 0.305 m/s through the water (0.505 and
0.105 m/s over ground) within 5 %. The speed never overshoots by more than 2 %. The blimp climbs at the
commanded 1 m/s within 15 % and holds its height within 0.05 m at rest.
"""
import math
from dataclasses import replace

import numpy as np
import pybullet as p
import pytest

from usarsim import rotations
from usarsim.protocol import commands as pc
from usarsim.protocol import grammar as g
from usarsim.protocol import messages as pm
from usarsim.sim.catalogue import load_robot
from usarsim.sim.commands import BlimpDrive, CommandError, NauticDrive
from usarsim.sim.drives.blimp import twist_to_blimp
from usarsim.sim.drives.nautic import advance_speed, fin_lift, propeller_spin, twist_to_nautic
from usarsim.sim.fluid import element_forces, robot_elements, total_volume, water_column_at
from usarsim.sim.water import WaterSpec as WaterVolume
from usarsim.sim.readings import DepthReading, RobotState
from usarsim.sim.simulator import Simulator
from usarsim.sim.world import load_world

from fleet_worlds import POOL_SURFACE, pool_world

DEPTH = 5.0
CURRENT = 0.2  # m/s along +x
FULL_AHEAD = 0.3048 * 6.28 / (2 * math.pi)  # m/s: the propeller's pitch is metres per revolution
KEEL_LEVER = 0.24  # m: centre of buoyancy above the centre of mass (docs/robots.md, Submarine)


def yaw(sim, name):
    return rotations.euler_from_quaternion(sim.ground_truth(name).orientation)[2]


def _cruising_submarine(sim: Simulator):
    """The Submarine placed mid-water in the pool, at full propeller."""
    robot = sim.spawn("Submarine", "S")
    p.resetBasePositionAndOrientation(robot.body_id, (0.0, 0.0, POOL_SURFACE - DEPTH), (0, 0, 0, 1),
                                      physicsClientId=sim.client)
    robot.invalidate()
    sim.submit(NauticDrive("S", propeller=6.28))
    return robot


@pytest.fixture(scope="module")
def voyage():
    """One dive: placed mid-water, cruise level, rise on the stern plane, turn on the rudder."""
    out = {}
    with Simulator(pool_world(), seed=3) as sim:
        robot = _cruising_submarine(sim)
        speeds = []
        for _ in range(100):  # speeding up (the reference speed's 2 s lag) pitches the boat for a few seconds
            sim.run_for(0.1)
            speeds.append(float(sim.ground_truth("S").linear_velocity[0]))
        out["cruise_start"] = sim.ground_truth("S")
        readings = sim.run_for(10.0)
        out["cruise_end"] = sim.ground_truth("S")
        out["speeds"] = speeds
        gauge = next(s for s in robot.sensors if s.type_name == "Depth")
        for _ in range(100):  # the next gauge reading, and where the gauge was when it was taken
            depths = [r for r in sim.step(1) if isinstance(r, DepthReading)]
            if depths:
                out["depth"], out["gauge_z"] = depths[-1], float(robot.mount_pose(gauge.spec.mount)[0][2])
                break
        out["state"] = [r for r in readings if isinstance(r, RobotState)][-1]
        sim.submit(NauticDrive("S", stern_plane=0.4))
        sim.run_for(20.0)
        out["risen"] = sim.ground_truth("S")
        sim.submit(NauticDrive("S", stern_plane=0.0))
        sim.run_for(6.0)
        out["yaw_before"] = yaw(sim, "S")
        sim.submit(NauticDrive("S", rudder=-0.4))  # core +left: this is SAE Rudder +0.4, right
        readings = sim.run_for(20.0)
        out["yaw_after"] = yaw(sim, "S")
        out["turn_state"] = [r for r in readings if isinstance(r, RobotState)][-1]
        out["robot"] = robot
    return out


def test_depth_held_level_at_full_propeller(voyage):
    start, end = voyage["cruise_start"].position, voyage["cruise_end"].position
    assert abs(end[2] - start[2]) < 0.10
    speed = (end[0] - start[0]) / 10.0
    assert speed == pytest.approx(FULL_AHEAD, rel=0.05)
    assert max(voyage["speeds"]) < 1.02 * speed  # the speed loop does not overshoot


def test_stern_plane_pitches_nose_up_and_rudder_turns_right(voyage):
    robot = voyage["robot"]
    moment = fin_lift(1000.0, robot.spec.drive.stern_plane_area, FULL_AHEAD, 0.4) * robot.spec.drive.fin_lever
    righting = robot.drive.mass * 9.81 * KEEL_LEVER  # per radian of pitch
    pitch = rotations.euler_from_quaternion(voyage["risen"].orientation)[1]
    assert -pitch == pytest.approx(moment / righting, rel=0.4)  # REP-103: nose up is negative pitch
    assert voyage["risen"].position[2] > voyage["cruise_end"].position[2]
    assert rotations.wrap_pi(voyage["yaw_before"] - voyage["yaw_after"]) > 0.4  # clockwise from above = right


@pytest.mark.parametrize("propeller, over_ground", [(0.0, CURRENT), (6.28, CURRENT + FULL_AHEAD),
                                                    (-6.28, CURRENT - FULL_AHEAD)])
def test_in_a_current_the_boat_moves_through_the_water(propeller, over_ground):
    """Speed is through the water: with the propeller at 0 the boat drifts with the current."""
    pool = pool_world()
    world = replace(pool, water=[replace(pool.water[0], current=(CURRENT, 0.0, 0.0))])
    with Simulator(world, seed=3) as sim:
        _cruising_submarine(sim)
        sim.submit(NauticDrive("S", propeller=propeller))
        sim.run_for(20.0)
        start = sim.ground_truth("S").position
        sim.run_for(10.0)
        end = sim.ground_truth("S").position
    assert (end[0] - start[0]) / 10.0 == pytest.approx(over_ground, rel=0.05)


def test_depth_gauge_and_sta_fin_angles(voyage):
    depth = voyage["depth"]
    assert depth.depth == pytest.approx(POOL_SURFACE - voyage["gauge_z"], abs=1e-3)  # noise-free gauge on the hull
    assert depth.pressure == pytest.approx(1000.0 * 9.81 * depth.depth)
    assert depth.pressure_per_metre == pytest.approx(1000.0 * 9.81)
    assert depth.absolute_pressure == pytest.approx(101325.0 + depth.pressure)
    assert depth.pressure_variance == pytest.approx((1000.0 * 9.81) ** 2 * depth.variance)
    line = pm.format_reading(voyage["turn_state"])
    assert line.startswith("STA {Type NauticVehicle}") and "{SternPlaneAngle 0.0000}" in line
    assert "{RudderAngle 0.4000}" in line  # SAE: +right


def test_twist_to_nautic_and_blimp():
    sub = load_robot("Submarine").drive
    assert advance_speed(propeller_spin(1.5, 0.3048), 0.3048) == pytest.approx(1.5)
    assert advance_speed(2 * math.pi, 0.3048) == pytest.approx(0.3048)  # one revolution a second: one pitch
    propeller, rudder, stern = twist_to_nautic(0.2, 0.02, 0.01, sub)
    assert propeller == pytest.approx(2 * math.pi * 0.2 / 0.3048)
    assert rudder == pytest.approx(math.atan(3.1 * 0.01 / 0.2)) and stern == pytest.approx(math.atan(0.1))
    propeller, rudder, stern = twist_to_nautic(1.0, 0.1, 0.05, sub)
    assert propeller == pytest.approx(sub.max_propeller)  # faster than the boat can go: clamped
    assert rudder == pytest.approx(math.atan(3.1 * 0.05)) and stern == pytest.approx(math.atan(0.1))
    assert twist_to_nautic(100.0, 0.0, 0.0, sub)[0] == pytest.approx(sub.max_propeller)  # clamped
    assert twist_to_nautic(0.0, 1.0, 1.0, sub) == (0.0, 0.0, 0.0)  # no way on: the fins do nothing
    blimp = load_robot("Passarola").drive
    assert twist_to_blimp(0.0, 1.0, 0.3, blimp) == pytest.approx((math.pi / 2, 1.0, 0.3))
    assert twist_to_blimp(-1.0, 0.0, 0.0, blimp) == pytest.approx((0.0, -1.0, 0.0))  # backwards: thrust reversed


def pool_between(bottom, surface):
    return WaterVolume((0.0, 0.0), (100.0, 100.0), surface, bottom)


def test_buoyancy_of_an_element_is_archimedes():
    spec = load_robot("Submarine")
    hull = next(e for e in robot_elements_of(spec) if e.link == "hull")

    def lift(water):
        return element_forces(hull, np.zeros(3), np.eye(3), np.zeros(3), np.zeros(3), 1000.0, -9.81, water, np.zeros(3))

    out = lift(pool_between(-10.0, 10.0))
    assert out.force[2] == pytest.approx(1000.0 * 9.81 * math.pi * 0.5714 ** 2 * 6.0)
    half = lift(pool_between(-10.0, 0.0))
    assert half.force[2] == pytest.approx(out.force[2] / 2.0, rel=1e-6)  # surface at the hull's centre line
    assert half.at[2] == pytest.approx(-0.5714 / 2, rel=1e-4)  # at the centre of the wet half (shape_rpy 1.5708)
    aground = lift(pool_between(0.0, 10.0))  # the water's bottom at the centre line: the lower half is not in it
    assert aground.force[2] == pytest.approx(out.force[2] / 2.0, rel=1e-6)
    assert aground.at[2] == pytest.approx(0.5714 / 2, rel=1e-4)
    assert lift(pool_between(1.0, 10.0)) is None and lift(pool_between(-10.0, -1.0)) is None  # below / above the water
    in_air = element_forces(hull, np.zeros(3), np.eye(3), np.zeros(3), np.zeros(3), 1.2, -9.81, None, np.zeros(3))
    assert in_air.force[2] == pytest.approx(1.2 * 9.81 * math.pi * 0.5714 ** 2 * 6.0)  # None: fluid everywhere
    moving = element_forces(hull, np.zeros(3), np.eye(3), np.array([1.0, 0, 0]), np.zeros(3), 1000.0, -9.81,
                            pool_between(-10.0, 10.0), np.array([1.0, 0, 0]))
    assert moving.force[0] == pytest.approx(0.0)  # drifting with the current: no drag
    assert fin_lift(1000.0, 0.2, -1.0, 0.3) < 0 < fin_lift(1000.0, 0.2, 1.0, 0.3)


def robot_elements_of(spec):
    class Stub:  # robot_elements only reads the catalogue body
        pass
    stub = Stub()
    stub.spec = spec
    return robot_elements(stub)


def test_water_volume_depth_and_bounds():
    pool = WaterVolume((0.0, 0.0), (4.0, 4.0), 2.0, 0.0)
    assert water_column_at([pool], (1.0, 1.0, 1.0)) is pool and water_column_at([pool], (3.0, 0.0, 1.0)) is None
    assert water_column_at([pool], (1.0, 1.0, 3.0)) is pool  # above the surface: found, dry parts float
    assert pool.depth((0.0, 0.0, 0.5)) == pytest.approx(1.5)
    assert total_volume(robot_elements_of(load_robot("Submarine"))) > 6.0


def test_protocol_forms_of_the_submarine():
    spec = load_robot("Submarine")
    cmds = pc.drive_commands(g.parse_command("DRIVE {Propeller 1.0} {Rudder 0.523599} {SternPlane 0.1}"), "S", spec)
    assert cmds == [NauticDrive("S", 1.0, -0.523599, 0.1)]
    with pytest.raises(pc.Unsupported, match="use {Propeller}"):
        pc.drive_commands(g.parse_command("DRIVE {Left 1} {Right 1}"), "S", spec)
    assert pm.geo_robot(spec, "S") == ("GEO {Type NauticVehicle} {Name S} {Dimensions 6.5364,1.1428,1.9929} "
                                       "{COG 0.0000,0.0000,0.0000}\r\n")
    assert pm.conf_robot(spec, "S") == ("CONF {Type NauticVehicle} {Name S} {SteeringType Underwater} "
                                        "{Mass 6411.7000} {MaxRudder 0.4363} {MaxSternPlane 0.4363} "
                                        "{MaxPropeller 6.2800}\r\n")


def test_empty_battery_stops_the_propeller_and_the_boat_coasts():
    """No thrust and no braking speed loop once the battery is empty: the boat slows by the water's drag
    alone, while trim keeps it at its depth."""
    with Simulator(pool_world(), seed=3) as sim:
        robot = _cruising_submarine(sim)
        sim.run_for(10.0)
        robot.battery_used = robot.spec.battery_life  # empty
        sim.submit(NauticDrive("S", propeller=6.28))  # commanded, but nothing turns the propeller
        sim.step(1)
        assert robot.drive.thrust == 0.0 and robot.drive.power() == 0.0 and robot.drive._integral == 0.0
        start = sim.ground_truth("S")
        cruise = float(np.linalg.norm(start.linear_velocity))
        sim.run_for(3.0)
        end = sim.ground_truth("S")
        coast = float(np.linalg.norm(end.linear_velocity))
    # drag alone (1/2 rho A v (v + 0.1) on a ~1 m^2 hull of 6.4 t) takes off a few per cent of the speed in
    # 3 s; the speed loop braking towards zero (mass / 2 s) would take off most of it
    assert cruise > 0.28 and 0.85 * cruise < coast < 0.995 * cruise
    assert abs(end.position[2] - start.position[2]) < 0.05  # trim still holds it neutral


def test_out_of_water_the_submarine_lies_still():
    with Simulator("empty") as sim:
        sim.spawn("Submarine", "S")
        sim.submit(NauticDrive("S", propeller=6.28))
        sim.run_for(2.0)
        assert abs(sim.ground_truth("S").position[0]) < 0.05
        with pytest.raises(CommandError):
            sim.submit(NauticDrive("S", propeller=math.nan)).result()


@pytest.fixture(scope="module")
def blimp_flight():
    out = {}
    with Simulator("empty", seed=2) as sim:
        sim.spawn("Passarola", "B")
        sim.run_for(0.5)
        out["rest_a"] = sim.ground_truth("B").position
        sim.run_for(2.0)
        out["rest_b"] = sim.ground_truth("B").position
        sim.submit(BlimpDrive("B", xz_angle=math.pi / 2, thrust=1.0))
        sim.run_for(2.0)
        out["climb_a"] = sim.ground_truth("B").position
        sim.run_for(2.0)
        out["climb_b"] = sim.ground_truth("B").position
        out["level"] = rotations.euler_from_quaternion(sim.ground_truth("B").orientation)
        sim.submit(BlimpDrive("B", xz_angle=0.0, thrust=1.0, yaw_rate=-0.5))  # SAE TailPropeller +0.5: right
        sim.run_for(2.0)
        y0 = rotations.euler_from_quaternion(sim.ground_truth("B").orientation)[2]
        sim.run_for(1.0)
        out["yaw_rate"] = rotations.wrap_pi(rotations.euler_from_quaternion(sim.ground_truth("B").orientation)[2] - y0)
    return out


def test_blimp_floats_neutral_and_climbs_on_vectored_thrust(blimp_flight):
    assert abs(blimp_flight["rest_b"][2] - blimp_flight["rest_a"][2]) < 0.05
    climb = (blimp_flight["climb_b"][2] - blimp_flight["climb_a"][2]) / 2.0
    assert climb == pytest.approx(1.0, rel=0.15)
    roll, pitch, _ = blimp_flight["level"]
    assert abs(roll) < 0.05 and abs(pitch) < 0.05


def test_blimp_tail_propeller_turns_right(blimp_flight):
    assert blimp_flight["yaw_rate"] == pytest.approx(-0.5, rel=0.2)


def test_blimp_drag_follows_the_worlds_air_density():
    thrusts = []
    for density in (1.225, 12.25):
        with Simulator(replace(load_world("empty"), air_density=density), seed=2) as sim:
            robot = sim.spawn("Passarola", "B")
            sim.submit(BlimpDrive("B", xz_angle=0.0, thrust=1.0))
            sim.run_for(3.0)
            thrusts.append(robot.drive.thrust)
    assert thrusts[1] == pytest.approx(10.0 * thrusts[0], rel=0.2)  # at the held speed the thrust is the drag


def test_the_water_lets_removed_robots_go():
    with Simulator(pool_world()) as sim:
        sim.spawn("Submarine", "S")
        sim.step(1)
        assert [body.robot.name for body in sim.world.water._bodies.values()] == ["S"]
        sim.remove("S")
        sim.step(1)
        assert not sim.world.water._bodies


def test_protocol_forms_of_the_blimp():
    spec = load_robot("Passarola")
    cmds = pc.drive_commands(g.parse_command("DRIVE {XZAngle 0.5} {ThrustPropeller 1} {TailPropeller 0.3}"), "B", spec)
    assert cmds == [BlimpDrive("B", 0.5, 1.0, -0.3)]
    assert pm.conf_robot(spec, "B") == "CONF {Type AerialVehicle} {Name B} {SteeringType Blimp} {Mass 3.0000}\r\n"
