"""The ``reply`` playout: the mover weighs the next hand's best capture, not only a sweep."""

from __future__ import annotations

import random

import pytest

from cirulla.bots.compiled import search_native as native
from cirulla.bots.heuristic import SCOPA_POINT, STATIC_WORTH, playout_code, reply_worth
from cirulla.bots.mcts import SearchConfig, search
from cirulla.bots.mcts_policy import MctsPolicy
from cirulla.rules import Game, Options, parse_cards, parse_mask
from tests.rules_helpers import deal_positions


def settebello_at_stake() -> Game:
    """Seat 0 holds 2C 4C, both drops, on 7D KS; seat 1 holds QH 6C (stock empty).

    Dropping 2C lets QH (7 + 2) or 6C (15 - 9) take the settebello without sweeping (KS
    stays); dropping 4C gives seat 1 nothing. 2C is the cheaper card to drop.
    """
    hands = [parse_mask("2C 4C"), parse_mask("QH 6C")]
    table = parse_mask("7D KS")
    rest = [c for c in range(40) if not (hands[0] | hands[1] | table) >> c & 1]
    captured = [sum(1 << c for c in rest[::2]), sum(1 << c for c in rest[1::2])]
    return Game.setup(Options(), hands=hands, table=table, captured=captured, turn=0, dealer=1)


def test_the_reply_playout_keeps_the_settebello_from_the_next_hand() -> None:
    game = settebello_at_stake()
    rng = random.Random(1)
    sighted = playout_code(game, rng, 0.0)
    reply = playout_code(game, rng, 0.0, reply=True)
    assert sighted == parse_cards("2C")[0]  # no sweep to fear: the cheaper drop
    assert reply == parse_cards("4C")[0]  # QH or 6C would take 7D 2C


def test_both_cores_weigh_the_reply_alike() -> None:
    assert native is not None
    rng = random.Random(7)
    nonzero = 0
    for _ in range(400):
        cards = rng.sample(range(40), rng.randrange(1, 11))
        after = sum(1 << c for c in cards[: rng.randrange(1, min(len(cards), 10) + 1)])
        nxt = [c for c in cards if not after >> c & 1][:3]
        named = rng.choice([0, 0, 1, 5, 7])
        pp = rng.random() < 0.5
        expected = reply_worth(after, named, pp, nxt)
        got = native.reply_worth(STATIC_WORTH, SCOPA_POINT, after, named, pp, nxt)
        assert got == pytest.approx(expected, abs=1e-9)
        nonzero += expected > 0
    assert nonzero > 100


@pytest.mark.parametrize("core", ["python", "native"])
def test_search_with_reply_playouts_plays_its_budget(core: str) -> None:
    game = settebello_at_stake()
    result = search(game.view(0), 3, SearchConfig(iterations=80, core=core, playout="reply"))
    assert result.iterations == 80
    assert set(result.visits) <= set(game.reference_legal_codes())
    assert MctsPolicy(iterations=10, playout="reply").playout == "reply"


@pytest.mark.parametrize("core", ["python", "native"])
def test_a_depth_cap_changes_the_search_and_is_checked(core: str) -> None:
    """depth=1: no tree below the root, every iteration a playout straight after the root
    action; the same seed then visits the root differently than the full tree does."""
    game = deal_positions(2, 4)[0]
    view = game.view(game.turn)
    budget = 150 if core == "python" else 1500
    flat = search(view, 5, SearchConfig(iterations=budget, core=core, depth=1))
    again = search(view, 5, SearchConfig(iterations=budget, core=core, depth=1))
    full = search(view, 5, SearchConfig(iterations=budget, core=core))
    assert flat.iterations == full.iterations == budget
    assert flat.visits == again.visits
    assert flat.totals != full.totals
    with pytest.raises(ValueError, match="depth must be 0"):
        MctsPolicy(iterations=10, depth=-1)
