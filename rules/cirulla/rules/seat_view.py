"""What one seat may know: ``View`` and ``view_of``.

Only views leave the referee. A view holds the seat's own hand, the table, public history
in aggregate (captured cards per side are public: every capture is made face up), declared
cards still in hand, and counts. This module needs no ``Game`` at run time, so the game
(``Game.view``) and the worlds sampled from a view (``cirulla.rules.views``) both import it;
``cirulla.rules.views`` re-exports both names, their documented home.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from cirulla.rules.cards import ALL_CARDS_MASK, format_cards
from cirulla.rules.options import Options

if TYPE_CHECKING:
    from cirulla.rules.game import Game


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
        stock=game.stock_count,
        totals=tuple(game.totals),
        last_taker=game.last_taker if game.last_taker >= 0 else None,
        winner=game.winner,
    )
