"""The hot messages of a Play stream written as protobuf bytes from cached pieces.

A decision request (the seat's view and its legal actions), an acceptance and a played
card are most of what a game sends. Building them as protobuf objects field by field,
then serializing, cost the server more per decision than the rules; their parts repeat
endlessly (the same 40 cards, the same few hundred legal actions, the same seat and side
states), so each part is serialized once by protobuf itself and cached as bytes, and a
message is the concatenation of its fields in field-number order, exactly as protobuf
writes it (tests/server/test_framing.py checks the bytes against protobuf's for whole games).

When the native writer (``_framing.c``) is built, a decision request, an acceptance, the
events of every round (a played card, a hand and a round dealt) and a stream message of
such framed messages (``batch``) are written there, each in one call; the Python writers
here stay the fallback and the reference (tests/server/test_framing_native.py). A deal's
start and end are written in ``dealframing``.

Wire format used here (protobuf encoding): a field is its tag ``number << 3 | wire type``
as a varint, then a varint (type 0) or a length and that many bytes (type 2). proto3
fields without presence are left out when zero; ``optional`` ones are written whenever
set.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TypeVar

from cirulla.rules.actions import Action
from cirulla.rules.cards import CARD_NAMES, WILD
from cirulla.rules.events import CardPlayed, Event, HandDealt, RoundDealt
from cirulla.rules.game import Game
from cirulla.rules.options import seats_of_side
from cirulla.server.messages import (
    AcceptedMsg,
    ClockState,
    DecisionMsg,
    EventExtras,
    EventMsg,
    SeatPublic,
    ViewMsg,
)
from cirulla.v1 import events_pb2, game_pb2
from cirulla.wire import CARD_MESSAGES, DECLARATION_KINDS_PB, cards_to_proto

# The decision request written in C from the game's state (an optional extension, typed
# by its stub _framing.pyi); without it (no compiler at install) the Python writer below.
try:
    from cirulla.server.convert import _framing as native
except ImportError:
    native = None  # type: ignore[assignment]  # every use tests `native is None`
#: What this file calls of the native writer: a build older than it (an editable install
#: not rebuilt after a pull) lacks some, and is then not used at all (the Python writers).
NATIVE_NAMES = (
    "setup",
    "decision",
    "notation",
    "submit_index",
    "card_played",
    "hand_dealt",
    "round_dealt",
    "accepted",
    "batch",
    "play_request",
)
if native is not None and not all(hasattr(native, name) for name in NATIVE_NAMES):
    native = None  # type: ignore[assignment]

_VARINTS: tuple[bytes, ...]
_T = TypeVar("_T")


def _make_varint(n: int) -> bytes:
    out = bytearray()
    while n > 0x7F:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


_VARINTS = tuple(_make_varint(n) for n in range(1 << 14))


def varint(n: int) -> bytes:
    """``n`` (0 or more) as a protobuf varint."""
    return _VARINTS[n] if n < 16384 else _make_varint(n)


def _tag(number: int, wire_type: int) -> bytes:
    return varint(number << 3 | wire_type)


# The tags of field numbers 0..63, varint (wire type 0) and length-delimited (2): every
# message written here has its fields below 64.
_TAG0 = tuple(_tag(n, 0) for n in range(64))
_TAG2 = tuple(_tag(n, 2) for n in range(64))


def uint_field(number: int, value: int) -> bytes:
    """A varint field without presence: nothing when 0."""
    if not value:
        return b""
    return _TAG0[number] + (_VARINTS[value] if value < 16384 else _make_varint(value))


def optional_uint(number: int, value: int | None) -> bytes:
    """A varint field with presence (``optional``): written whenever not None."""
    if value is None:
        return b""
    return _TAG0[number] + (_VARINTS[value] if value < 16384 else _make_varint(value))


def message_field(number: int, payload: bytes) -> bytes:
    """A length-delimited field (an embedded message, a string, bytes)."""
    size = len(payload)
    return _TAG2[number] + (_VARINTS[size] if size < 16384 else _make_varint(size)) + payload


_CARD_BYTES = tuple(m.SerializeToString() for m in CARD_MESSAGES)


@functools.lru_cache(maxsize=64)
def _card_entries(number: int) -> tuple[bytes, ...]:
    """Each of the 40 cards as one entry of the repeated Card field ``number``."""
    tag = _tag(number, 2)
    return tuple(tag + varint(len(b)) + b for b in _CARD_BYTES)


@functools.lru_cache(maxsize=16384)
def cards_field(number: int, mask: int) -> bytes:
    """A repeated Card field holding the cards of ``mask``, ascending."""
    entries = _card_entries(number)
    parts = []
    while mask:
        low = mask & -mask
        parts.append(entries[low.bit_length() - 1])
        mask ^= low
    return b"".join(parts)


def packed_uints(number: int, values: tuple[int, ...] | list[int]) -> bytes:
    """A repeated uint32 field (packed, as proto3 writes it): nothing when empty."""
    if not values:
        return b""
    return message_field(number, b"".join([varint(v) for v in values]))


@functools.lru_cache(maxsize=32768)
def _legal_body(code: int) -> bytes:
    """A LegalAction's fields after ``index`` (its action and notation) for ``code``:
    the same whatever the action's place in the list, so cached by code alone.

    LegalAction: action = 2, notation = 3; Action: card = 1, captures = 2 (repeated Card),
    declaration = 3 (enum), wild_value = 4 (optional), as ``wire.action_to_proto``."""
    action = Action.from_int(code)
    body = message_field(1, _CARD_BYTES[action.card]) + cards_field(2, action.capture)
    declaration = action.declaration
    if declaration is not None:
        body += uint_field(3, DECLARATION_KINDS_PB[declaration.kind])
        body += optional_uint(4, declaration.wild_value)
    text = str(action).encode()  # wire.notation
    return message_field(2, body) + (message_field(3, text) if text else b"")


def _legal_actions(codes: tuple[int, ...] | list[int]) -> bytes:
    """DecisionRequest.legal_actions (field 3), one entry per code, index = position."""
    parts = []
    for index, code in enumerate(codes):
        body = _legal_body(code)
        if index:  # LegalAction.index is field 1: it comes before the cached fields
            body = _T1 + varint(index) + body
        parts.append(_F3 + varint(len(body)) + body)
    return b"".join(parts)


@functools.lru_cache(maxsize=4096)
def _seat_state(
    seat: int, side: int, name: str, hand_count: int, declared: int, connected: bool
) -> bytes:
    """View.seats (field 11) entry."""
    return message_field(
        11,
        game_pb2.SeatState(
            seat=seat,
            side=side,
            name=name,
            hand_count=hand_count,
            declared_cards=cards_to_proto(declared),
            connected=connected,
        ).SerializeToString(),
    )


@functools.lru_cache(maxsize=4096)
def _side_state(players: int, side: int, captured: int, scope: int, total: int) -> bytes:
    """View.sides (field 12) entry: a side's pile changes only when it captures.

    SideState: side = 1, seats = 2 (packed), captured = 3, scope = 4, game_total = 5."""
    return message_field(
        12,
        uint_field(1, side)
        + packed_uints(2, seats_of_side(side, players))
        + cards_field(3, captured)
        + uint_field(4, scope)
        + uint_field(5, total),
    )


# The View's varint fields' tags (game.proto), and the field values as bytes.
_V = _VARINTS
_T1, _T2, _T3, _T4, _T5, _T6, _T7 = (bytes([n << 3]) for n in range(1, 8))
_T10, _T13, _T14, _T15 = (bytes([n << 3]) for n in (10, 13, 14, 15))
#: DecisionRequest.legal_actions' tag (field 3, length-delimited).
_F3 = bytes([3 << 3 | 2])


def view_bytes(msg: ViewMsg) -> bytes:
    """The serialized View of ``msg`` (as ``live.view_pb(msg).SerializeToString()``)."""
    v = msg.view
    options = v.options
    players = options.players
    seats = msg.seats
    hand_sizes, declared = v.hand_sizes, v.declared
    captured, scope, totals = v.captured, v.scope, v.totals
    parts = [
        b"" if v.seat is None else _T1 + _V[v.seat],
        _T2 + _V[players],
        _T3 + varint(msg.game_number) if msg.game_number else b"",
        _T4 + varint(v.deal) if v.deal else b"",
        _T5 + _V[v.round] if v.round else b"",
        _T6 + _V[v.dealer] if v.dealer else b"",
        b"" if v.to_move is None else _T7 + _V[v.to_move],
        cards_field(8, v.hand),
        cards_field(9, v.table),
        _T10 + _V[v.wild_value] if v.wild_value else b"",
    ]
    for s in range(players):
        info = seats[s]
        parts.append(
            _seat_state(s, info.side, info.name, hand_sizes[s], declared[s], info.connected)
        )
    for side in range(options.sides):
        parts.append(_side_state(players, side, captured[side], scope[side], totals[side]))
    if v.stock:
        parts.append(_T13 + _V[v.stock])
    if v.last_taker is not None:
        parts.append(_T14 + _V[v.last_taker])
    if msg.sequence:
        parts.append(_T15 + varint(msg.sequence))
    return b"".join(parts)


def _clock_bytes(clock: ClockState | None) -> bytes:
    if clock is None:
        return b""
    return (
        optional_uint(1, clock.move_left_ms)
        + optional_uint(2, clock.bank_left_ms)
        + optional_uint(3, clock.increment_ms)
    )


def decision_response(msg: DecisionMsg) -> bytes:
    """PlayResponse{decision_request} (field 6), serialized."""
    if msg.framed is not None:
        return msg.framed
    assert msg.view is not None
    body = b"".join(
        (
            uint_field(1, msg.decision_id),
            message_field(2, view_bytes(msg.view)),
            _legal_actions(msg.legal_codes),
            message_field(4, _clock_bytes(msg.clock)),
            uint_field(5, msg.default_index),
        )
    )
    return message_field(6, body)


#: A seat as the native writer reads it: side, name (UTF-8), connected.
SeatWire = tuple[int, bytes, bool]


def seat_wire(seats: tuple[SeatPublic, ...]) -> tuple[SeatWire, ...]:
    """The seats' public part as ``decision_frame`` takes it (built once per change)."""
    return tuple((s.side, s.name.encode(), s.connected) for s in seats)


