"""The Gymnasium environment passes Gymnasium's check_env and plays to a scored end."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import cirulla.env  # noqa: F401  (registers Cirulla-v0)


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"players": 4, "seat": 1, "opponents": "greedy"},
        {"players": 3, "opponents": ["random", "greedy"], "target": 21},
    ],
)
def test_check_env_passes(kwargs: dict[str, object]) -> None:
    check_env(gymnasium.make("Cirulla-v0", **kwargs).unwrapped, skip_render_check=True)


def test_an_episode_ends_with_the_seats_result() -> None:
    env = gymnasium.make("Cirulla-v0", opponents=lambda obs, mask: int(np.flatnonzero(mask)[0]))
    obs, _ = env.reset(seed=5)
    done, reward, info = False, 0.0, {}
    while not done:
        obs, reward, done, _, info = env.step(int(np.flatnonzero(obs["action_mask"])[-1]))
    assert reward == (1.0 if info["winner"] == 0 else -1.0)


def test_an_illegal_action_loses_or_raises() -> None:
    env = gymnasium.make("Cirulla-v0")
    obs, _ = env.reset(seed=2)
    bad = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    _, reward, done, _, info = env.step(bad)
    assert (reward, done, info["illegal"]) == (-1.0, True, True)
    strict = gymnasium.make("Cirulla-v0", illegal="raise")
    strict.reset(seed=2)
    with pytest.raises(ValueError, match="not legal"):
        strict.step(bad)


def test_bad_options_name_the_field() -> None:
    with pytest.raises(ValueError, match="seat 5"):
        gymnasium.make("Cirulla-v0", seat=5)
