"""Gymnasium environments of usarsim; importing this module registers them.

``gymnasium.make("usarsim/Arena-v0")`` after ``import usarsim.gym``, or in one go (also in
subprocess vector envs): ``gymnasium.make("usarsim.gym:usarsim/Arena-v0")``. See docs/scale.md.
"""
from __future__ import annotations

from gymnasium.envs.registration import register, registry

from usarsim.gym.env import UsarsimEnv

ENTRY_POINT = "usarsim.gym.env:UsarsimEnv"
# id -> keyword arguments of UsarsimEnv; every one can be overridden in gymnasium.make(id, **kwargs)
ENVIRONMENTS: dict[str, dict[str, object]] = {
    "usarsim/Arena-v0": {"world": "yellow", "task": "victim"},
    "usarsim/ArenaCoverage-v0": {"world": "yellow", "task": "coverage"},
    "usarsim/Orange-v0": {"world": "orange", "task": "victim"},
    "usarsim/Red-v0": {"world": "red", "task": "victim"},
}
MAX_EPISODE_STEPS = 600  # 60 s of sim time at the default control period

for _env_id, _kwargs in ENVIRONMENTS.items():
    if _env_id not in registry:
        register(id=_env_id, entry_point=ENTRY_POINT, kwargs=_kwargs, max_episode_steps=MAX_EPISODE_STEPS)

__all__ = ["UsarsimEnv", "ENVIRONMENTS"]
