"""The card table, drawn as HTML on the server: the one renderer of the live and replay views.

A table is a :class:`TableState` (plain lists of card codes), built from a replay step
(``steps.replay_steps``: every hand, the record is public) or from a spectator's ``View``
(``from_view``: hands as face-down backs, only their count is public). The same HTML is
sent as the page's first state and, for live games, with each Server-Sent Event, so the
browser's script only swaps it in: there is no second renderer in JavaScript to drift
from this one. This module builds the table's view (:class:`Felt`); ``templates/table.html``
draws it, every name HTML-escaped; a card is its code, its rank and its suit symbol, with
the Italian suit's name in its title (no image, nothing fetched).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from markupsafe import Markup

from cirulla.server.web import templating
from cirulla.server.web.steps import SeatInfo, Step
from cirulla.v1 import cards_pb2, events_pb2, game_pb2

#: French symbol, Italian name, English name of each suit letter (cirulla.rules.cards)
SUITS = {
    "D": ("\u2666", "denari", "coins"),
    "H": ("\u2665", "coppe", "cups"),
    "C": ("\u2663", "bastoni", "clubs"),
    "S": ("\u2660", "spade", "swords"),
}
RANKS = {"A": "ace", "J": "jack", "Q": "queen", "K": "king"}


@dataclass
class Seat:
    seat: int
    side: int
    name: str = ""
    #: the cards in hand (a replay), or None when hidden (live: ``hand_count`` backs)
    hand: list[str] | None = None
    hand_count: int = 0
    declared: list[str] = field(default_factory=list)


@dataclass
class Side:
    side: int
    captured: list[str]
    scope: int = 0
    total: int = 0


@dataclass
class Played:
    """The last card played: who, what, and what it took (empty: it stayed on the table)."""

    seat: int
    card: str
    captured: list[str]
    scopa: bool = False
    ace_sweep: bool = False


@dataclass
class TableState:
    seats: list[Seat]
    table: list[str]
    sides: list[Side]
    to_move: int | None = None
    dealer: int = 0
    deal: int = 1
    wild: int | None = None
    stock: int = 0
    played: Played | None = None


def seat_label(seat: Seat) -> str:
    return f"seat {seat.seat}" + (f" {seat.name}" if seat.name else "")


def card_title(code: str) -> str:
    rank, suit = code[:-1], code[-1:]
    _symbol, italian, english = SUITS.get(suit, ("?", "?", "?"))
    return f"{RANKS.get(rank, rank)} of {english} ({italian}) {code}"


def wild_text(wild: int | None) -> str:
    if wild:
        return f"wild 7\u2665 counts as {wild}"
    return "wild 7\u2665: no value named"


@dataclass(frozen=True)
class CardView:
    """One face-up card as ``table.html`` draws it: rank, suit symbol (red for cups and
    coins), its name as the title; ``last`` marks the last card played or taken."""

    code: str
    rank: str
    symbol: str
    red: bool
    title: str
    last: bool = False


def card_view(code: str, last: bool = False) -> CardView:
    suit = code[-1:]
    symbol = SUITS.get(suit, ("?", "?", "?"))[0]
    return CardView(code, code[:-1], symbol, suit in ("H", "D"), card_title(code), last)


def card_views(codes: list[str], mark: frozenset[str] = frozenset()) -> list[CardView]:
    return [card_view(c, c in mark) for c in codes]


@dataclass(frozen=True)
class SeatView:
    seat: int
    side: int
    label: str
    turn: bool
    dealer: bool
    #: the cards in hand (a replay), or None when hidden: ``count`` backs
    hand: list[CardView] | None
    count: int
    declared: list[CardView]


@dataclass(frozen=True)
class PileView:
    side: int
    names: str
    lasttake: bool
    taken: list[CardView]
    scope: int
    total: int


@dataclass(frozen=True)
class PlayedView:
    who: str
    card: CardView
    took: list[CardView]
    scopa: bool
    ace_sweep: bool


@dataclass(frozen=True)
class Felt:
    """What ``table.html`` draws of a :class:`TableState`."""

    deal: int
    mover: str | None
    wild: str
    stock: int
    seats: list[SeatView]
    table: list[CardView]
    played: PlayedView | None
    piles: list[PileView]


def felt(state: TableState) -> Felt:
    """The table's view: the last capture (the cards taken and the card that took them,
    in the taker's pile) and a card that stayed on the table are marked."""
    p = state.played
    taken = frozenset([*p.captured, p.card]) if p and p.captured else frozenset()
    stayed = frozenset({p.card}) if p and not p.captured else frozenset()
    last_side = (
        next((s.side for s in state.seats if s.seat == p.seat), None) if p and p.captured else None
    )
    by_side: dict[int, list[Seat]] = {}
    for s in state.seats:
        by_side.setdefault(s.side, []).append(s)
    played = None
    if p is not None:
        who = next((s for s in state.seats if s.seat == p.seat), Seat(p.seat, 0))
        played = PlayedView(
            seat_label(who), card_view(p.card, True), card_views(p.captured), p.scopa, p.ace_sweep
        )
    mover = next((s for s in state.seats if s.seat == state.to_move), None)
    return Felt(
        deal=state.deal,
        mover=seat_label(mover) if mover else None,
        wild=wild_text(state.wild),
        stock=state.stock,
        seats=[
            SeatView(
                s.seat,
                s.side,
                seat_label(s),
                state.to_move == s.seat,
                state.dealer == s.seat,
                card_views(s.hand) if s.hand is not None else None,
                len(s.hand) if s.hand is not None else s.hand_count,
                card_views(s.declared),
            )
            for s in state.seats
        ],
        table=card_views(state.table, stayed),
        played=played,
        piles=[
            PileView(
                side.side,
                ", ".join(seat_label(s) for s in by_side.get(side.side, [])),
                side.side == last_side,
                card_views(side.captured, taken if side.side == last_side else frozenset()),
                side.scope,
                side.total,
            )
            for side in state.sides
        ],
    )


