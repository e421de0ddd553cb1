"""The end of a 2-player deal (``cirulla.bots.endgame``). Once the stock is empty the seat's
view knows every card, and the move of best minimax value is played: the native solver
and the Python reference agree, the move is optimal against a plain minimax with no
pruning (and, among equally good moves, the best against the playout policy). In the
round before, minimax values are averaged over sampled deals within a node budget: the
native solver and the reference give the same values and count the same nodes on the
same deal, the values depend on the view alone, and ``learned`` plays both
(``endgame=sampled``, its default)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from cirulla.bots.compiled import require_search, search_native
from cirulla.bots.endgame import (
    best_exact,
    penultimate,
    sampled_values,
    solvable,
    solve_worlds,
)
from cirulla.bots.heuristic import best_index
from cirulla.bots.learned import LearnedPolicy, action_values
from cirulla.bots.rewards import POINT_SCALE, WIN_WEIGHT, rewards_of, solve_rest
from cirulla.bots.seeding import decision_seed
from cirulla.bots.specs import make_policy
from cirulla.rules.core import options_tuple, view_tuple
from cirulla.rules.game import Game
from cirulla.rules.options import Options
from cirulla.rules.views import View, sample_world, world_of


def last_rounds(
    games: int, players: int = 2, preset: str = "standard", stock: int = 0
) -> Iterator[tuple[Game, View, list[int]]]:
    """Every decision with a choice once the stock holds ``stock`` cards (0: the last
    round; 6: the round before it, with 2 players), in greedy's games."""
    for seed in range(games):
        game = Game(Options.preset(preset, players=players), seed=seed)
        while (seat := game.to_move) is not None:
            view = game.view(seat)
            codes = game.legal_codes()
            if view.stock == stock and len(codes) > 1:
                yield game, view, codes
            game.apply_code(codes[best_index(view, codes)])


def native_world(view: View, seed: int) -> Game:
    """The first deal the native solver samples from ``view`` with ``seed``, as a Game."""
    require_search()
    hands, stock = search_native.sample_world(options_tuple(view.options), view_tuple(view), seed)
    return world_of(view, hands, stock, seed=0)


def native_sampled(view: View, codes: list[int], seed: int, worlds: int, nodes: int) -> Any:
    """``(values, worlds done, nodes)`` of the native solver."""
    require_search()
    return search_native.sampled_exact(
        options_tuple(view.options),
        view_tuple(view),
        codes,
        seed,
        worlds,
        POINT_SCALE,
        WIN_WEIGHT,
        nodes,
    )


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


def test_the_options_are_checked_like_the_others() -> None:
    assert make_policy("learned", {"endgame": "network"}).endgame == "network"  # type: ignore[attr-defined]
    assert make_policy("learned").endgame == "sampled"  # type: ignore[attr-defined]
    assert make_policy("learned", {"nodes": 500}).nodes == 500  # type: ignore[attr-defined]
    # The kit runs it inline (no thread) only while a move cannot take long.
    assert make_policy("learned").instant  # type: ignore[attr-defined]
    assert not make_policy("learned", {"nodes": 10**6}).instant  # type: ignore[attr-defined]
    assert make_policy("learned", {"nodes": 10**6, "endgame": "exact"}).instant  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="learned endgame must be one of network, exact, sampled"):
        make_policy("learned", {"endgame": "perfect"})
    with pytest.raises(ValueError, match="learned nodes must be at least 1, not 0"):
        make_policy("learned", {"nodes": 0})


@pytest.mark.slow
@pytest.mark.parametrize("preset", ["standard", "genova-home", "fantacarte"])
def test_sampled_values_native_and_python_agree_on_the_same_deal(preset: str) -> None:
    """On the first deal the native solver draws, the reference gives the same value to
    every move and counts the same nodes: a budget of exactly that count solves the deal,
    one node less drops it (and with it every value)."""
    checked = 0
    for _, view, codes in last_rounds(4, preset=preset, stock=6):
        assert penultimate(view) and view.seat is not None
        seed = 1000 + checked
        values, done, nodes = native_sampled(view, codes, seed, 1, 0)
        side = view.options.side_of(view.seat)
        assert done == 1 and nodes > len(codes)
        assert solve_worlds([native_world(view, seed)], codes, side, 0) == pytest.approx(
            values, abs=1e-12
        )
        assert native_sampled(view, codes, seed, 1, nodes)[0] == values
        assert native_sampled(view, codes, seed, 1, nodes - 1) == ([], 0, nodes)
        assert solve_worlds([native_world(view, seed)], codes, side, nodes) == pytest.approx(
            values, abs=1e-12
        )
        assert solve_worlds([native_world(view, seed)], codes, side, nodes - 1) == []
        checked += 1
    assert checked > 30


