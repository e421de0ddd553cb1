"""What one seat may know, and worlds consistent with it.

Only views leave the referee. A view (``View``, made by ``view_of``: their module is
``cirulla.rules.seat_view``, which needs no ``Game``; this one is their documented home)
holds the seat's own hand, the table, public history in aggregate (captured cards per side
are public: every capture is made face up), declared cards still in hand, and counts.
``sample_world`` deals the unseen cards at random into the other hands and the stock, which
is how the bots determinize.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from cirulla.rules.cards import cards_of
from cirulla.rules.game import Game
from cirulla.rules.seat_view import View, view_of

__all__ = ["NO_HANDS", "View", "sample_world", "view_of", "world_of"]


#: ``sample_world``'s ``hidden`` when no seat's hand is inferred: no seat, no candidates.
NO_HANDS: tuple[int, tuple[int, ...]] = (-1, ())


def sample_world(
    view: View,
    rng: random.Random,
    *,
    deal_only: bool = True,
    hidden: tuple[int, Sequence[int]] = NO_HANDS,
) -> Game:
    """A complete game state consistent with everything ``view.seat`` knows.

    Declared cards stay with their holder, hand sizes and the stock count match, and no card
    the seat has seen is placed in a hidden zone. Future deals (if ``deal_only`` is False)
    are shuffled from ``rng``. ``hidden``, ``(seat, candidates)``: that seat's hidden cards
    are one of the candidate masks, drawn from ``rng`` (no draw when there is one), and the
    other unseen cards are dealt as usual (an inferred hand, ``bots/cirulla/bots/inference.py``).
    """
    if view.seat is None:
        raise ValueError("a spectator view has no seat to sample a world for")
    n = view.options.players
    hands = list(view.declared)
    hands[view.seat] = view.hand
    unseen = view.unseen
    fixed, candidates = hidden
    if candidates:
        held = candidates[rng.randrange(len(candidates))] if len(candidates) > 1 else candidates[0]
        hands[fixed] |= held
        unseen &= ~held
    pool = cards_of(unseen)
    rng.shuffle(pool)
    at = 0
    for s in range(n):
        if s == view.seat or s == fixed:
            continue
        need = view.hand_sizes[s] - view.declared[s].bit_count()
        for c in pool[at : at + need]:
            hands[s] |= 1 << c
        at += need
    stock = pool[at:]
    if len(stock) != view.stock:
        raise ValueError(
            f"view is inconsistent: {len(stock)} unseen cards left for a stock of {view.stock}"
        )
    # The stock is already in random order; the world is consistent by construction
    # (checked in the property tests).
    return world_of(view, hands, stock, rng.getrandbits(64), deal_only, validate=False)


def world_of(
    view: View,
    hands: Sequence[int],
    stock: Sequence[int],
    seed: int,
    deal_only: bool = True,
    validate: bool = True,
) -> Game:
    """The game ``view`` sees, with the hidden zones filled in: every hand (masks) and the
    stock in dealing order. ``seed`` shuffles the later deals (unless ``deal_only``)."""
    assert view.seat is not None
    return Game.setup(
        view.options,
        hands=hands,
        table=view.table,
        stock=stock,
        captured=view.captured,
        scope=view.scope,
        dealer=view.dealer,
        turn=view.to_move if view.to_move is not None else view.seat,
        wild=view.wild_value,
        declared=view.declared,
        totals=view.totals,
        deal_no=view.deal,
        round=view.round,
        last_taker=view.last_taker,
        seed=seed,
        deal_only=deal_only,
        validate=validate,
    )
