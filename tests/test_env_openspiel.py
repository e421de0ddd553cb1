"""The OpenSpiel game passes pyspiel's random simulation test and OpenSpiel's ISMCTS plays it."""

from __future__ import annotations

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import ismcts, mcts

import cirulla.env.openspiel  # noqa: F401  (registers python_cirulla)


@pytest.mark.parametrize(
    "params",
    [{"target": 11}, {"players": 4, "target": 11}, {"players": 3, "target": 5, "must_capture": 0}],
)
def test_random_sim_test_passes(params: dict[str, int]) -> None:
    game = pyspiel.load_game("python_cirulla", params)
    pyspiel.random_sim_test(game, num_sims=2, serialize=False, verbose=False)


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
    from cirulla.env.encoding import OBS_SIZE

    game = pyspiel.load_game("python_cirulla")
    assert game.observation_tensor_size() == OBS_SIZE
    assert game.information_state_tensor_size() == OBS_SIZE
