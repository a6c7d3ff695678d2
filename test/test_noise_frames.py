"""Pure logic: noise models, output curves, frame conversions, twist kinematics."""
import math

import numpy as np
import pytest
import transforms3d
from hypothesis import given, strategies as st

from usarsim import rotations
from usarsim.protocol import frames
from usarsim.sim import noise
from usarsim.sim.catalogue import DriveSpec
from usarsim.sim.drives import bicycle_steer, twist_to_wheel_speeds, wheel_speeds_to_twist

finite = st.floats(min_value=-100, max_value=100, allow_nan=False)


def test_relative_uniform_stays_within_bounds():
    rng = np.random.default_rng(0)
    values = np.full(10000, 4.0)
    out = noise.relative_uniform(values, 0.05, rng)
    assert out.min() >= 4.0 * 0.95 and out.max() <= 4.0 * 1.05
    assert abs(out.mean() - 4.0) < 0.01


def test_zero_noise_is_identity():
    rng = np.random.default_rng(0)
    assert noise.relative_uniform(2.5, 0.0, rng) == 2.5
    assert noise.gaussian(2.5, 0.0, 0.0, rng) == 2.5


def test_noise_switched_off_leaves_values_as_they_are():
    off = noise.NoNoise(np.random.default_rng(0))
    assert noise.relative_uniform(2.5, 0.05, off) == 2.5
    assert noise.relative_uniform(math.inf, 0.05, off) == math.inf
    assert noise.relative_uniform(np.array([1.0, 4.0]), 0.05, off).tolist() == [1.0, 4.0]


def test_output_curve_interpolates_and_zeroes_outside_domain():
    curve = noise.OutputCurve(((0.0, 0.0), (5.0, 10.0)))
    assert curve(2.5) == pytest.approx(5.0)
    assert curve(5.0) == pytest.approx(10.0)
    assert curve(6.0) == 0.0
    assert curve(-1.0) == 0.0
    with pytest.raises(ValueError):
        noise.OutputCurve(((0.0, 0.0),))


@pytest.mark.parametrize("points", [((0.0, 0.0), (5.0, 5.0)), ((0.0, 0.0), (1.0, 0.5), (3.0, 3.3), (20.0, 19.0)),
                                    ((0.1, 0.0), (0.8, 2.0))])
def test_output_curve_of_one_value_equals_the_array_form_exactly(points):
    curve = noise.OutputCurve(points)
    edges = [x for x, _ in points] + [points[-1][0] + 1e-10, points[0][0] - 1e-10, math.nan, math.inf, -math.inf]
    values = np.concatenate([np.random.default_rng(3).uniform(-1.0, 25.0, 5000), edges])
    by_array = curve(values)
    for x, expected in zip(values.tolist(), by_array.tolist()):
        got = curve(x)
        assert type(got) is float and (got == expected or (math.isnan(got) and math.isnan(expected))), x


def test_relative_noise_of_one_value_draws_what_the_array_form_draws():
    one, many = np.random.default_rng(5), np.random.default_rng(5)
    values = np.random.default_rng(9).uniform(0.0, 20.0, 2000).tolist() + [0.0, 1.0, 2.5, 4.75]
    singles = [noise.relative_uniform(v, 0.05, one) for v in values]
    assert singles == [float(noise.relative_uniform(np.array(v), 0.05, many)) for v in values]  # bit for bit
    assert all(type(v) is float for v in singles)


def test_gps_sigma_matches_manual_bounds():
    assert noise.gps_sigma(4, 10.0, 1.5) == pytest.approx(10.0 / 3)
    assert noise.gps_sigma(12, 10.0, 1.5) == pytest.approx(1.5 / 3)
    assert noise.gps_sigma(8, 10.0, 1.5) == pytest.approx((10.0 + 1.5) / 6)


def test_sensor_streams_are_independent_and_reproducible():
    a1 = noise.sensor_rng(7, "r1", "Scanner").random(5)
    a2 = noise.sensor_rng(7, "r1", "Scanner").random(5)
    b = noise.sensor_rng(7, "r1", "Sonar").random(5)
    assert np.array_equal(a1, a2)
    assert not np.array_equal(a1, b)


def test_quantize_truncates_toward_zero():
    assert noise.quantize(0.0349, 0.01745) == 2
    assert noise.quantize(-0.0349, 0.01745) == -2


@given(finite, finite, finite)
def test_flip_is_an_involution(x, y, z):
    assert frames.flip_vector(frames.flip_vector((x, y, z))) == (x, y, z)
    assert frames.flip_euler(frames.flip_euler((x, y, z))) == (x, y, z)


