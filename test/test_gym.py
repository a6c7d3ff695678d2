"""The Gymnasium environments: the env checker, reproducible resets, rewards, subprocess vector envs."""
from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import usarsim.gym  # noqa: F401 - registers the ids
from usarsim.config_loading import ConfigError


def _rollout(env: gym.Env, seed: int, actions: np.ndarray) -> tuple[list, list]:
    obs, _ = env.reset(seed=seed)
    observations, rewards = [obs], []
    for action in actions:
        obs, reward, terminated, truncated, _ = env.step(action)
        observations.append(obs)
        rewards.append(reward)
        if terminated or truncated:
            break
    return observations, rewards


@pytest.mark.parametrize("kwargs", [{}, {"action": "twist", "task": "coverage"}])
def test_env_checker_passes(kwargs: dict) -> None:
    env = gym.make("usarsim/Arena-v0", **kwargs)
    try:
        check_env(env.unwrapped, skip_render_check=True)
    finally:
        env.close()


def test_spaces_come_from_the_robots_sensors() -> None:
    env = gym.make("usarsim/Arena-v0", robot="Kurt2D", camera=True)
    try:
        space = env.observation_space
        assert space["laser"].shape == (181,) and space["laser"].high.max() == pytest.approx(20.0)
        assert space["odometry"].shape == (5,)
        assert "ins" not in space.spaces  # a Kurt2D has no INS
        assert space["camera"].shape == (240, 320, 3) and space["camera"].dtype == np.uint8
        obs, _ = env.reset(seed=1)
        assert space.contains(obs) and obs["camera"].std() > 0  # a real image, not a blank one
    finally:
        env.close()


def test_reset_with_a_seed_reproduces_observations_and_rewards() -> None:
    env = gym.make("usarsim/Arena-v0")
    actions = np.array([[1.0, 1.0]] * 10 + [[-0.5, 0.5]] * 10, np.float32)
    try:
        first = _rollout(env, 7, actions)
        second = _rollout(env, 7, actions)
        other = _rollout(env, 8, actions)
    finally:
        env.close()
    for a, b in zip(first[0], second[0]):
        for key in a:
            np.testing.assert_array_equal(a[key], b[key])
    assert first[1] == second[1]
    # the seed sets the sensor noise (the P2AT's INS is noisy)
    assert not np.array_equal(first[0][-1]["ins"], other[0][-1]["ins"])


def test_victim_reward_pays_progress_toward_the_victim() -> None:
    env = gym.make("usarsim/Arena-v0")
    try:
        env.reset(seed=0)
        _, _, _, _, info = env.step(np.zeros(2, np.float32))
        still = info["distance_to_victim"]
        total = 0.0
        for _ in range(10):
            _, reward, _, _, info = env.step(np.array([1.0, 1.0], np.float32))
            total += reward
        # the nearest victim from yellow's Start1 is V2, behind the robot: driving ahead loses distance,
        # and the reward is the distance won (here negative), less the step costs
        assert info["distance_to_victim"] > still + 0.2
        assert total == pytest.approx(still - info["distance_to_victim"] - 10 * 0.01, abs=1e-9)
    finally:
        env.close()


def test_coverage_reward_is_newly_covered_area() -> None:
    env = gym.make("usarsim/ArenaCoverage-v0")
    try:
        _, info = env.reset(seed=0)
        start_area = info["area_covered"]
        total = sum(env.step(np.array([0.3, -0.3], np.float32))[1] for _ in range(20))
        _, _, _, _, info = env.step(np.zeros(2, np.float32))
        assert info["area_covered"] > start_area  # turning shows the laser new floor
        assert total + (info["area_covered"] - start_area) > 0
    finally:
        env.close()


def test_subprocess_vector_env_runs_one_env_per_process() -> None:
    envs = gym.make_vec("usarsim.gym:usarsim/Arena-v0", num_envs=2, vectorization_mode="async",
                        vector_kwargs={"context": "spawn"})
    try:
        obs, _ = envs.reset(seed=[3, 3])
        np.testing.assert_array_equal(obs["laser"][0], obs["laser"][1])
        for _ in range(5):
            obs, rewards, _, _, _ = envs.step(np.array([[1.0, 1.0], [0.0, 0.0]], np.float32))
        assert obs["odometry"][0][0] > 0.1 and abs(obs["odometry"][1][0]) < 0.02  # only the first one drove
        assert rewards.shape == (2,)
    finally:
        envs.close()


@pytest.mark.parametrize("kwargs, message", [
    ({"task": "dance"}, "task must be"), ({"action": "legs"}, "action must be"),
    ({"robot": "AirRobot"}, "not wheel-driven"), ({"world": "atlantis"}, "unknown world"),
])
def test_bad_arguments_are_refused_clearly(kwargs: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        gym.make("usarsim/Arena-v0", **kwargs)


def test_bad_actions_are_refused() -> None:
    env = gym.make("usarsim/Arena-v0")
    try:
        env.reset(seed=0)
        with pytest.raises(ValueError, match="finite"):
            env.step(np.array([np.nan, 0.0], np.float32))
    finally:
        env.close()
