"""The ``mcts`` option ``posterior=replay``: the opponent's hidden hand in every world is
drawn from sampled hands with which greedy would have made each of its plays this round
(``PlayTracker.replay_hands``), instead of rejecting random worlds by the evidence.
Both search loops take the candidate hands (``search(hands=...)``) and deal one of them
to that seat in every world.
"""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from cirulla.bots.compiled import search_native as native
from cirulla.bots.inference import REPLAY_TRIES, replays_greedy
from cirulla.bots.mcts import SearchConfig, search
from cirulla.bots.mcts_policy import MctsPolicy
from cirulla.rules import Game, parse_mask
from cirulla.rules.core import options_tuple, view_tuple
from cirulla.rules.views import sample_world
from tests.bots.test_inference import against_greedy, dropped_on_a_table_it_could_take
from tests.bots.test_opponent import EXACT_ROOT, EXACT_SEED
from tests.rules_helpers import deal_positions


def mid_deal(seed: int) -> Game:
    """A 2-player position with a stock, the other seat holding three hidden cards."""
    for game in deal_positions(2, seed):
        hidden = game.hands[1 - game.turn] & ~game.declared[1 - game.turn]
        if game.stock and hidden.bit_count() == 3 and len(game.legal_codes()) > 2:
            return game
    raise AssertionError("no such position")


@pytest.mark.parametrize("core", ["native", "python"])
@pytest.mark.parametrize("seed", [1, 4, 9])
def test_one_candidate_hand_is_the_world_where_that_hand_is_known(core: str, seed: int) -> None:
    """With a single candidate, every world gives the other seat that hand and deals the
    rest at random, exactly as when that hand is public (declared): the same searches."""
    game = mid_deal(seed)
    me, other = game.turn, 1 - game.turn
    view = game.view(me)
    known = replace(view, declared=tuple(game.hands[s] if s == other else 0 for s in range(2)))
    given = search(
        view, EXACT_SEED, SearchConfig(core=core, **EXACT_ROOT), hands=(other, [game.hands[other]])
    )
    shown = search(known, EXACT_SEED, SearchConfig(core=core, **EXACT_ROOT))
    assert given.visits == shown.visits
    assert given.totals == pytest.approx(shown.totals, abs=1e-12)
    uniform = search(view, EXACT_SEED, SearchConfig(core=core, **EXACT_ROOT))
    assert uniform.totals != pytest.approx(given.totals, abs=1e-12)  # the hand matters


@pytest.mark.parametrize("core", ["native", "python"])
def test_every_world_deals_one_of_the_candidate_hands(core: str) -> None:
    game = mid_deal(2)
    me, other = game.turn, 1 - game.turn
    view = game.view(me)
    pool = [c for c in range(40) if view.unseen >> c & 1]
    candidates = [sum(1 << c for c in pool[k : k + 3]) for k in (0, 3)]
    seen = set()
    for seed in range(40):
        if core == "python":
            world = sample_world(view, random.Random(seed), hidden=(other, candidates))
            hands, stock = world.hands, world.stock
        else:
            assert native is not None
            hands, stock = native.sample_world(
                options_tuple(view.options), view_tuple(view), seed, (), 0.0, 1, candidates, other
            )
        assert hands[other] in candidates
        assert hands[me] == view.hand
        assert sorted(stock) == sorted(c for c in pool if not hands[other] >> c & 1)
        seen.add(hands[other])
    assert seen == set(candidates)


def test_the_native_search_refuses_hands_that_do_not_fit() -> None:
    assert native is not None
    game = mid_deal(2)
    view = game.view(game.turn)
    me, other = game.turn, 1 - game.turn
    pool = [c for c in range(40) if view.unseen >> c & 1]
    three = sum(1 << c for c in pool[:3])
    wrong = (
        ([three & (three - 1)], other),  # two cards for a hand of three
        ([game.hands[me]], other),  # cards the searcher holds
        ([three], me),  # the searcher's own hand
    )
    for hands, seat in wrong:
        with pytest.raises(ValueError, match="hands"):
            native.sample_world(
                options_tuple(view.options), view_tuple(view), 1, (), 0.0, 1, hands, seat
            )


def test_the_replay_posterior_holds_only_hands_that_replay_the_drop() -> None:
    """Seat 1 dropped QH on KS 2C: greedy holding an ace (a sweep) or a 3 (a 15 that takes
    the table) would have taken it, so no candidate holds one."""
    game, tracker, _ = dropped_on_a_table_it_could_take(positions=True)
    view = game.view(0)
    seat, hands = tracker.replay_hands(view, random.Random(3))
    assert seat == 1
    assert 0 < len(hands) < REPLAY_TRIES  # some sampled hands are rejected
    plays = tracker._round(view)
    for hidden in hands:
        assert hidden & view.unseen == hidden and hidden.bit_count() == 2
        assert not hidden & parse_mask("AD AH AS 3D 3H 3S")
        assert replays_greedy(plays, 1, hidden)
    assert not replays_greedy(plays, 1, parse_mask("AD 5S"))


def test_against_greedy_its_true_hand_always_replays() -> None:
    """mcts with the replay posterior follows greedy's plays in a real deal: greedy's true
    hidden hand replays them at every decision, so it is never ruled out."""
    mcts = MctsPolicy(seed=1, iterations=40, posterior="replay")
    with_hands = 0
    for game in against_greedy(mcts):
        if mcts.last_hands[1]:
            with_hands += 1
            plays = [p for p in mcts._tracker._round(game.view(0)) if p.seat == 1]
            assert mcts.last_hands[0] == 1
            assert replays_greedy(plays, 1, game.hands[1])
    assert with_hands >= 3


def test_only_a_tracker_for_the_replay_keeps_the_positions_played_from() -> None:
    """The evidence needs no position per opponent play, and rebuilding one costs a sampled
    world per play: the default tracker keeps none, so it has no hands to replay."""
    game, tracker, _ = dropped_on_a_table_it_could_take()
    assert tracker.replay_hands(game.view(0), random.Random(3)) == (-1, ())
    game, tracker, _ = dropped_on_a_table_it_could_take(positions=True)
    assert tracker.replay_hands(game.view(0), random.Random(3))[0] == 1
