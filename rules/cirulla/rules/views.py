"""What one seat may know, and worlds consistent with it.

Only views leave the referee. A view holds the seat's own hand, the table, public history
in aggregate (captured cards per side are public: every capture is made face up), declared
cards still in hand, and counts. ``sample_world`` deals the unseen cards at random into the
other hands and the stock, which is how the bots determinize.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from cirulla.rules.cards import ALL_CARDS_MASK, cards_of, format_cards
from cirulla.rules.game import Game
from cirulla.rules.options import Options


@dataclass(frozen=True, slots=True)
class View:
    """Everything ``seat`` may know (``seat`` None: a spectator, who sees no hand)."""

    seat: int | None
    options: Options
    deal: int
    dealer: int
    round: int
    to_move: int | None
    hand: int
    table: int
    wild_value: int
    hand_sizes: tuple[int, ...]
    declared: tuple[int, ...]
    captured: tuple[int, ...]
    scope: tuple[int, ...]
    stock: int
    totals: tuple[int, ...]
    last_taker: int | None
    winner: int | None

    @property
    def unseen(self) -> int:
        """Cards this seat cannot locate: other hands (undeclared part) and the stock."""
        known = self.hand | self.table
        for m in self.declared:
            known |= m
        for m in self.captured:
            known |= m
        return ALL_CARDS_MASK & ~known

    def key(self) -> str:
        """One-line information-state string: equal keys mean indistinguishable states."""
        return (
            f"s{self.seat} d{self.deal}/{self.dealer} r{self.round} t{self.to_move} "
            f"h{self.hand:x} T{self.table:x} w{self.wild_value} "
            f"n{','.join(map(str, self.hand_sizes))} "
            f"D{','.join(f'{m:x}' for m in self.declared)} "
            f"C{','.join(f'{m:x}' for m in self.captured)} "
            f"S{','.join(map(str, self.scope))} k{self.stock} "
            f"P{','.join(map(str, self.totals))} L{self.last_taker}"
        )

    def __str__(self) -> str:
        who = "spectator" if self.seat is None else f"seat {self.seat}"
        return (
            f"{who}: hand [{format_cards(self.hand)}] table [{format_cards(self.table)}] "
            f"to move {self.to_move} deal {self.deal} round {self.round} totals {self.totals}"
        )


def view_of(game: Game, seat: int | None) -> View:
    return View(
        seat=seat,
        options=game.options,
        deal=game.deal_no,
        dealer=game.dealer,
        round=game.round,
        to_move=game.to_move,
        hand=game.hands[seat] if seat is not None else 0,
        table=game.table,
        wild_value=game.wild,
        hand_sizes=game.hand_sizes(),
        declared=tuple(game.declared),
        captured=tuple(game.captured),
        scope=tuple(game.scope),
        stock=len(game.stock),
        totals=tuple(game.totals),
        last_taker=game.last_taker if game.last_taker >= 0 else None,
        winner=game.winner,
    )


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
