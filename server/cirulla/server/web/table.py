"""The card table, drawn as HTML on the server: the one renderer of the live and replay views.

A table is a :class:`TableState` (plain lists of card codes), built from a replay step
(``steps.replay_steps``: every hand, the record is public) or from a spectator's ``View``
(``from_view``: hands as face-down backs, only their count is public). The same HTML is
sent as the page's first state and, for live games, with each Server-Sent Event, so the
browser's script only swaps it in: there is no second renderer in JavaScript to drift
from this one. Every name is HTML-escaped; a card is its code, its rank and its suit
symbol, with the Italian suit's name in its title (no image, nothing fetched).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape
from typing import Any

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


def card(code: str, extra: str = "") -> str:
    """One card: rank and suit symbol, red for cups and coins, its name as the title."""
    rank, suit = code[:-1], code[-1:]
    symbol = SUITS.get(suit, ("?",))[0]
    red = " red" if suit in ("H", "D") else ""
    cls = f"card{red}{' ' + extra if extra else ''}"
    return (
        f'<span class="{cls}" data-card="{escape(code)}" title="{escape(card_title(code))}">'
        f"<b>{escape(rank)}</b><i>{symbol}</i></span>"
    )


def cards(codes: list[str], mark: frozenset[str] = frozenset(), empty: str = "none") -> str:
    if not codes:
        return f'<span class="muted">{escape(empty)}</span>'
    return "".join(card(c, "last" if c in mark else "") for c in codes)


def backs(n: int) -> str:
    return "".join(
        '<span class="card back" title="a card in hand (hidden)"></span>' for _ in range(n)
    )


def wild_text(wild: int | None) -> str:
    if wild:
        return f"wild 7\u2665 counts as {wild}"
    return "wild 7\u2665: no value named"


def played_text(state: TableState) -> str:
    p = state.played
    if p is None:
        return '<span class="muted">no card played yet in this deal</span>'
    who = next((s for s in state.seats if s.seat == p.seat), Seat(p.seat, 0))
    took = f" and took {cards(p.captured)}" if p.captured else " (it stays on the table)"
    flags = (" <b>ACE SWEEP</b>" if p.ace_sweep else "") + (" <b>SCOPA</b>" if p.scopa else "")
    return f"{escape(seat_label(who))} played {card(p.card, 'last')}{took}{flags}"


def render(state: TableState) -> str:
    """The table as one HTML fragment (``<div class="felt">``)."""
    # the last capture: the cards taken and the card that took them, in the taker's pile
    taken = (
        frozenset([*state.played.captured, state.played.card])
        if state.played and state.played.captured
        else frozenset()
    )
    stayed = (
        frozenset({state.played.card})
        if state.played and not state.played.captured
        else frozenset()
    )
    by_side: dict[int, list[Seat]] = {}
    for s in state.seats:
        by_side.setdefault(s.side, []).append(s)
    seats_html = []
    for s in state.seats:
        turn = state.to_move == s.seat
        hand = cards(s.hand, empty="no cards") if s.hand is not None else backs(s.hand_count)
        badges = (' <span class="badge turn">to move</span>' if turn else "") + (
            ' <span class="badge">dealer</span>' if state.dealer == s.seat else ""
        )
        declared = f'<div class="declared">declared {cards(s.declared)}</div>' if s.declared else ""
        seats_html.append(
            f'<div class="seat{" turn" if turn else ""}" data-seat="{s.seat}">'
            f'<div class="who">{escape(seat_label(s))} <span class="muted">side {s.side}</span>'
            f"{badges}</div>"
            f'<div class="hand" data-count="{len(s.hand) if s.hand is not None else s.hand_count}">'
            f"{hand}</div>{declared}</div>"
        )
    piles = []
    last_side = None
    if state.played and state.played.captured:
        last_side = next((s.side for s in state.seats if s.seat == state.played.seat), None)
    for side in state.sides:
        names = ", ".join(seat_label(s) for s in by_side.get(side.side, []))
        mark = taken if side.side == last_side else frozenset()
        piles.append(
            f'<div class="pile{" lasttake" if side.side == last_side else ""}" '
            f'data-side="{side.side}"><div class="who">side {side.side} '
            f'<span class="muted">{escape(names)}</span></div>'
            f'<div class="muted">{len(side.captured)} cards taken · {side.scope} scope · '
            f"game {side.total}</div>"
            f'<div class="taken">{cards(side.captured, mark, "nothing taken yet")}</div></div>'
        )
    mover = next((s for s in state.seats if s.seat == state.to_move), None)
    info = (
        f"deal {state.deal} · "
        + (f"{escape(seat_label(mover))} to move" if mover else "nobody to move")
        + f" · {escape(wild_text(state.wild))} · {state.stock} cards in the stock"
    )
    return (
        f'<div class="felt"><div class="info" id="info">{info}</div>'
        f'<div class="seats">{"".join(seats_html)}</div>'
        f'<div class="tablecards" id="tablecards" data-count="{len(state.table)}">'
        f"{cards(state.table, stayed, 'the table is empty')}</div>"
        f'<div class="lastplay" id="lastplay">{played_text(state)}</div>'
        f'<div class="piles">{"".join(piles)}</div>{LEGEND}</div>'
    )


#: the suits as French symbols with their Italian names (the deck's own)
LEGEND = (
    '<div class="legend muted">'
    + " · ".join(f"{sym} {it} ({en})" for sym, it, en in SUITS.values())
    + "</div>"
)


def _codes(cs: Any) -> list[str]:
    return [c.code for c in cs]


def from_view(view: Any, played: Played | None = None) -> TableState:
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


def played_from_event(event: Any) -> Played | None:
    """The ``card_played`` of a protobuf Event, or None for any other event."""
    if event.WhichOneof("body") != "card_played":
        return None
    p = event.card_played
    return Played(p.seat, p.card.code, _codes(p.captured), p.scopa, p.ace_sweep)


def from_step(step: dict[str, Any], seats: list[dict[str, Any]]) -> TableState:
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
