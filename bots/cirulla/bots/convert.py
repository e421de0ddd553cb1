"""Protocol messages -> rules-core objects, on the client side: what only a bot decodes.

A bot thinks in ``cirulla.rules`` terms (int cards, masks, ``View``, ``Action``); the wire
speaks ``cirulla.v1`` messages. Cards, actions and rule options cross over through
``cirulla.wire`` (the implementation the server encodes with); this module adds what is
the bot's own: the numbered legal actions, the seat's view and its clock. Bad input
raises ``ProtocolDataError`` naming the field that was wrong.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from cirulla.rules.actions import Action
from cirulla.rules.core import fast_constructor
from cirulla.rules.options import Options
from cirulla.rules.views import View
from cirulla.v1 import game_pb2, play_pb2
from cirulla.wire import CARD_MESSAGES, WireError, action_from_proto, mask_from_proto

if TYPE_CHECKING:  # the native reader's view fields (its stub)
    from cirulla.bots._decode import ViewFields

try:  # the decision reader in C (bots/cirulla/bots/_decode.c), when it was built
    from cirulla.bots import _decode as _native
except ImportError:  # no C compiler: decisions are read in Python
    _native = None  # type: ignore[assignment]  # every use tests `_native is None`
else:
    _native.setup(tuple(card.SerializeToString() for card in CARD_MESSAGES))
#: The native reader, set up (the cards as the server writes them), for the kit's stream
#: (``kit_stream``); None when it was not built.
native_reader = _native

#: ``View(...)`` with every field given positionally, in order: the native core fills the
#: slots directly (the frozen dataclass's ``__init__`` cost a bot 30k instructions a
#: decision); ``View`` itself on the Python core.
_make_view = fast_constructor(View)

#: A message from the server that cannot be turned into rules-core objects (the wire
#: module's error: one type whether a card, an action or a view was wrong).
ProtocolDataError = WireError


def decision_from_proto(
    request: play_pb2.DecisionRequest, options: Options
) -> tuple[View, list[Action]]:
    """A decision request's view and numbered legal actions (``view_from_proto`` and
    ``legal_from_proto``), what the kit hands a policy at every decision.

    Read from the message's bytes in one call when the native reader is built: through
    protobuf's objects, every card of every pile is a message with three attributes read,
    which cost a bot more than its policy's choice (docs/performance-log.md, "A tournament's
    CPU per game"). Anything the native reader does not read as the server writes it
    (and every error, which it leaves to this reader to name) is read in Python."""
    if _native is not None:
        got = _native.decision(request.SerializeToString())
        if got is not None:
            read = decision_from_fields(*got, options)
            if read is not None:
                return read
    return view_from_proto(request.view, options), legal_from_proto(request.legal_actions)


def decision_from_fields(
    fields: ViewFields, codes: list[int], options: Options
) -> tuple[View, list[Action]] | None:
    """The native reader's view fields and legal action codes as ``decision_from_proto``
    gives them; None where ``view_from_proto`` would refuse them (it then names the
    field)."""
    players, hand_sizes, sides = fields[4], fields[9], fields[16]
    if (players or options.players) != options.players:
        return None
    if len(hand_sizes) != options.players or sides != options.sides:
        return None
    # The reader's fields are View's, in View's order, but for ``players`` (4: the options
    # say it) and ``sides`` (16); View's ``options`` comes second and ``winner`` last
    # (None: a decision's game goes on).
    view = _make_view(fields[0], options, *fields[1:4], *fields[5:16], None)
    return view, list(map(Action.from_int, codes))


def legal_from_proto(legal: Sequence[game_pb2.LegalAction]) -> list[Action]:
    """The numbered legal actions, in index order (index i is list position i)."""
    actions: list[Action | None] = [None] * len(legal)
    for pos, item in enumerate(legal):
        index = item.index
        if index >= len(legal) or actions[index] is not None:
            raise ProtocolDataError(
                f"legal_actions[{pos}].index", f"{index} is out of range or repeated"
            )
        actions[index] = action_from_proto(item.action, f"legal_actions[{pos}].action")
    if not actions:
        raise ProtocolDataError("legal_actions", "a decision request must offer an action")
    return [a for a in actions if a is not None]


def view_from_proto(view: game_pb2.View, options: Options) -> View:
    """A seat's wire view as a rules-core ``View`` (``options`` from ``NewGame.rules``)."""
    players = view.players or options.players
    if players != options.players:
        raise ProtocolDataError("view.players", f"{players}, but the rules say {options.players}")
    if len(view.seats) != players:
        raise ProtocolDataError("view.seats", f"{len(view.seats)} entries for {players} players")
    if len(view.sides) != options.sides:
        raise ProtocolDataError(
            "view.sides", f"{len(view.sides)} entries for {options.sides} sides"
        )
    seat = view.seat if view.HasField("seat") else None
    return View(
        seat=seat,
        options=options,
        deal=view.deal_number,
        dealer=view.dealer,
        round=view.round,
        to_move=view.to_move if view.HasField("to_move") else None,
        hand=mask_from_proto(view.hand, "view.hand"),
        table=mask_from_proto(view.table, "view.table"),
        wild_value=view.wild_value if view.HasField("wild_value") else 0,
        hand_sizes=tuple(s.hand_count for s in view.seats),
        declared=tuple(
            mask_from_proto(s.declared_cards, f"view.seats[{i}].declared_cards")
            for i, s in enumerate(view.seats)
        ),
        captured=tuple(
            mask_from_proto(s.captured, f"view.sides[{i}].captured")
            for i, s in enumerate(view.sides)
        ),
        scope=tuple(s.scope for s in view.sides),
        stock=view.stock_count,
        totals=tuple(s.game_total for s in view.sides),
        last_taker=view.last_taker_side if view.HasField("last_taker_side") else None,
        winner=None,
    )


def clock_seconds(clock: game_pb2.Clock) -> tuple[float | None, float | None]:
    """(move time left, bank time left) in seconds; None where there is no such limit."""
    move = clock.move_time_left_ms if clock.HasField("move_time_left_ms") else None
    bank = clock.bank_time_left_ms if clock.HasField("bank_time_left_ms") else None
    return ms_seconds(move, bank)


def ms_seconds(move_ms: int | None, bank_ms: int | None) -> tuple[float | None, float | None]:
    """``clock_seconds`` of a clock's times left given in milliseconds (the native
    reader's): None where there is no such limit."""
    return (
        None if move_ms is None else move_ms / 1000,
        None if bank_ms is None else bank_ms / 1000,
    )
