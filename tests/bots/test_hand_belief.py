"""The belief over the opponent's hidden hand that the ``learned`` network reads
(``inference.hidden_hand_marginals``): each card's chance of being in that hand, every hand
the view allows weighed exactly as the search's rejection weighs its worlds."""

from __future__ import annotations

import itertools
import math

import pytest

from cirulla.bots.inference import DEFAULT_INFER, Evidence, hidden_hand_marginals
from cirulla.rules import parse_mask
from cirulla.rules.cards import cards_of
from cirulla.rules.game import Game
from cirulla.rules.options import Options
from tests.bots.test_inference import dropped_on_a_table_it_could_take

SWEEPERS = parse_mask("AD AH AS 3D 3H 3S")  # each would have swept KS 2C


def brute_force(
    unseen: int, size: int, evidence: tuple[Evidence, ...], infer: float
) -> list[float]:
    """The same belief by a plain loop over every hand: the reference the fast one meets."""
    held = [0.0] * 40
    total = 0.0
    for hand in itertools.combinations(cards_of(unseen), size):
        mask = sum(1 << c for c in hand)
        weight = math.prod((1 - infer) for e in evidence if mask & e.bad)
        total += weight
        for c in hand:
            held[c] += weight
    return [h / total for h in held]


def test_without_evidence_every_unseen_card_is_equally_likely() -> None:
    view = Game(Options(), seed=3).view(0)
    belief = hidden_hand_marginals(view, ())
    unseen = cards_of(view.unseen)
    assert sum(belief) == pytest.approx(view.hand_sizes[1])
    for card in range(40):
        expected = view.hand_sizes[1] / len(unseen) if card in unseen else 0.0
        assert belief[card] == pytest.approx(expected)


@pytest.mark.parametrize("infer", [DEFAULT_INFER, 0.5, 1.0])
def test_a_drop_next_to_a_sweep_makes_the_sweeping_cards_unlikely(infer: float) -> None:
    game, _, evidence = dropped_on_a_table_it_could_take()
    view = game.view(0)
    belief = hidden_hand_marginals(view, evidence, infer)
    uniform = hidden_hand_marginals(view, ())
    assert sum(belief) == pytest.approx(view.hand_sizes[1])  # still a hand of that size
    assert belief == pytest.approx(brute_force(view.unseen, view.hand_sizes[1], evidence, infer))
    for card in cards_of(SWEEPERS & view.unseen):
        assert belief[card] < uniform[card] * (1 - infer / 2)
        if infer == 1.0:
            assert belief[card] == 0.0  # no hand that holds one is kept
    calm = [c for c in cards_of(view.unseen) if not evidence[0].bad >> c & 1]
    assert all(belief[c] > uniform[c] for c in calm)  # the weight moves to them


def test_it_sees_no_card_the_view_does_not_and_stays_silent_where_it_cannot_tell() -> None:
    game, _, evidence = dropped_on_a_table_it_could_take()
    view = game.view(0)
    belief = hidden_hand_marginals(view, evidence)
    assert all(belief[c] == 0.0 for c in range(40) if not view.unseen >> c & 1)
    four = Game(Options(players=4), seed=1).view(0)
    assert hidden_hand_marginals(four, ()) == [0.0] * 40
