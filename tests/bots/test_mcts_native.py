"""The native ISMCTS loop (the native core) beside the Python reference loop (cirulla.bots.mcts)."""

from __future__ import annotations

import dataclasses
import time

import pytest

from cirulla.bots.botspec import parse_bot_spec
from cirulla.bots.compiled import search_native as native
from cirulla.bots.mcts import SearchConfig, search
from cirulla.bots.mcts_policy import MctsPolicy
from cirulla.rules import Game, Options
from tests.rules_helpers import deal_positions


@pytest.mark.parametrize(("playout", "expand"), [("sighted", "random"), ("blind", "best")])
@pytest.mark.parametrize("players", [2, 3, 4])
def test_native_search_visits_only_legal_actions_and_counts_every_iteration(
    players: int, playout: str, expand: str
) -> None:
    assert native is not None
    for game in deal_positions(players, 11)[::4]:
        view = game.view(game.turn)
        result = search(
            view, 3, SearchConfig(iterations=300, core="native", playout=playout, expand=expand)
        )
        assert result.iterations == 300
        assert sum(result.visits.values()) == 300
        assert set(result.visits) <= set(game.reference_legal_codes())


def test_native_search_is_deterministic_for_a_seed() -> None:
    game = deal_positions(2, 5)[0]
    view = game.view(game.turn)
    a = search(view, 9, SearchConfig(iterations=2000, core="native"))
    b = search(view, 9, SearchConfig(iterations=2000, core="native"))
    c = search(view, 10, SearchConfig(iterations=2000, core="native"))
    assert a.visits == b.visits
    assert a.visits != c.visits


def test_native_search_stops_on_its_time_budget() -> None:
    game = deal_positions(2, 6)[0]
    result = search(game.view(game.turn), 1, SearchConfig(seconds=0.05, core="native"))
    assert result.iterations > 0
    assert result.seconds < 1.0  # a budget, not a benchmark: generous for loaded machines


@pytest.mark.parametrize("expand", ["random", "best"])
@pytest.mark.parametrize("root", ["ucb", "halving"])
def test_both_loops_prefer_the_same_obvious_move(root: str, expand: str) -> None:
    """Settebello on the table with a 7 in hand: both loops take it, with either root."""
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
    codes = game.reference_legal_codes()
    for core in ("native", "python"):
        result = search(view, 2, SearchConfig(iterations=400, core=core, root=root, expand=expand))
        assert codes[result.best(codes)] == take, core
        if root == "halving":  # the last survivor survived every halving
            assert result.survived[take] == max(result.survived.values()) >= 1, core


@pytest.mark.parametrize("core", ["native", "python"])
def test_halving_drops_the_worse_half_each_phase(core: str) -> None:
    """Sequential halving: a phase ends when every survivor has played the same worlds;
    each halving keeps the better half, and the search stops at one survivor."""
    game = deal_positions(2, 12)[0]
    view = game.view(game.turn)
    k = len(game.reference_legal_codes())
    assert k >= 3
    budget = 60 if core == "python" else 600
    result = search(view, 4, SearchConfig(iterations=budget, core=core, root="halving"))
    assert sum(result.visits.values()) == result.iterations <= budget
    assert len(result.visits) == k  # every root action played at least the first phase
    survivors = sorted(result.survived.values(), reverse=True)
    assert survivors[0] > survivors[1]  # one last survivor
    assert len(survivors) == k // 2 + k % 2 or k == 2  # the first halving kept half
    # Actions that survived longer were visited at least as often.
    by_survival = sorted(result.visits, key=lambda c: result.survived.get(c, 0))
    visits = [result.visits[c] for c in by_survival]
    assert visits == sorted(visits)


@pytest.mark.parametrize("core", ["native", "python"])
def test_a_cpu_clock_budget_counts_thread_cpu_time(core: str) -> None:
    """With cpu_clock the budget is this thread's CPU time and so is the reported time."""
    game = deal_positions(2, 6)[0]
    view = game.view(game.turn)
    before = time.thread_time()
    result = search(view, 1, SearchConfig(seconds=0.05, core=core, cpu_clock=True))
    used = time.thread_time() - before
    assert result.iterations > 0
    assert 0.05 <= result.seconds <= used + 1e-6


def test_native_search_refuses_a_view_that_cannot_be_dealt() -> None:
    game = deal_positions(2, 8)[0]
    view = game.view(game.turn)
    bad = dataclasses.replace(view, stock=view.stock - 2, hand_sizes=(3, 5))
    with pytest.raises(ValueError, match="view"):
        search(bad, 1, SearchConfig(iterations=10, core="native"))


def test_the_core_option_is_checked_and_chosen_per_bot() -> None:
    assert parse_bot_spec("mcts:core=python") == ("mcts", {"core": "python"})
    assert MctsPolicy(iterations=10, core="python").core == "python"
    assert MctsPolicy(iterations=10).core == "native"
    with pytest.raises(ValueError, match="core must be one of auto, native, python"):
        MctsPolicy(iterations=10, core="fortran")
    assert parse_bot_spec("mcts:root=halving") == ("mcts", {"root": "halving"})
    with pytest.raises(ValueError, match="root must be one of ucb, halving"):
        MctsPolicy(iterations=10, root="best")
    with pytest.raises(ValueError, match="playout must be one of sighted, blind"):
        MctsPolicy(iterations=10, playout="psychic")
    with pytest.raises(ValueError, match="expand must be one of random, best"):
        MctsPolicy(iterations=10, expand="all")
