"""The standard libraries' conventions: render modes as Gymnasium and Stable-Baselines3 call
them, reward modes with each deal's score in ``info`` on every API, and PettingZoo's
``cirulla_v0`` module form."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from pettingzoo.test import api_test

import cirulla.env  # noqa: F401  (registers Cirulla-v0)
from cirulla.env import cirulla_v0
from cirulla.env.aec import CirullaAEC, aec_env
from cirulla.env.rewards import deal_rewards
from cirulla.env.vector import Env, VectorEnv, make_options
from cirulla.rules.cards import format_cards

CORES = ["native", "python"]


def first_legal(obs: dict[str, np.ndarray]) -> int:
    return int(np.flatnonzero(obs["action_mask"])[0])


@pytest.mark.parametrize("core", CORES)
def test_sb3s_render_mode_is_accepted_and_draws_an_image(core: str) -> None:
    """What SB3's make_vec_env does with its defaults: make(id, render_mode="rgb_array")."""
    env = gymnasium.make("Cirulla-v0", render_mode="rgb_array", core=core)
    assert "rgb_array" in env.metadata["render_modes"] and env.metadata["render_fps"] > 0
    env.reset(seed=3)
    image = env.render()
    assert isinstance(image, np.ndarray) and image.dtype == np.uint8
    assert image.ndim == 3 and image.shape[2] == 3 and image.shape[0] > 50
    assert len({tuple(p) for p in image.reshape(-1, 3)}) > 3  # hand, table, unseen, pips


@pytest.mark.parametrize("core", CORES)
def test_ansi_shows_the_seats_own_hand_on_every_core(core: str) -> None:
    env = gymnasium.make("Cirulla-v0", render_mode="ansi", core=core, seat=1)
    env.reset(seed=4)
    text = env.render()
    game_env = env.unwrapped.game_env
    hand = game_env.view(1).hand
    assert isinstance(text, str) and text.startswith("seat 1,")
    assert f"hand:  {format_cards(hand)}" in text
    other = game_env.view(0).hand
    assert format_cards(other) not in text  # the other seat's hand stays hidden


def test_a_render_mode_outside_the_conventions_is_one_line() -> None:
    with pytest.raises(ValueError, match="render_mode 'text'"):
        gymnasium.make("Cirulla-v0", render_mode="text")
    with pytest.raises(ValueError, match="reward 'win'"):
        gymnasium.make("Cirulla-v0", reward="win")


@pytest.mark.parametrize("core", CORES)
@pytest.mark.parametrize("players", [2, 3, 4])
def test_points_rewards_sum_to_the_final_margin_and_info_has_each_deal(
    core: str, players: int
) -> None:
    env = gymnasium.make(
        "Cirulla-v0", players=players, reward="points", core=core, target=21, seat=0
    )
    obs, _ = env.reset(seed=7)
    total, deals, done, info = 0.0, [], False, {}
    while not done:
        obs, reward, done, _, info = env.step(first_legal(obs))
        total += reward
        if "deal" in info:
            deals.append(info["deal"])
            items = info["deal"]["items"]
            assert [side["total"] for side in items] == info["deal"]["points"]
            assert reward == pytest.approx(
                info["deal"]["points"][0] - sum(info["deal"]["points"][1:]) / (len(items) - 1)
            )
        else:
            assert reward == 0.0
    view = env.unwrapped.game_env.view(0)
    assert [d["deal"] for d in deals] == list(range(1, view.deal + 1))
    sides = len(view.totals)
    mine = view.totals[0]
    others = sum(view.totals[1:]) / (sides - 1)
    if view.winner is not None and all(d["cappotto"] == -1 for d in deals):
        assert total == pytest.approx(mine - others)