def decision_frame(
    game: Game,
    seat: int,
    decision_id: int,
    codes: list[int],
    game_number: int,
    sequence: int,
    seats: tuple[SeatPublic, ...],
    wire_seats: tuple[SeatWire, ...],
    clock: ClockState,
    *,
    python: bool = False,
) -> bytes:
    """PlayResponse{decision_request} for ``seat``'s decision on ``game`` as it stands:
    ``decision_response`` of the ``DecisionMsg`` the publisher would build, in one call
    to the native writer when it is built (``python``: the Python writer regardless).
    ``wire_seats`` is ``seat_wire(seats)``."""
    if native is not None and not python:
        return native.decision(
            game,
            seat,
            decision_id,
            codes,
            game_number,
            sequence,
            wire_seats,
            (clock.move_left_ms, clock.bank_left_ms, clock.increment_ms),
            0,
        )
    view = ViewMsg(game.view(seat), game_number, sequence, seats)
    return decision_response(DecisionMsg(decision_id, view, tuple(codes), clock, 0))


@functools.lru_cache(maxsize=8192)
def _python_notation(code: int) -> str:
    return str(Action.from_int(code))


#: The notation of an action code (``str(Action.from_int(code))``): in C when the decision
#: writer is built (nothing cached, nothing to miss), else cached.
notation: Callable[[int], str] = _python_notation if native is None else native.notation