def render(state: TableState) -> Markup:
    """The table as one HTML fragment (``<div class="felt">``, ``table.html``)."""
    return templating.render("table.html", felt=felt(state), suits=list(SUITS.values()))


def _codes(cs: Iterable[cards_pb2.Card]) -> list[str]:
    return [c.code for c in cs]


def from_view(view: game_pb2.View, played: Played | None = None) -> TableState:
    """A spectator's ``View`` (protobuf): no hand is shown, only how many cards it holds."""
    return TableState(
        seats=[
            Seat(s.seat, s.side, s.name, None, s.hand_count, _codes(s.declared_cards))
            for s in view.seats
        ],
        table=_codes(view.table),
        sides=[Side(s.side, _codes(s.captured), s.scope, s.game_total) for s in view.sides],
        to_move=view.to_move if view.HasField("to_move") else None,
        dealer=view.dealer,
        deal=view.deal_number,
        wild=view.wild_value if view.HasField("wild_value") else None,
        stock=view.stock_count,
        played=played,
    )


def last_played(event: events_pb2.Event, played: Played | None) -> Played | None:
    """The play the table shows after ``event``: the card just played, none once a new
    deal starts, else the one shown before."""
    body = event.WhichOneof("body")
    if body == "card_played":
        p = event.card_played
        return Played(p.seat, p.card.code, _codes(p.captured), p.scopa, p.ace_sweep)
    return None if body == "deal_started" else played


def from_step(step: Step, seats: list[SeatInfo]) -> TableState:
    """One replay step (``steps.replay_steps``): every hand is shown (a public record)."""
    played = step.get("played")
    return TableState(
        seats=[
            Seat(s["seat"], s["side"], s["name"], list(step["hands"][s["seat"]])) for s in seats
        ],
        table=list(step["table"]),
        sides=[
            Side(side, list(c), step["scope"][side], step["totals"][side])
            for side, c in enumerate(step["captured"])
        ],
        to_move=step["to_move"],
        dealer=step["dealer"],
        deal=step["deal"],
        wild=step["wild"],
        stock=step["stock"],
        played=Played(**played) if played else None,
    )
