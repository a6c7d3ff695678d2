"""Ray batches: one result per ray, in order, however the batch is chunked or threaded."""
import numpy as np
import pybullet as p
import pytest

from usarsim.sim.raycast import MAX_BATCH, PARALLEL_FROM, ray_test


@pytest.fixture
def floor_client():
    client = p.connect(p.DIRECT)
    shape = p.createCollisionShape(p.GEOM_BOX, halfExtents=[50, 50, 0.5], physicsClientId=client)
    p.createMultiBody(0, shape, basePosition=[0, 0, -0.5], physicsClientId=client)
    yield client
    p.disconnect(client)


@pytest.mark.parametrize("count", [1, PARALLEL_FROM - 1, PARALLEL_FROM, p.MAX_RAY_INTERSECTION_BATCH_SIZE,
                                   2 * MAX_BATCH + 5])
def test_every_ray_gets_its_own_result_in_order(floor_client, count):
    # ray i points down at x = i * step, alternately over the floor and beyond its edge
    xs = np.where(np.arange(count) % 2 == 0, 0.0, 60.0) + np.arange(count) * 1e-4
    starts = np.column_stack([xs, np.zeros(count), np.full(count, 1.0)])
    ends = starts - [0.0, 0.0, 2.0]
    results = ray_test(floor_client, starts, ends)
    assert len(results) == count
    hit = np.array([r[0] >= 0 for r in results])
    assert np.array_equal(hit, np.arange(count) % 2 == 0)
    assert all(abs(r[3][0] - x) < 1e-6 for r, x in zip(results[::2], xs[::2]))


def test_threaded_and_single_threaded_casts_agree(floor_client):
    rng = np.random.default_rng(0)
    starts = rng.uniform(-60, 60, size=(200, 3))
    ends = rng.uniform(-60, 60, size=(200, 3))
    together = ray_test(floor_client, starts, ends)  # one threaded batch
    alone = [ray_test(floor_client, starts[i:i + 1], ends[i:i + 1])[0] for i in range(200)]  # single-threaded
    assert together == alone