def _no_submit_index(data: bytes) -> tuple[int, int] | None:
    return None


#: ``(decision_id, legal_action_index)`` of a serialized PlayRequest that is a
#: SubmitAction by index and nothing else (what a bot sends at every decision), read in C
#: without building protobuf's objects; None for any other frame, and always without the
#: native writer: protobuf reads those (``service._play_request``).
submit_index: Callable[[bytes], tuple[int, int] | None] = (
    _no_submit_index if native is None else native.submit_index
)


def _no_batch(msgs: Sequence[object]) -> bytes | None:
    return None


#: One stream message of consecutive messages that were all written when they were made
#: (their ``framed`` bytes: a move's acceptance, events and next decision), in one native
#: call: the one's bytes, or their PlayResponse.batch; None if one has no bytes, and
#: always without the native writer (``live.play_responses`` writes them).
batch: Callable[[Sequence[object]], bytes | None] = _no_batch if native is None else native.batch

#: The native writer of a played card, for the publisher's hot path (every move's event;
#: None without it: ``event_frame`` writes it).
native_card_played = None if native is None else native.card_played


def play_deserializer(
    fallback: Callable[[bytes], _T],
) -> Callable[[bytes], tuple[int, int] | _T]:
    """A Play stream's request deserializer: ``submit_index(data)``, or ``fallback(data)``
    for any other frame; one native call when the writer is built."""
    if native is None:
        return fallback
    return functools.partial(native.play_request, fallback)


