"""Ray casting shared by the range sensors: glass handling and batched sonars."""
import numpy as np
import pybullet as p
import pytest

from usarsim.sim.readings import RangeReading
from usarsim.sim.sensors.range import Ranger, _batch_rays, cast_rays
from usarsim.sim.simulator import Simulator
from usarsim.sim.world import build_world, load_world


@pytest.fixture(scope="module")
def yellow():
    client = p.connect(p.DIRECT)
    yield client, build_world(client, load_world("yellow"))
    p.disconnect(client)


def placed(world, *arena_xyz):
    """World coordinates of a point given in the arena's own coordinates (worlds/yellow.yaml)."""
    return np.array(arena_xyz) + np.array(world.spec.placement)


def test_glass_stops_rays_unless_ignored(yellow):
    client, world = yellow
    origin = placed(world, 2.0, 7.0, 0.5)  # 1 m south of the glass panel (face at x 2.975)
    north_west = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    solid = cast_rays(client, origin, north_west, 20.0)
    through = cast_rays(client, origin, north_west, 20.0, world.ray_ignore_ids)
    assert solid[0] == pytest.approx(0.975, abs=1e-3)
    assert through[0] == pytest.approx(10.0, abs=1e-3)  # the north wall's face at x 12
    assert solid[1] == through[1] == pytest.approx(2.0, abs=1e-3)  # west wall, no glass in between


def test_per_ray_origins_and_limits(yellow):
    client, world = yellow
    origins = np.array([placed(world, 2.0, 7.0, 0.5)] * 2)
    dirs = np.array([[0.0, 1.0, 0.0], [0.0, 1.0, 0.0]])
    out = cast_rays(client, origins, dirs, np.array([1.0, 5.0]))
    assert np.isinf(out[0]) and out[1] == pytest.approx(2.0, abs=1e-3)


def test_batched_sonars_equal_one_by_one():
    with Simulator("yellow", seed=2) as sim:
        robot = sim.spawn("P2AT", "R1")
        sim.run_for(0.3)
        sonars = [s for s in robot.sensors if isinstance(s, Ranger)]
        assert len(sonars) == 16
        rays = [s._rays() for s in sonars]
        single = [float(np.min(cast_rays(sim.client, o, d, s.params.max_range))) for s, (o, d) in zip(sonars, rays)]
        batched = Ranger.sample_batch(sonars, sim.time)
    assert all(isinstance(r, RangeReading) for r in batched)
    assert [r.sensor for r in batched] == [s.name for s in sonars]
    for reading, exact, sonar in zip(batched, single, sonars):
        # 5 % relative noise around the noiseless nearest hit, capped at the range limit
        assert reading.range == pytest.approx(min(exact, sonar.params.max_range), rel=0.06)


def test_sonars_fixed_to_the_chassis_are_placed_at_once_where_their_mounts_are():
    with Simulator("yellow", seed=2) as sim:
        robot = sim.spawn("P2AT", "R1", rpy=(0.0, 0.0, 0.7))
        sim.run_for(0.3)
        sonars = [s for s in robot.sensors if isinstance(s, Ranger)]
        one_by_one = [s._rays() for s in sonars]
        origins, directions = _batch_rays(sonars)
        camera = next(s for s in robot.sensors if s.type_name == "Camera")
        assert robot.chassis_mount(camera.spec.mount) is None  # on the pan-tilt: placed on its own
    assert all(s._chassis is not None for s in sonars)
    expected_origins = np.concatenate([np.tile(o, (len(d), 1)) for o, d in one_by_one])
    expected_directions = np.concatenate([d for _, d in one_by_one])
    np.testing.assert_allclose(origins, expected_origins, atol=1e-12)
    np.testing.assert_allclose(directions, expected_directions, atol=1e-12)


def _box(client: int, centre: tuple[float, float, float], half: tuple[float, float, float]) -> None:
    shape = p.createCollisionShape(p.GEOM_BOX, halfExtents=half, physicsClientId=client)
    p.createMultiBody(0.0, shape, basePosition=centre, physicsClientId=client)


def test_a_batch_of_one_sonar_and_single_ray_irs_reads_what_each_reads_alone():
    # Without glass the Kurt2D's sonar (a 17-ray cone) and its seven IRs (one ray each) share one batch,
    # so each sensor's nearest hit is taken from rays of uneven counts.
    with Simulator("empty", seed=2, noise=False) as sim:
        robot = sim.spawn("Kurt2D", "K1")
        x, y, _ = robot.base.position.tolist()
        _box(sim.client, (x + 0.55, y, 0.2), (0.05, 1.0, 0.3))  # ahead
        _box(sim.client, (x, y + 0.40, 0.2), (1.0, 0.05, 0.3))  # left
        _box(sim.client, (x - 0.70, y, 0.2), (0.05, 1.0, 0.3))  # behind
        sim.step(1)
        rangers = [s for s in robot.sensors if isinstance(s, Ranger)]
        assert sorted(s.type_name for s in rangers) == ["IR"] * 7 + ["Sonar"]
        assert len({s._ignore() for s in rangers}) == 1  # one batch
        alone = [s.read(sim.time).range for s in rangers]
        batched = [r.range for r in Ranger.sample_batch(rangers, sim.time)]
    assert batched == alone
    assert len(set(alone)) >= 3  # the walls are at different distances, so a shifted ray would show
