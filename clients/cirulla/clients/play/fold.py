"""The public position after each event, folded onto the latest ``View``.

Why: the server sends a ``View`` with each decision (and spectators one after each
move), but not after the move that ends a deal before the next deal is dealt, nor after
the game's last move. A screen drawn from the last View alone is one play behind just
where a player looks longest: the end of a deal and the final position. Folding every
public event onto the view keeps the board where the log is; a later View from the
server (it carries the sequence number of the last event it reflects) replaces the
folded one as it stands.

Only public facts are folded (hand counts, never hand cards), so a spectator's board
holds what the server's spectator views hold.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from cirulla.v1 import cards_pb2, events_pb2, game_pb2

if TYPE_CHECKING:
    from google.protobuf.internal.containers import RepeatedCompositeFieldContainer


def _without(cs: Iterable[cards_pb2.Card], gone: Iterable[cards_pb2.Card]) -> list[cards_pb2.Card]:
    codes = {c.code for c in gone}
    return [c for c in cs if c.code not in codes]


def _replace(
    field: RepeatedCompositeFieldContainer[cards_pb2.Card], cs: Iterable[cards_pb2.Card]
) -> None:
    """Set a repeated Card field to ``cs`` (copied first: ``cs`` may come from it)."""
    new = [cards_pb2.Card(suit=c.suit, rank=c.rank, code=c.code) for c in cs]
    del field[:]
    field.extend(new)


def _seat(v: game_pb2.View, seat: int) -> game_pb2.SeatState | None:
    return next((s for s in v.seats if s.seat == seat), None)


def _side(v: game_pb2.View, side: int) -> game_pb2.SideState | None:
    return next((s for s in v.sides if s.side == side), None)


def new_deal_view(
    e: events_pb2.Event,
    players: int,
    side_of: Callable[[int], int],
    names: Callable[[int], str],
    totals: Sequence[int],
    previous: game_pb2.View | None,
) -> game_pb2.View:
    """The position a ``deal_started`` event describes (nobody has played yet)."""
    d = e.deal_started
    n = len(d.hand_sizes) or players
    v = game_pb2.View(
        players=n,
        game_number=e.game_number,
        deal_number=d.deal_number,
        round=1,
        dealer=d.dealer,
        to_move=(d.dealer + 1) % n,
        table=list(d.table),
        stock_count=d.stock_count,
        event_sequence=e.sequence,
    )
    old = {s.seat: s for s in previous.seats} if previous is not None else {}
    for seat in range(n):
        count = d.hand_sizes[seat] if seat < len(d.hand_sizes) else 3
        connected = old[seat].connected if seat in old else True
        v.seats.add(
            seat=seat, side=side_of(seat), name=names(seat), hand_count=count, connected=connected
        )
    for side in sorted({side_of(s) for s in range(n)}):
        seats = [s for s in range(n) if side_of(s) == side]
        total = totals[side] if side < len(totals) else 0
        v.sides.add(side=side, seats=seats, game_total=total)
    return v


def fold_event(v: game_pb2.View, e: events_pb2.Event) -> None:
    """Apply ``e``'s public effect to ``v`` in place (``deal_started`` excepted: see
    ``new_deal_view``)."""
    kind = e.WhichOneof("body")
    v.event_sequence = max(v.event_sequence, e.sequence)
    if kind == "dealer_bonus":
        b = e.dealer_bonus
        side = _side(v, b.side)
        if side is not None:
            side.captured.extend(b.cards)
            side.scope += b.scope
        _replace(v.table, _without(v.table, b.cards))
        v.last_taker_side = b.side
    elif kind == "declaration":
        d = e.declaration
        seat = _seat(v, d.seat)
        if seat is not None:
            _replace(seat.declared_cards, d.cards)
        side = _side(v, d.side)
        if side is not None:
            side.scope += d.scope
        if d.HasField("wild_value"):
            v.wild_value = d.wild_value
    elif kind == "card_played":
        p = e.card_played
        seat = _seat(v, p.seat)
        if seat is not None:
            seat.hand_count = max(0, seat.hand_count - 1)
            _replace(seat.declared_cards, _without(seat.declared_cards, [p.card]))
        if p.captured:
            _replace(v.table, _without(v.table, p.captured))
            side = _side(v, p.side)
            if side is not None:
                side.captured.extend([*p.captured, p.card])
                side.scope += 1 if p.scopa else 0
            v.last_taker_side = p.side
        else:
            v.table.append(p.card)
        v.to_move = (p.seat + 1) % max(1, v.players)
    elif kind == "round_dealt":
        r = e.round_dealt
        v.round = r.round
        v.stock_count = r.stock_count
        for seat_no, count in enumerate(r.hand_sizes):
            seat = _seat(v, seat_no)
            if seat is not None:
                seat.hand_count = count
    elif kind == "last_take":
        lt = e.last_take
        if lt.HasField("side"):
            side = _side(v, lt.side)
            if side is not None:
                side.captured.extend(lt.cards)
            _replace(v.table, _without(v.table, lt.cards))
        v.ClearField("to_move")
    elif kind == "deal_scored":
        # the deal is over: its sides' game totals are the new ones (the next deal's View
        # would say so too), so a final screen's totals agree with the score
        for side in v.sides:
            if side.side < len(e.deal_scored.totals):
                side.game_total = e.deal_scored.totals[side.side]
        v.ClearField("to_move")
    elif kind == "game_over":
        v.ClearField("to_move")
    elif kind in ("player_disconnected", "player_reconnected"):
        which = e.player_disconnected.seat if kind == "player_disconnected" else None
        seat = _seat(v, which if which is not None else e.player_reconnected.seat)
        if seat is not None:
            seat.connected = kind == "player_reconnected"


def cards_accounted(v: game_pb2.View) -> int:
    """Hands, table, stock and every side's captures: 40 in a consistent position."""
    return (
        sum(s.hand_count for s in v.seats)
        + len(v.table)
        + v.stock_count
        + sum(len(s.captured) for s in v.sides)
    )