if native is not None:
    # the writer's declaration kinds are the codes' (actions.DeclarationKind)
    assert all(int(kind) == pb for kind, pb in DECLARATION_KINDS_PB.items())
    native.setup(_CARD_BYTES, tuple(name.encode() for name in CARD_NAMES))


def accepted_response(msg: AcceptedMsg) -> bytes:
    """PlayResponse{action_accepted} (field 7), serialized."""
    return accepted_frame(msg.decision_id, msg.index, msg.elapsed_ms)


def _accepted_frame(decision_id: int, index: int, elapsed_ms: int) -> bytes:
    return message_field(
        7, uint_field(1, decision_id) + uint_field(2, index) + uint_field(3, elapsed_ms)
    )


#: ``accepted_response`` of the ``AcceptedMsg`` these would make (in C when built).
accepted_frame: Callable[[int, int, int], bytes] = (
    _accepted_frame if native is None else native.accepted
)


#: Event.card_played's field number (events.proto).
_CARD_PLAYED_FIELD = events_pb2.Event.DESCRIPTOR.fields_by_name["card_played"].number
_CP = events_pb2.CardPlayed.DESCRIPTOR.fields_by_name


@functools.lru_cache(maxsize=16384)
def _card_played_body(
    seat: int,
    side: int,
    card: int,
    captured: int,
    scopa: bool,
    ace_sweep: bool,
    notation: str,
    by_timeout: bool,
    wild_value: int | None,
) -> bytes:
    """Event.card_played, written by hand: CardPlayed's seat = 1, side = 2, card = 3,
    captured = 4 (repeated Card), scopa = 5, ace_sweep = 6, wild_value = 7 (optional),
    notation = 8, by_timeout = 9 (bools as varints, left out when false)."""
    text = notation.encode()
    body = b"".join(
        (
            uint_field(1, seat),
            uint_field(2, side),
            message_field(3, _CARD_BYTES[card]),
            cards_field(4, captured),
            _TRUE5 if scopa else b"",
            _TRUE6 if ace_sweep else b"",
            optional_uint(7, wild_value),
            message_field(8, text) if text else b"",
            _TRUE9 if by_timeout else b"",
        )
    )
    return message_field(_CARD_PLAYED_FIELD, body)


