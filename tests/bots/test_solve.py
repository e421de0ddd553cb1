"""The ``mcts`` option ``solve=1``: in two players, once the stock is empty every card is
known in a sampled world, and the playout ends the deal by an exact search
(``solve_rest``: the searcher's best moves against the playout policy) instead of the
heuristic. In a last round every world is the same; with no tree below the root
(``depth=1``) each root action then always ends in the same solved deal, so each loop's
mean reward per root action must equal the solved value computed here.
"""

from __future__ import annotations

import random

import pytest

from cirulla.bots.heuristic import playout_code
from cirulla.bots.mcts import SearchConfig, search
from cirulla.bots.rewards import rewards_of, solve_rest
from cirulla.rules import Game
from tests.bots.test_opponent import EXACT_ROOT, EXACT_SEED, last_round


def heuristic_end(game: Game) -> Game:
    after = game.copy()
    while not after.deal_over:
        after.apply_code(playout_code(after, random.Random(0), 0.0, False))
    return after


@pytest.mark.parametrize("core", ["native", "python"])
@pytest.mark.parametrize("seed", [3, 7, 75, 224])
def test_both_loops_end_the_last_round_by_the_exact_search(core: str, seed: int) -> None:
    game = last_round(seed)
    me = game.turn
    view = game.view(me)
    result = search(view, EXACT_SEED, SearchConfig(core=core, solve=1, **EXACT_ROOT))
    better = 0
    for code, n in result.visits.items():
        after = game.copy()
        after.apply_code(code)
        solved = rewards_of(solve_rest(after, me, False, False))[me]
        assert result.totals[code] / n == pytest.approx(solved, abs=1e-9), code
        guessed = rewards_of(heuristic_end(after))[me]
        assert solved >= guessed - 1e-12  # the searcher's best is at least the heuristic's
        better += solved > guessed + 1e-12
    if seed == 7:
        assert better  # here the exact search finds more than the heuristic
