"""How the other side moves inside the search tree (``mcts`` option ``opponent``).

In the last round of a two-player deal the stock is empty, so the bot knows the other
hand exactly and every sampled world is the same: the search is then exact enough to be
checked against a brute-force solve of the same game, with the other side playing either
to minimise the bot's reward (``tree``) or by the playout policy (``playout``, ``blind``).
"""

from __future__ import annotations

import random

import pytest

from cirulla.bots.heuristic import playout_code
from cirulla.bots.mcts import SearchConfig, search
from cirulla.bots.rewards import rewards_of
from cirulla.rules import Game, Options
from tests.rules_helpers import deal_positions

#: A root-only search with nothing random but the sampled worlds: each root action's
#: mean is then a plain average of playouts that a test can compute by hand.
#: The seed and the search options of the tests that read a root action's exact reward.
EXACT_SEED = 2
EXACT_ROOT = {
    "iterations": 60,
    "epsilon": 0.0,
    "prior": 0.0,
    "infer": 0.0,
    "depth": 1,
}


def last_round(seed: int) -> Game:
    """A random deal-only game played at random until the stock is empty and the two
    hands hold five or six cards between them."""
    rng = random.Random(seed)
    game = Game(Options(), seed=seed, deal_only=True)
    while not game.deal_over and (game.stock or game.in_hands < 5):
        game.apply_code(rng.choice(game.legal_codes()))
    assert not game.deal_over and not game.stock
    return game


def solved(game: Game, me: int, opponent: str) -> float:
    """The bot's reward under best play by the bot, the other side minimising it
    (``tree``) or playing the playout policy without random moves."""
    if game.deal_over:
        return rewards_of(game)[me]
    if game.turn != me and opponent != "tree":
        after = game.copy()
        after.apply_code(playout_code(after, random.Random(0), 0.0, opponent == "blind"))
        return solved(after, me, opponent)
    values = []
    for code in game.legal_codes():
        after = game.copy()
        after.apply_code(code)
        values.append(solved(after, me, opponent))
    return max(values) if game.turn == me else min(values)


def best_by_solve(game: Game, opponent: str) -> int:
    """The root action of highest solved value; it must win by 2 points of the deal."""
    codes = game.legal_codes()
    values = []
    for code in codes:
        after = game.copy()
        after.apply_code(code)
        values.append(solved(after, game.turn, opponent))
    ranked = sorted(range(len(codes)), key=lambda i: -values[i])
    assert values[ranked[0]] - values[ranked[1]] >= 0.049  # 2 points of 40: no near tie
    return codes[ranked[0]]


# Last rounds (found by brute force) where the minimax reply and the greedy-like reply
# call for different moves.
POSITIONS = (75, 224)


@pytest.mark.parametrize("seed", POSITIONS)
@pytest.mark.parametrize("core", ["native", "python"])
def test_each_opponent_model_finds_the_solved_best_move(core: str, seed: int) -> None:
    game = last_round(seed)
    view = game.view(game.turn)
    codes = game.legal_codes()
    picks = {}
    for opponent in ("tree", "playout", "blind"):
        result = search(
            view,
            1,
            SearchConfig(
                iterations=1500, core=core, epsilon=0.0, prior=0.0, infer=0.0, opponent=opponent
            ),
        )
        picks[opponent] = codes[result.best(codes)]
        assert picks[opponent] == best_by_solve(game, opponent), opponent
    assert picks["tree"] != picks["playout"]  # the option changes what the bot plays


@pytest.mark.parametrize("opponent", ["playout", "blind"])
@pytest.mark.parametrize("players", [2, 3, 4])
def test_a_playout_opponent_search_counts_its_budget(players: int, opponent: str) -> None:
    for game in deal_positions(players, 8)[::5]:
        view = game.view(game.turn)
        for core, budget in (("native", 400), ("python", 40)):
            result = search(view, 4, SearchConfig(iterations=budget, core=core, opponent=opponent))
            again = search(view, 4, SearchConfig(iterations=budget, core=core, opponent=opponent))
            assert result.iterations == budget == sum(result.visits.values())
            assert set(result.visits) <= set(game.reference_legal_codes())
            assert result.visits == again.visits


def test_the_search_refuses_an_unknown_opponent() -> None:
    game = deal_positions(2, 1)[0]
    with pytest.raises(ValueError, match="opponent must be one of"):
        search(game.view(game.turn), 1, SearchConfig(iterations=5, opponent="minimax"))
