"""The wireless model alone: path loss, walls by ray casts, cut-off, relays, symmetry, determinism."""
from __future__ import annotations

import math

import numpy as np
import pybullet as p
import pytest

from usarsim.sim.simulator import Simulator
from usarsim.sim.water import FRESH_WATER_DENSITY, SEA_WATER_DENSITY, WaterSpec
from usarsim.sim.wireless import count_walls, path_loss_dbm
from usarsim.sim.wireless.model import EARTH_DB_PER_M, FRESH_WATER_DB_PER_M, SEA_WATER_DB_PER_M, water_db_per_m
from usarsim.sim.world import CommSpec, GpsOrigin, ObstacleSpec, StartPose, WallWeights, WorldSpec
from usarsim.sim.world_geometry import StaticItem
from wireless_scene import scene, wall

COMM = CommSpec()


def table_between(*walls, comm: CommSpec = COMM, a=(0.0, 0.0, 0.0), b=(10.0, 0.0, 0.0), **extra):
    """Signal table of stations A at ``a`` and B at ``b`` with ``walls`` between them."""
    with Simulator(scene(*walls, comm=comm, **extra)) as sim:
        sim.add_station("A", a)
        sim.add_station("B", b)
        sim.step(1)
        return sim.wireless.table


def test_formula_matches_the_manual():
    assert path_loss_dbm(2.0, 0, COMM) == pytest.approx(-49.67)
    assert path_loss_dbm(20.0, 0, COMM) == pytest.approx(-49.67 - 10.9)
    assert path_loss_dbm(20.0, 3, COMM) == pytest.approx(-49.67 - 10.9 - 3 * 6.625)
    assert path_loss_dbm(20.0, 9, COMM) == path_loss_dbm(20.0, 5, COMM)  # at most C walls count
    assert math.isfinite(path_loss_dbm(0.0, 0, COMM))


@pytest.mark.parametrize("count", [0, 1, 5, 6])
def test_free_space_and_walls(count):
    table = table_between(*[wall(2.0 + i) for i in range(count)])
    assert table.walls[0, 1] == count
    expected = path_loss_dbm(10.0, min(count, 5), COMM)
    assert table.signal_between("A", "B") == pytest.approx(expected)
    if count:
        assert table.signal_between("A", "B") < table_between().signal_between("A", "B")


def test_a_wall_counts_once_however_thick_or_built():
    assert table_between(wall(4.0, thickness=1.5)).walls[0, 1] == 1
    assert table_between(wall(4.0), wall(4.1), wall(4.2, thickness=0.3)).walls[0, 1] == 1  # butted parts
    assert table_between(wall(4.0), wall(4.5)).walls[0, 1] == 2


def test_glass_and_fences_count_as_the_surface_tags_say():
    assert table_between(wall(4.0, surface="transparent")).walls[0, 1] == 0.5
    assert table_between(wall(4.0, surface="mesh_fence")).walls[0, 1] == 0.5
    assert table_between(wall(4.0, surface="mirror")).walls[0, 1] == 1
    heavy_glass = CommSpec(walls=WallWeights(transparent=2.0))
    assert table_between(wall(4.0, surface="transparent"), comm=heavy_glass).walls[0, 1] == 2


def test_robots_and_debris_are_not_walls():
    crate = ObstacleSpec(kind="box", xyz=(5.0, 0.0, 0.3), size=(0.6, 0.6, 0.6), mass=5.0)
    with Simulator(scene(obstacles=[crate])) as sim:
        sim.add_station("A", (0.0, 0.0, 0.0))
        sim.add_station("B", (10.0, 0.0, 0.0))
        sim.spawn("P2AT", "R1", position=(3.0, 0.0, 0.0))
        sim.step(1)
        assert sim.wireless.table.walls[sim.wireless.table.index("A"), sim.wireless.table.index("B")] == 0


def test_cut_off_and_relay_through_a_station():
    # -49.67 - 10.9 log10(d / 2) < -93 from d ~ 19.2 km in free space: use walls to cut the link
    walls = [wall(2.0 + i) for i in range(5)]
    far = table_between(*walls, b=(60.0, 0.0, 0.0))
    assert far.signal_between("A", "B") < COMM.cutoff
    assert not far.direct("A", "B") and not far.reachable("A", "B") and far.route("A", "B") is None
    with Simulator(scene(*walls)) as sim:
        sim.add_station("A", (0.0, 0.0, 0.0))
        sim.add_station("B", (60.0, 0.0, 0.0))
        sim.spawn("P2AT", "R1", position=(0.0, 1.0, 0.0))
        sim.spawn("P2AT", "R2", position=(0.0, 29.0, 0.0))  # around the end of the walls, on the floor (its edge is y 30)
        sim.step(1)
        assert sim.wireless.table.direct("R2", "B") and sim.wireless.table.direct("A", "R2")
        assert not sim.wireless.table.reachable("A", "B")  # robots do not relay
        sim.add_station("Relay", (1.0, 30.0, 0.0))
        sim.step(1)
        table = sim.wireless.table
        assert not table.direct("A", "B")
        assert table.route("A", "B") == ("A", "Relay", "B") and table.reachable("B", "A")
        assert table.route("R1", "B") == ("R1", "Relay", "B")
        sim.remove("Relay")
        sim.step(1)
        assert not sim.wireless.table.reachable("A", "B")


