"""The native ISMCTS loop (rules/_native.c) beside the Python reference loop (bots/mcts.py)."""

from __future__ import annotations

import dataclasses

import pytest

from cirulla.bots.mcts import MctsPolicy, search
from cirulla.bots.specs import parse_bot_spec
from cirulla.rules import Game, Options
from cirulla.rules.core import native

from .rules_helpers import deal_positions


@pytest.mark.parametrize("players", [2, 3, 4])
def test_native_search_visits_only_legal_actions_and_counts_every_iteration(
    players: int,
) -> None:
    assert native is not None
    for game in deal_positions(players, 11)[::4]:
        view = game.view(game.turn)
        result = search(view, seed=3, iterations=300, core="native")
        assert result.iterations == 300
        assert sum(result.visits.values()) == 300
        assert set(result.visits) <= set(game.reference_legal_codes())


def test_native_search_is_deterministic_for_a_seed() -> None:
    game = deal_positions(2, 5)[0]
    view = game.view(game.turn)
    a = search(view, seed=9, iterations=2000, core="native")
    b = search(view, seed=9, iterations=2000, core="native")
    c = search(view, seed=10, iterations=2000, core="native")
    assert a.visits == b.visits
    assert a.visits != c.visits


def test_native_search_stops_on_its_time_budget() -> None:
    game = deal_positions(2, 6)[0]
    result = search(game.view(game.turn), seed=1, seconds=0.05, core="native")
    assert result.iterations > 0
    assert result.seconds < 1.0  # a budget, not a benchmark: generous for loaded machines


def test_both_loops_prefer_the_same_obvious_move() -> None:
    """Settebello on the table with a 7 in hand: both loops take it."""
    options = Options()
    game = Game.setup(
        options,
        hands=[1 << 26 | 1 << 9 | 1 << 13, 1 << 2 | 1 << 5 | 1 << 10],  # 7C 3H 4H | AC 2H 3C
        table=1 << 24 | 1 << 35,  # 7D 9S
        captured=[0, 1 << 36 | 1 << 39],  # KD KS
        stock=[c for c in range(40) if c not in (26, 9, 13, 2, 5, 10, 24, 35, 36, 39)],
        turn=0,
        dealer=1,
    )
    view = game.view(0)
    take = 26 | (1 << 24) << 12  # 7C:7D
    for core in ("native", "python"):
        result = search(view, seed=2, iterations=400, core=core)
        assert max(result.visits, key=lambda code: result.visits[code]) == take, core


def test_native_search_refuses_a_view_that_cannot_be_dealt() -> None:
    game = deal_positions(2, 8)[0]
    view = game.view(game.turn)
    bad = dataclasses.replace(view, stock=view.stock - 2, hand_sizes=(3, 5))
    with pytest.raises(ValueError, match="view"):
        search(bad, seed=1, iterations=10, core="native")


def test_the_core_option_is_checked_and_chosen_per_bot() -> None:
    assert parse_bot_spec("mcts:core=python") == ("mcts", {"core": "python"})
    assert MctsPolicy(iterations=10, core="python").core == "python"
    assert MctsPolicy(iterations=10).core == "native"
    with pytest.raises(ValueError, match="core must be one of auto, native, python"):
        MctsPolicy(iterations=10, core="fortran")
