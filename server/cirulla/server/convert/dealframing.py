"""The events of a deal's start and end written as protobuf bytes by hand (``framing``'s
way), once, when they are published.

A deal starts (``DealStarted``, or a ``Redeal``) and ends (``LastTake``, ``DealScored``,
maybe a ``DealerBonus`` and declarations) with a handful of events that protobuf built
field by field as messages in the stream writer: about a tenth of a decision's Python
for events that come once in some twenty decisions. Written here from the events' own
fields, exactly as protobuf writes them (the field numbers of events.proto and
game.proto; tests/server/test_framing_native.py compares every event of whole matches
with protobuf's bytes); ``GameEnded``, once a game, is left to protobuf.
"""

from __future__ import annotations

from cirulla.rules.events import DealerBonus, DealScored, DealStarted, Declared, Event, LastTake
from cirulla.rules.events import Redeal as RedealEvent
from cirulla.rules.options import seats_of_side
from cirulla.server.convert.framing import (
    _event_frame,
    cards_field,
    message_field,
    optional_uint,
    packed_uints,
    uint_field,
)
from cirulla.server.messages import EventExtras
from cirulla.v1 import events_pb2
from cirulla.wire import DECLARATION_KINDS_PB

_FIELD = {name: f.number for name, f in events_pb2.Event.DESCRIPTOR.fields_by_name.items()}
_DEAL_STARTED, _REDEAL = _FIELD["deal_started"], _FIELD["redeal"]
_DEALER_BONUS, _DECLARATION = _FIELD["dealer_bonus"], _FIELD["declaration"]
_LAST_TAKE, _DEAL_SCORED = _FIELD["last_take"], _FIELD["deal_scored"]
#: SideScore's bool ``cappotto`` (field 15) when true.
_CAPPOTTO = bytes([15 << 3, 1])


def _deal_scored(e: DealScored, game_number: int, extras: EventExtras, players: int) -> bytes:
    """DealResult: game_number = 1, deal_number = 2, scores = 3 (SideScore: side = 1,
    seats = 2, card_count = 3, coin_count = 4, primiera_value = 5, cards = 6, coins = 7,
    settebello = 8, primiera = 9, scope = 10, grande = 11, piccola = 12, total = 13,
    game_total = 14, cappotto = 15), totals = 4, cappotto_side = 5 (optional); as
    ``live.deal_result_pb``."""
    score = e.score
    cap = score.cappotto
    totals = list(e.totals)
    counts = extras.get("counts")
    parts = [uint_field(1, game_number), uint_field(2, e.deal)]
    for side, s in enumerate(score.sides):
        card_count, coin_count, primiera_value = (
            counts[side] if counts and side < len(counts) else (0, 0, 0)
        )
        body = b"".join(
            (
                uint_field(1, side),
                packed_uints(2, seats_of_side(side, players)),
                uint_field(3, card_count),
                uint_field(4, coin_count),
                uint_field(5, primiera_value),
                uint_field(6, s.cards),
                uint_field(7, s.coins),
                uint_field(8, s.settebello),
                uint_field(9, s.primiera),
                uint_field(10, s.scope),
                uint_field(11, s.grande),
                uint_field(12, s.piccola),
                uint_field(13, s.total),
                uint_field(14, totals[side]),
                _CAPPOTTO if cap == side else b"",
            )
        )
        parts.append(message_field(3, body))
    parts.append(packed_uints(4, totals))
    parts.append(optional_uint(5, cap))
    return message_field(_DEAL_SCORED, b"".join(parts))


def deal_frame(
    sequence: int,
    game_number: int,
    deal_number: int,
    e: Event,
    private_to: int | None,
    extras: EventExtras,
    players: int,
) -> bytes | None:
    """PlayResponse{event} of a deal's start or end, serialized (as
    ``live._play_response`` of the ``EventMsg`` these would make); None for any other
    event."""
    if type(e) is DealStarted:
        body = message_field(
            _DEAL_STARTED,
            uint_field(1, e.deal)
            + uint_field(2, e.dealer)
            + cards_field(3, e.table)
            + packed_uints(4, e.hand_sizes)
            + uint_field(5, extras.get("stock_count", 0)),
        )
    elif type(e) is RedealEvent:
        body = message_field(
            _REDEAL,
            uint_field(1, e.deal)
            + uint_field(2, e.dealer)
            + cards_field(3, e.table)
            + uint_field(4, extras.get("attempt", 1)),
        )
    elif type(e) is DealerBonus:
        body = message_field(
            _DEALER_BONUS,
            uint_field(1, e.dealer)
            + uint_field(2, e.side)
            + cards_field(3, e.cards)
            + uint_field(4, e.scope),
        )
    elif type(e) is Declared:
        body = message_field(
            _DECLARATION,
            uint_field(1, e.seat)
            + uint_field(2, e.side)
            + uint_field(3, DECLARATION_KINDS_PB[e.kind])
            + cards_field(4, e.cards)
            + optional_uint(5, e.wild_value)
            + uint_field(6, e.points),
        )
    elif type(e) is LastTake:
        body = message_field(_LAST_TAKE, optional_uint(1, e.side) + cards_field(2, e.cards))
    elif type(e) is DealScored:
        body = _deal_scored(e, game_number, extras, players)
    else:
        return None
    return _event_frame(sequence, game_number, deal_number, private_to, body)