@pytest.mark.slow
def test_sampled_values_keep_to_their_budget_and_average_whole_deals() -> None:
    checked = moved = 0
    for _, view, codes in last_rounds(2, stock=6):
        first, _, one = native_sampled(view, codes, 5, 1, 0)
        values, done, nodes = native_sampled(view, codes, 5, 1000, 20 * one)
        assert 1 < done < 1000 and nodes <= 20 * one + 1  # the dropped deal's last node
        few, _, _ = native_sampled(view, codes, 5, 2, 0)
        moved += few != first  # a second deal moved the means
        # Each value is a mean of rewards between 0 and 1.
        assert all(0.0 <= v <= 1.0 for v in values)
        assert sampled_values(view, codes, 5, 20 * one) == values
        assert sampled_values(view, codes, 5, 1) == []
        python = sampled_values(view, codes, 5, 20 * one, core="python")
        assert len(python) == len(codes)
        checked += 1
    assert checked > 10 and moved > 5
    four = next(last_rounds(1, players=4, stock=12))[1]
    assert not penultimate(four)
    with pytest.raises(ValueError, match="a 2-player view of the seat to move"):
        sampled_values(four, [0], 1)


def test_sampled_values_read_the_view_alone() -> None:
    """Another deal of the hidden cards with the same view (the opponent's hand, the last
    round's cards): the same values, natively and in the reference."""
    rng = random.Random(3)
    checked = 0
    for game, view, codes in last_rounds(3, stock=6):
        assert view.seat is not None
        other = sample_world(view, rng, deal_only=True)
        if other.hands == game.hands and other.stock == game.stock:
            continue
        twin = other.view(view.seat)
        assert twin.key() == view.key()
        assert sampled_values(twin, codes, 9) == sampled_values(view, codes, 9)
        python = sampled_values(view, codes, 9, 3000, core="python")
        assert sampled_values(twin, codes, 9, 3000, core="python") == python
        checked += 1
    assert checked > 15


def test_learned_plays_each_endgame_where_it_applies_and_the_network_elsewhere() -> None:
    """In the last round the exact move (endgame sampled, the default, and exact); in the
    round before, the move of best mean over sampled deals drawn from its seed (sampled),
    or the network's when not one deal fits the node budget (and with endgame exact);
    earlier, all three play the network's move."""
    greedy = make_policy("greedy")
    solved = differed = sampled = starved = before = 0
    for seed in range(6):
        game = Game(Options(), seed=seed)
        bot, exact = LearnedPolicy(seed=seed), LearnedPolicy(seed=seed, endgame="exact")
        network, starving = LearnedPolicy(endgame="network"), LearnedPolicy(seed=seed, nodes=1)
        while (seat := game.to_move) is not None:
            legal = game.legal_actions()
            view = game.view(seat)
            if seat == 1:
                game.apply(legal[greedy.choose(view, legal, None)], seat)
                continue
            codes = [a.to_int() for a in legal]
            mine, theirs = bot.choose(view, legal, None), network.choose(view, legal, None)
            if len(legal) > 1 and solvable(view):
                assert mine == exact.choose(view, legal, None) == best_exact(view, codes)
                solved += 1
                differed += mine != theirs
            elif len(legal) > 1 and penultimate(view):
                values = sampled_values(view, codes, decision_seed(seed, view))
                assert len(values) == len(codes)
                assert mine == int(np.argmax(values))
                assert theirs == int(np.argmax(action_values(bot.net, view, codes)))
                assert starving.choose(view, legal, None) == theirs
                assert exact.choose(view, legal, None) == theirs
                sampled += 1
                starved += mine != theirs
            elif len(legal) > 1:
                assert mine == theirs == exact.choose(view, legal, None)
                before += 1
            game.apply(legal[mine], seat)
    assert solved > 20 and sampled > 20 and before > 100 and differed > 0 and starved > 0


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
