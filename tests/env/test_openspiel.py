"""The OpenSpiel game passes pyspiel's random simulation test and OpenSpiel's ISMCTS plays it;
it is the previous Python implementation's game action for action; reward modes, the
sampled chance mode and the tabular algorithms' one-line refusal."""

from __future__ import annotations

import random

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import ismcts, mcts

import cirulla.env.openspiel  # registers python_cirulla
import cirulla.env.openspiel_baseline  # noqa: F401  (registers python_cirulla_baseline)


@pytest.mark.parametrize(
    "params",
    [{"target": 11}, {"players": 4, "target": 11}, {"players": 3, "target": 5, "must_capture": 0}],
)
@pytest.mark.parametrize("extra", [{}, {"chance": "sampled"}, {"reward": "points"}])
def test_random_sim_test_passes(params: dict[str, int], extra: dict[str, str]) -> None:
    game = pyspiel.load_game("python_cirulla", {**params, **extra})
    pyspiel.random_sim_test(game, num_sims=2, serialize=False, verbose=False)


@pytest.mark.parametrize(
    "params",
    [{"target": 21}, {"players": 4, "target": 11}, {"players": 3, "target": 11, "must_capture": 0}],
)
@pytest.mark.parametrize("seed", [0, 1])
def test_the_native_game_is_the_previous_python_game_action_for_action(
    params: dict[str, int], seed: int
) -> None:
    new = pyspiel.load_game("python_cirulla", params).new_initial_state()
    old = pyspiel.load_game("python_cirulla_baseline", params).new_initial_state()
    rng = random.Random(seed)
    players = len(new.returns())
    steps = 0
    while not old.is_terminal():
        assert new.current_player() == old.current_player()
        assert new.is_chance_node() == old.is_chance_node()
        if old.is_chance_node():
            outcomes = old.chance_outcomes()
            assert new.chance_outcomes() == outcomes
            action = outcomes[rng.randrange(len(outcomes))][0]
        else:
            legal = old.legal_actions()
            assert new.legal_actions() == legal
            for seat in range(players):
                assert new.observation_tensor(seat) == old.observation_tensor(seat)
                assert new.information_state_tensor(seat) == old.information_state_tensor(seat)
            seat = old.current_player()
            assert new.information_state_string(seat) == old.information_state_string(seat)
            action = legal[rng.randrange(len(legal))]
            assert new.action_to_string(seat, action) == old.action_to_string(seat, action)
        old.apply_action(action)
        new.apply_action(action)
        steps += 1
    assert new.is_terminal() and new.returns() == old.returns()
    assert new.history() == old.history() and steps >= 76  # one deal at least


def test_points_returns_are_the_deals_margins_and_sum_to_the_final_points() -> None:
    game = pyspiel.load_game("python_cirulla", {"target": 21, "reward": "points"})
    state = game.new_initial_state()
    rng = random.Random(3)
    rewarded = 0
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            state.apply_action(outcomes[rng.randrange(len(outcomes))][0])
        else:
            legal = state.legal_actions()
            state.apply_action(legal[rng.randrange(len(legal))])
        rewards = state.rewards()
        assert rewards[0] == -rewards[1]
        rewarded += rewards != [0.0, 0.0]
    totals = state._view(0).totals
    assert state.returns() == [totals[0] - totals[1], totals[1] - totals[0]] or any(
        abs(r) > 0 for r in state.returns()
    )
    assert rewarded >= state._view(0).deal - 1  # a deal can end even, 0 to 0


def test_sampled_chance_has_no_chance_nodes_and_resampling_hides_the_future() -> None:
    game = pyspiel.load_game("python_cirulla", {"chance": "sampled", "seed": 5})
    assert game.get_type().chance_mode == pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC
    first, second = game.new_initial_state(), game.new_initial_state()
    assert not first.is_chance_node()
    assert first.observation_tensor(0) != second.observation_tensor(0)  # different decks
    rng = random.Random(0)
    futures = set()
    for k in range(4):
        world = first.resample_from_infostate(0, random.Random(k).random)
        while world.observation_tensor(0)[423] == first.observation_tensor(0)[423]:  # deal no.
            world.apply_action(world.legal_actions()[0])
        futures.add(tuple(world.observation_tensor(0)[:80]))  # the next deal's hand, table
    assert len(futures) > 1
    while not first.is_terminal():
        assert not first.is_chance_node()
        legal = first.legal_actions()
        first.apply_action(legal[rng.randrange(len(legal))])
    assert sorted(first.returns()) == [-1.0, 1.0]


def test_tabular_algorithms_are_refused_in_one_line() -> None:
    from open_spiel.python.algorithms import cfr

    game = pyspiel.load_game("python_cirulla")
    with pytest.raises(ValueError, match="python_cirulla: OpenSpiel's tabular algorithms"):
        cfr.CFRSolver(game)


def test_a_deck_is_forty_chance_draws() -> None:
    state = pyspiel.load_game("python_cirulla").new_initial_state()
    for k in range(40):
        assert state.is_chance_node()
        outcomes = state.chance_outcomes()
        assert len(outcomes) == 40 - k
        state.apply_action(outcomes[0][0])
    assert not state.is_chance_node() or state.chance_outcomes()  # a redeal may follow


def test_ismcts_plays_a_game_and_resamples_consistently() -> None:
    game = pyspiel.load_game("python_cirulla", {"target": 5})
    evaluator = mcts.RandomRolloutEvaluator(1, np.random.RandomState(0))
    bot = ismcts.ISMCTSBot(
        game, evaluator, uct_c=2.0, max_simulations=10, random_state=np.random.RandomState(1)
    )
    rng = np.random.RandomState(2)
    state = game.new_initial_state()
    resampled = 0
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(int(rng.choice(outcomes, p=probs)))
            continue
        seat = state.current_player()
        world = state.resample_from_infostate(seat, rng.rand)
        assert world.information_state_string(seat) == state.information_state_string(seat)
        assert world.legal_actions() == state.legal_actions()
        resampled += 1
        state.apply_action(bot.step(state) if seat == 0 else int(rng.choice(state.legal_actions())))
    assert sorted(state.returns()) == [-1.0, 1.0]
    assert resampled > 0


def test_the_observation_tensor_is_the_encoding() -> None:
    from cirulla.rules.encoding import OBS_SIZE

    game = pyspiel.load_game("python_cirulla")
    assert game.observation_tensor_size() == OBS_SIZE
    assert game.information_state_tensor_size() == OBS_SIZE