@given(st.floats(-3.1, 3.1), st.floats(-1.5, 1.5), st.floats(-3.1, 3.1))
def test_flipped_quaternion_is_flipped_euler(r, p, y):
    q = rotations.quaternion_from_euler((r, p, y))
    back = rotations.euler_from_quaternion(frames.flip_quaternion(q))
    expected = frames.flip_euler((r, p, y))
    m1 = rotations.rotation_matrix(rotations.quaternion_from_euler(back))
    m2 = rotations.rotation_matrix(rotations.quaternion_from_euler(expected))
    assert np.allclose(m1, m2, atol=1e-9)


angles = st.floats(-4.0, 4.0)


@given(angles, angles, angles)
def test_euler_quaternion_matrix_match_transforms3d(r, p, y):
    w, x, qy, z = transforms3d.euler.euler2quat(r, p, y, "sxyz")
    q = rotations.quaternion_from_euler((r, p, y))
    assert np.allclose(q, (x, qy, z, w), atol=1e-12)
    assert np.allclose(rotations.rotation_matrix(q), transforms3d.quaternions.quat2mat((w, x, qy, z)), atol=1e-12)
    expected = transforms3d.euler.quat2euler((w, x, qy, z), "sxyz")
    assert np.allclose(rotations.euler_from_quaternion(q), expected, atol=1e-9)


@pytest.mark.parametrize("q", [(0.0, math.sqrt(0.5), 0.0, math.sqrt(0.5)),  # pitch +90 deg: gimbal lock
                               (0.0, -math.sqrt(0.5), 0.0, math.sqrt(0.5)),
                               (0.0, 0.0, 0.0, 0.0),  # degenerate: identity, as transforms3d
                               (0.0, 0.0, 2.0, 0.0)])  # not normalised
def test_euler_from_quaternion_edge_cases_match_transforms3d(q):
    expected = transforms3d.euler.quat2euler((q[3], q[0], q[1], q[2]), "sxyz")
    assert np.allclose(rotations.euler_from_quaternion(q), expected, atol=1e-9)


@given(st.floats(-50, 50))
def test_wrap_ranges(angle):
    w = rotations.wrap_pi(angle)
    assert -math.pi < w <= math.pi
    assert math.isclose(math.cos(w), math.cos(angle), abs_tol=1e-9)
    w2 = frames.wrap_2pi(angle)
    assert 0.0 <= w2 < 2 * math.pi


def test_unreal_units():
    assert frames.metres_from_uu(250) == 1.0
    assert frames.radians_from_uu(32768) == pytest.approx(math.pi)


SPEC = DriveSpec(type="skid", wheel_radius=0.1, wheel_separation=0.4, max_wheel_speed=5.0)


def test_twist_round_trip_and_turn_direction():
    left, right = twist_to_wheel_speeds(0.2, 0.5, SPEC)
    assert right > left  # turning left (+z) spins the right side faster
    v, w = wheel_speeds_to_twist(left, right, SPEC)
    assert v == pytest.approx(0.2) and w == pytest.approx(0.5)


def test_twist_is_scaled_to_the_wheel_limit_keeping_the_ratio():
    left, right = twist_to_wheel_speeds(2.0, 1.0, SPEC)
    assert max(abs(left), abs(right)) == pytest.approx(5.0)
    v, w = wheel_speeds_to_twist(left, right, SPEC)
    assert w / v == pytest.approx(0.5)


def test_bicycle_steer_sign_and_clamp():
    assert bicycle_steer(1.0, 0.2, 2.0, 0.5) > 0
    assert bicycle_steer(1.0, 5.0, 2.0, 0.5) == pytest.approx(0.5)
    assert bicycle_steer(0.0, 1.0, 2.0, 0.5) == 0.0


def test_rotation_helpers_agree_with_the_matrix_forms():
    import numpy as np

    q = rotations.quaternion_from_euler((0.3, -0.2, 1.1))
    v = (0.5, -1.0, 2.0)
    assert rotations.rotate_inverse(q, v) == pytest.approx(tuple(rotations.rotation_matrix(q).T @ np.array(v)))
    assert rotations.yaw_quaternion(0.7) == pytest.approx(rotations.quaternion_from_euler((0.0, 0.0, 0.7)))
    qa, qb = rotations.quaternion_from_euler((0.1, 0.0, 0.0)), rotations.axis_angle_quaternion((0.0, 0.0, 1.0), 0.4)
    product = rotations.rotation_matrix(rotations.quaternion_multiply(qa, qb))
    assert product == pytest.approx(rotations.rotation_matrix(qa) @ rotations.rotation_matrix(qb))
    pose = rotations.pose_matrix((1.0, 2.0, 3.0), q)
    assert pose[:3, 3] == pytest.approx([1.0, 2.0, 3.0]) and pose[:3, :3] == pytest.approx(rotations.rotation_matrix(q))