@pytest.mark.parametrize("core", CORES)
def test_deal_rewards_are_the_sign_of_the_deals_margin(core: str) -> None:
    env = Env(make_options(2, target=21), seed=3, core=core, reward="deal")
    while env.to_move is not None:
        env.step(int(np.flatnonzero(env.mask())[-1]))
        rewards = env.step_rewards()
        if env.deal_ended:
            score = env.deal_score()
            assert score is not None
            margin = score.sides[0].total - score.sides[1].total
            assert rewards == [float(np.sign(margin)), float(-np.sign(margin))]
        else:
            assert rewards == [0.0, 0.0]


@pytest.mark.parametrize("mode", ["game", "deal", "points"])
def test_vector_env_rewards_match_the_single_game_on_both_cores(mode: str) -> None:
    options = make_options(2, target=11)
    steps = 600
    got = []
    for core in CORES:
        venv = VectorEnv(3, options, seeds=[1, 2, 3], core=core, reward=mode)
        rewards = []
        for _ in range(steps):
            _, _, r, _, _ = venv.step(venv.random_actions())
            rewards.append(r.copy())
        got.append(np.array(rewards))
    assert np.array_equal(got[0], got[1])
    assert np.count_nonzero(got[0]) > 0
    if mode != "game":  # a deal ends every ~36 steps: many rewarded steps, zero-sum
        assert np.count_nonzero(got[0].any(axis=2)) > 3 * steps // 60
        assert np.allclose(got[0].sum(axis=2), 0.0)


def test_pettingzoo_rewards_and_infos_per_deal() -> None:
    env = aec_env(players=4, reward="points", target=11, seed=2)
    env.reset(seed=2)
    seen_deals = 0
    cumulative = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        cumulative[agent] += reward
        if "deal" in info:
            seen_deals += 1
        env.step(None if term or trunc else first_legal(obs))
    assert seen_deals > 0
    # partners score alike, the two sides opposite
    assert cumulative["player_0"] == cumulative["player_2"] == -cumulative["player_1"]


def test_deal_rewards_helper_is_zero_sum_with_three_players() -> None:
    from cirulla.rules.scoring import DealScore, SideScore

    nothing = SideScore(0, 0, 0, 0, 0, 0, 0)
    score = DealScore(
        (SideScore(1, 0, 0, 1, 0, 0, 0), SideScore(0, 1, 1, 0, 2, 0, 0), nothing), None
    )
    rewards = deal_rewards(make_options(3), score, "points")
    assert rewards == [0.0, 3.0, -3.0]
    assert deal_rewards(make_options(3), score, "deal") == [0.0, 1.0, -1.0]


def test_cirulla_v0_is_pettingzoo_classics_form() -> None:
    env = cirulla_v0.env(players=2, render_mode="ansi")
    api_test(env, num_cycles=100)
    raw = cirulla_v0.raw_env(players=3)
    assert isinstance(raw, CirullaAEC)
    assert raw.metadata["name"] == "cirulla_v0" and len(raw.possible_agents) == 3
    wrapped = cirulla_v0.env()
    wrapped.reset(seed=1)
    obs, *_ = wrapped.last()
    bad = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    wrapped.step(bad)  # an illegal move ends the game, PettingZoo's classic way
    assert wrapped.rewards[wrapped.possible_agents[0]] == -1
    assert all(wrapped.terminations.values())


def test_infos_gather_in_gymnasiums_vector_env() -> None:
    """SyncVectorEnv gathers every info value into an array: no None may reach it."""
    envs = gymnasium.vector.SyncVectorEnv(
        [lambda: gymnasium.make("Cirulla-v0", reward="points") for _ in range(2)]
    )
    obs, _ = envs.reset(seed=1)
    dealt = 0
    for _ in range(200):
        masks = obs["action_mask"]
        actions = np.array([int(np.flatnonzero(m)[0]) if m.any() else 0 for m in masks])
        obs, _, _, _, infos = envs.step(actions)
        dealt += int(np.sum(infos.get("_deal", [False])))
    assert dealt > 0
