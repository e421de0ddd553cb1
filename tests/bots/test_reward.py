"""The ``mcts`` option ``reward=win``: a deal that does not end the game is worth, for
WIN_WEIGHT of its reward, the chance of winning the game from the totals after it.

In the last round of a two-player deal the stock is empty and every sampled world is
the same; with deterministic playouts (``epsilon=0``) and no tree below the root
(``depth=1``) every visit of a root action then ends in the same deal, so each loop's
mean reward per root action must equal ``rewards_of`` on that deal, computed here.
"""

from __future__ import annotations

import math
import random

import pytest

from cirulla.bots.heuristic import playout_code
from cirulla.bots.mcts import SearchConfig, search
from cirulla.bots.rewards import rewards_of, win_chance
from cirulla.rules import Game
from tests.bots.test_opponent import EXACT_ROOT, EXACT_SEED, last_round
from tests.rules_helpers import deal_positions


def test_win_chance_is_a_chance_that_follows_the_totals() -> None:
    assert win_chance([20, 20], 51, 0) == pytest.approx(0.5)
    for totals in ([0, 30], [44, 12], [50, 49], [60, 40]):
        a, b = win_chance(totals, 51, 0), win_chance(totals, 51, 1)
        assert a + b == pytest.approx(1.0)
        assert (a > 0.5) == (totals[0] > totals[1])
    # The same lead is worth more near the target than far from it.
    assert win_chance([45, 35], 51, 0) > win_chance([10, 0], 51, 0) > 0.5
    # Two sides past the target and tied (no winner yet): an even chance.
    assert win_chance([53, 53], 51, 1) == pytest.approx(0.5)
    # Three sides: against the side that needs fewest points.
    assert win_chance([40, 45, 0], 51, 0) < 0.5 < win_chance([40, 45, 0], 51, 1)


def played_out(game: Game, code: int) -> Game:
    after = game.copy()
    after.apply_code(code)
    while not after.deal_over:
        after.apply_code(playout_code(after, random.Random(0), 0.0, False))
    return after


@pytest.mark.parametrize("core", ["native", "python"])
@pytest.mark.parametrize("seed", [3, 75, 224])
def test_both_loops_reward_the_win_chance_of_the_deal(core: str, seed: int) -> None:
    game = last_round(seed)
    me = game.turn
    game.totals = [22, 28] if me == 0 else [28, 22]  # the searcher is behind, none wins
    view = game.view(me)
    changed = 0
    for reward, chance in (("points", False), ("win", True)):
        result = search(view, EXACT_SEED, SearchConfig(core=core, reward=reward, **EXACT_ROOT))
        for code, n in result.visits.items():
            after = played_out(game, code)
            assert after.winner is None
            expected = rewards_of(after, chance)[me]
            assert result.totals[code] / n == pytest.approx(expected, abs=1e-9), (reward, code)
            if chance:
                changed += not math.isclose(expected, rewards_of(after)[me])
    assert changed  # the win chance is what these rewards measured, not the points


def test_the_search_refuses_an_unknown_reward() -> None:
    game = deal_positions(2, 1)[0]
    with pytest.raises(ValueError, match="reward must be one of"):
        search(game.view(game.turn), 1, SearchConfig(iterations=5, reward="chance"))
