"""The PettingZoo AEC environment passes PettingZoo's own API and seed tests."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from cirulla.env import aec_env


@pytest.mark.parametrize(
    ("players", "preset", "rules"),
    [
        (2, "standard", {}),
        (3, "standard", {}),
        (4, "standard", {}),
        (2, "fantacarte", {}),
        (2, "standard", {"must_capture": False, "target": 21}),
    ],
)
def test_api_test_passes(players: int, preset: str, rules: dict[str, object]) -> None:
    api_test(aec_env(players, preset, **rules), num_cycles=1000)


def test_seed_test_passes() -> None:
    seed_test(lambda render_mode=None: aec_env(2), num_cycles=300)


def test_teams_share_the_final_reward_in_four_players() -> None:
    env = aec_env(4, seed=7)
    env.reset(seed=7)
    rng = np.random.default_rng(0)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter(10_000):
        obs, reward, term, trunc, _ = env.last()
        totals[agent] += reward
        mask = obs["action_mask"]
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(mask))))
    assert totals["player_0"] == totals["player_2"] == -totals["player_1"] == -totals["player_3"]
    assert abs(totals["player_0"]) == 1.0


def test_only_the_agent_to_move_has_a_mask() -> None:
    env = aec_env(3)
    env.reset(seed=1)
    mover = env.agent_selection
    for agent in env.possible_agents:
        assert env.observe(agent)["action_mask"].any() == (agent == mover)
