"""The exact last round (``cirulla.bots.endgame``): once a 2-player deal's stock is empty
the seat's view knows every card, and the move of best minimax value is played. The
native solver and the Python reference agree, the move is optimal against a plain
minimax with no pruning (and, among equally good moves, the best against the playout
policy), and ``learned`` plays it (``endgame=exact``, its default)."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from cirulla.bots.endgame import best_exact, solvable
from cirulla.bots.heuristic import best_index
from cirulla.bots.learned import LearnedPolicy
from cirulla.bots.mcts import rewards_of, solve_rest
from cirulla.bots.specs import make_policy
from cirulla.rules.game import Game
from cirulla.rules.options import Options
from cirulla.rules.views import View, sample_world


def last_rounds(
    games: int, players: int = 2, preset: str = "standard"
) -> Iterator[tuple[Game, View, list[int]]]:
    """Every decision with a choice once the stock is empty, in greedy's games."""
    for seed in range(games):
        game = Game(Options.preset(preset, players=players), seed=seed)
        while (seat := game.to_move) is not None:
            view = game.view(seat)
            codes = game.legal_codes()
            if view.stock == 0 and len(codes) > 1:
                yield game, view, codes
            game.apply_code(codes[best_index(view, codes)])


def plain_minimax(game: Game, side: int) -> float:
    """Both sides at their best, every move tried: the reference without pruning."""
    if game.deal_over:
        return rewards_of(game)[side]
    values = []
    for code in game.legal_codes():
        after = game.copy()
        after.apply_code(code)
        values.append(plain_minimax(after, side))
    return max(values) if game.options.side_of(game.turn) == side else min(values)


@pytest.mark.parametrize("preset", ["standard", "genova-home", "fantacarte"])
def test_the_view_of_a_last_round_allows_one_world_the_true_one(preset: str) -> None:
    """What the solver relies on: no hidden card is guessed, none is needed."""
    checked = 0
    for game, view, _ in last_rounds(6, preset=preset):
        assert solvable(view)
        world = sample_world(view, random.Random(checked), deal_only=True)
        assert world.hands == game.hands and world.table == game.table
        checked += 1
    assert checked > 50


@pytest.mark.parametrize("preset", ["standard", "genova-home", "fantacarte"])
def test_native_and_python_solvers_choose_the_same_move(preset: str) -> None:
    checked = 0
    for _, view, codes in last_rounds(15, preset=preset):
        assert best_exact(view, codes, "native") == best_exact(view, codes, "python")
        checked += 1
    assert checked > 150


def test_its_move_has_the_best_minimax_value_and_of_those_the_best_against_the_model() -> None:
    """Optimal against best play; among equally good moves, the one worth most against the
    playout policy (a player who errs like greedy), then the earliest."""
    checked = tied = 0
    for _, view, codes in last_rounds(5):
        assert view.seat is not None
        world = sample_world(view, random.Random(0), deal_only=True)
        side = view.options.side_of(view.seat)
        values, against_model = [], []
        for code in codes:
            after = world.copy()
            after.apply_code(code)
            values.append(plain_minimax(after, side))
            against_model.append(rewards_of(solve_rest(after, side, False, False))[side])
        best = [i for i, v in enumerate(values) if v == max(values)]
        chosen = best_exact(view, codes)
        assert values[chosen] == max(values)
        top = max(against_model[i] for i in best)
        assert chosen == min(i for i in best if against_model[i] == top)
        checked += 1
        tied += len(best) > 1
    assert checked > 40 and tied > 10


def test_only_a_two_player_deal_with_no_stock_is_solved() -> None:
    assert not solvable(Game(Options(), seed=1).view(0))  # the stock still hides cards
    for _, view, _ in last_rounds(1, players=4):
        assert not solvable(view)  # the other hands share the unseen cards
    spectator = Game(Options(), seed=1).view(None)
    assert not solvable(spectator)


def test_learned_plays_the_exact_move_in_the_last_round_and_the_network_before() -> None:
    greedy = make_policy("greedy")
    solved = differed = before = 0
    for seed in range(8):
        game = Game(Options(), seed=seed)
        exact, network = LearnedPolicy(), LearnedPolicy(endgame="network")
        while (seat := game.to_move) is not None:
            legal = game.legal_actions()
            view = game.view(seat)
            if seat == 1:
                game.apply(legal[greedy.choose(view, legal, None)], seat)
                continue
            mine, theirs = exact.choose(view, legal, None), network.choose(view, legal, None)
            if len(legal) > 1 and solvable(view):
                assert mine == best_exact(view, [a.to_int() for a in legal])
                solved += 1
                differed += mine != theirs
            elif len(legal) > 1:
                assert mine == theirs
                before += 1
            game.apply(legal[mine], seat)
    assert solved > 30 and before > 200 and differed > 0


def test_the_option_is_checked_like_the_others() -> None:
    assert make_policy("learned", {"endgame": "network"}).endgame == "network"  # type: ignore[attr-defined]
    assert make_policy("learned").endgame == "exact"  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="learned endgame must be one of network, exact"):
        make_policy("learned", {"endgame": "perfect"})


def test_mcts_can_play_the_last_round_exactly_too() -> None:
    """An option of the search (not its default: against greedy its own last round, played
    against its model of the opponent, measured better)."""
    bot = make_policy("mcts", {"endgame": "exact", "iterations": 30}, seed=2)
    searched = make_policy("mcts", {"iterations": 30}, seed=2)
    assert bot.endgame == "exact" and searched.endgame == "search"  # type: ignore[attr-defined]
    solved = 0
    for game, view, codes in last_rounds(3):
        if view.seat != 0:
            continue
        legal = game.legal_actions()
        assert bot.choose(view, legal, None) == best_exact(view, codes)
        solved += 1
    assert solved > 10
    with pytest.raises(ValueError, match="mcts endgame must be one of search, exact"):
        make_policy("mcts", {"endgame": "perfect"})