def test_walls_are_symmetric_in_an_arena():
    with Simulator("orange") as sim:
        lo = np.min([p.getAABB(b, physicsClientId=sim.client)[0] for b in sim.world.static_ids], axis=0)
        hi = np.max([p.getAABB(b, physicsClientId=sim.client)[1] for b in sim.world.static_ids], axis=0)
        rng = np.random.default_rng(3)
        starts = rng.uniform(lo, hi, size=(200, 3))
        ends = rng.uniform(lo, hi, size=(200, 3))
        weights = sim.wireless.weights
        forward = count_walls(sim.client, starts, ends, weights)
        backward = count_walls(sim.client, ends, starts, weights)
        assert np.array_equal(forward, backward)
        assert forward.max() >= 3  # the arena does put walls in the way


def test_table_is_symmetric_deterministic_and_updates_at_its_rate():
    def run() -> list:
        with Simulator("orange", seed=5) as sim:
            for i, start in enumerate(sim.spec.start_poses[:3]):
                sim.spawn("P2AT", f"R{i}", start=start.tag)
            sim.add_station("Base", sim.spec.start_poses[0].xyz)
            times = []
            sim.wireless.add_listener(lambda t: times.append(t.time))
            sim.run_for(2.5)
            return [sim.wireless.table, times]

    (first, times), (second, _) = run(), run()
    assert np.array_equal(first.signal, first.signal.T) and np.array_equal(first.walls, first.walls.T)
    assert np.array_equal(first.signal, second.signal) and first.names == second.names
    assert times[0] == pytest.approx(0.005) and times[1:] == pytest.approx([1.0, 2.0])  # 1 Hz of sim time


def _inside_fraction(a, b, inside, samples: int = 20000) -> float:
    """Share of the segment a -> b for which ``inside(point)`` holds (midpoint sampling)."""
    t = (np.arange(samples) + 0.5) / samples
    points = np.asarray(a)[None, :] + t[:, None] * (np.asarray(b) - np.asarray(a))[None, :]
    return float(np.mean([inside(q) for q in points]))


def test_a_hill_absorbs_by_the_length_of_earth_between_the_stations():
    """Two stations on either side of a hill in `hills`: the earth costs 40 dB/m of path inside it
    (measured here from the terrain's own heights), it is no wall, and the link is dead."""
    with Simulator("hills") as sim:
        a = sim.add_station("A", (-60.0, -30.0, sim.world.floor_below(-60.0, -30.0, 500.0)))
        b = sim.add_station("B", (-15.0, -30.0, sim.world.floor_below(-15.0, -30.0, 500.0)))
        sim.step(1)
        table = sim.wireless.table
        pa, pb = (table.positions[table.index(n)] for n in (a, b))
        length = math.dist(pa, pb)
        earth = length * _inside_fraction(pa, pb, lambda q: q[2] < sim.world.floor_below(q[0], q[1], 500.0))
    free = path_loss_dbm(length, 0.0, COMM)
    assert earth > 5.0
    assert table.walls[table.index(a), table.index(b)] == 0.0
    assert free - table.signal_between(a, b) == pytest.approx(EARTH_DB_PER_M * earth, rel=0.05)
    assert not table.direct(a, b)


def test_a_u_shaped_building_crossed_through_both_arms_is_two_walls():
    """One concave body (a prism with a courtyard open to one side): the path through both arms crosses
    two walls, through one arm and the courtyard one."""
    u_shape = [(0, 0), (10, 0), (10, 10), (8, 10), (8, 2), (2, 2), (2, 10), (0, 10)]
    building = StaticItem(kind="prism", xyz=(0.0, 0.0, 0.0), size=(0.0, 0.0, 3.0), points=u_shape)
    world = WorldSpec(name="u", description="u-shaped building", gps_origin=GpsOrigin(0.0, 0.0, 0.0),
                      start_poses=[StartPose("S", (-5.0, 0.0, 0.0))], static=[building])
    with Simulator(world) as sim:
        for name, xy in {"West": (-5.0, 6.0), "East": (15.0, 6.0), "Yard": (5.0, 6.0)}.items():
            sim.add_station(name, (*xy, 0.0))
        sim.step(1)
        table = sim.wireless.table
    assert table.walls[table.index("West"), table.index("East")] == 2.0
    assert table.walls[table.index("West"), table.index("Yard")] == 1.0


def test_sea_water_ends_a_link_within_centimetres():
    """A station 5 cm under sea water to one on the shore: 770 dB per metre of the path under water."""
    sea = WaterSpec((0.0, 0.0), (20.0, 20.0), surface=0.35, bottom=0.0, density=SEA_WATER_DENSITY)
    world = WorldSpec(name="sea", description="a shallow sea", gps_origin=GpsOrigin(0.0, 0.0, 0.0),
                      start_poses=[StartPose("S", (20.0, 0.0, 0.0))], water=[sea])
    with Simulator(world) as sim:
        sim.add_station("Diver", (0.0, 0.0, 0.0))  # antenna 0.3 m up: 5 cm under the surface
        sim.add_station("Shore", (12.0, 0.0, 10.0))  # on a mast on the quay
        sim.step(1)
        table = sim.wireless.table
    pa, pb = table.positions[table.index("Diver")], table.positions[table.index("Shore")]
    wet = math.dist(pa, pb) * _inside_fraction(pa, pb, sea.contains)
    assert 0.0 < wet < 0.2
    free = path_loss_dbm(math.dist(pa, pb), 0.0, COMM)
    assert free - table.signal_between("Diver", "Shore") == pytest.approx(SEA_WATER_DB_PER_M * wet, rel=0.02)
    assert not table.direct("Diver", "Shore")
    assert water_db_per_m(FRESH_WATER_DENSITY) == FRESH_WATER_DB_PER_M < SEA_WATER_DB_PER_M