_TRUE5, _TRUE6, _TRUE9 = (bytes([n << 3, 1]) for n in (5, 6, 9))


def _event_frame(
    sequence: int, game_number: int, deal_number: int, private_to: int | None, body: bytes
) -> bytes:
    """PlayResponse{event} (field 4): the Event's header fields, then its body field."""
    return message_field(
        4,
        b"".join(
            (
                uint_field(1, sequence),
                uint_field(2, game_number),
                uint_field(3, deal_number),
                optional_uint(4, private_to),
                body,
            )
        ),
    )


def _event_response(msg: EventMsg, body: bytes) -> bytes:
    return _event_frame(msg.sequence, msg.game_number, msg.deal_number, msg.private_to, body)


def _card_played(e: CardPlayed, extras: EventExtras) -> bytes:
    """Event.card_played's field of ``e``."""
    return _card_played_body(
        e.seat,
        e.side,
        e.card,
        e.captured,
        e.scopa,
        e.ace_sweep,
        extras.get("notation", ""),
        extras.get("by_timeout", False),
        e.value if e.card == WILD and e.value != 7 else None,
    )


def card_played_response(msg: EventMsg) -> bytes | None:
    """PlayResponse{event} (field 4) of a played card, serialized; None for any other
    event (``event_response`` frames the other frequent ones)."""
    e = msg.event
    if type(e) is not CardPlayed:
        return None
    return _event_response(msg, _card_played(e, msg.extras))


#: Event.hand_dealt's and Event.round_dealt's field numbers (events.proto).
_HAND_DEALT_FIELD = events_pb2.Event.DESCRIPTOR.fields_by_name["hand_dealt"].number
_ROUND_DEALT_FIELD = events_pb2.Event.DESCRIPTOR.fields_by_name["round_dealt"].number


def event_response(msg: EventMsg) -> bytes | None:
    """PlayResponse{event} of the events of every round (a played card, a hand dealt, a
    round dealt), serialized; None for the others (once a deal or rarer: protobuf builds
    them)."""
    return event_frame(
        msg.sequence, msg.game_number, msg.deal_number, msg.event, msg.private_to, msg.extras
    )


def event_frame(
    sequence: int,
    game_number: int,
    deal_number: int,
    e: Event,
    private_to: int | None,
    extras: EventExtras,
    *,
    python: bool = False,
) -> bytes | None:
    """``event_response`` of the ``EventMsg`` these would make: what the publisher writes
    once, when it publishes an event (``EventMsg.framed``), for every seat that gets it;
    by the native writer when it is built (``python``: the Python writer regardless).

    HandDealt: seat = 1, round = 2, cards = 3; RoundDealt: round = 1, hand_sizes = 2
    (packed), stock_count = 3."""
    if native is not None and not python:
        if type(e) is HandDealt:
            return native.hand_dealt(
                sequence, game_number, deal_number, private_to, e.seat, e.round, e.hand
            )
        if type(e) is RoundDealt:
            return native.round_dealt(
                sequence, game_number, deal_number, private_to, e.round, e.hand_sizes, e.stock
            )
    if type(e) is CardPlayed:
        if native is not None and not python:
            return native.card_played(
                e,
                sequence,
                game_number,
                deal_number,
                private_to,
                extras.get("notation", ""),
                extras.get("by_timeout", False),
            )
        body = _card_played(e, extras)
    elif type(e) is HandDealt:
        body = message_field(
            _HAND_DEALT_FIELD,
            uint_field(1, e.seat) + uint_field(2, e.round) + cards_field(3, e.hand),
        )
    elif type(e) is RoundDealt:
        body = message_field(
            _ROUND_DEALT_FIELD,
            uint_field(1, e.round) + packed_uints(2, e.hand_sizes) + uint_field(3, e.stock),
        )
    else:
        return None
    return _event_frame(sequence, game_number, deal_number, private_to, body)
