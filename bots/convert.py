"""Protocol messages -> rules-core objects, on the client side: the kit's one translator.

A bot thinks in ``cirulla.rules`` terms (int cards, masks, ``View``, ``Action``); the wire
speaks ``cirulla.v1`` messages. Everything that crosses over goes through here, and bad
input raises ``ProtocolDataError`` naming the field that was wrong.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from cirulla.rules.actions import Action, Declaration, DeclarationKind
from cirulla.rules.cards import CARD_NAMES, card_suit, card_value, make_card, parse_card
from cirulla.rules.errors import CardError, CirullaError
from cirulla.rules.options import Options
from cirulla.rules.views import View
from cirulla.v1 import cards_pb2, game_pb2, rules_pb2


class ProtocolDataError(ValueError):
    """A message from the server that cannot be turned into rules-core objects."""


def card_from_proto(card: cards_pb2.Card, field: str = "card") -> int:
    """A wire card (``code``, or ``suit`` + ``rank``) as a rules-core int."""
    try:
        if card.code:
            return parse_card(card.code)
        if not 1 <= card.suit <= 4 or not 1 <= card.rank <= 10:
            raise CardError(f"suit {card.suit} / rank {card.rank} is not a card")
        return make_card(card.rank, card.suit - 1)
    except CardError as exc:
        raise ProtocolDataError(f"{field}: {exc}") from None


def card_to_proto(card: int) -> cards_pb2.Card:
    return cards_pb2.Card(suit=card_suit(card) + 1, rank=card_value(card), code=CARD_NAMES[card])


def mask_from_proto(cards: Iterable[cards_pb2.Card], field: str) -> int:
    mask = 0
    for card in cards:
        c = card_from_proto(card, field)
        if mask >> c & 1:
            raise ProtocolDataError(f"{field}: {CARD_NAMES[c]} is listed twice")
        mask |= 1 << c
    return mask


def options_from_proto(rules: rules_pb2.RuleOptions, base: Options | None = None) -> Options:
    """Rule options in force (``NewGame.rules`` has every field set; unset keeps ``base``)."""
    overrides = {field.name: value for field, value in rules.ListFields()}
    try:
        return (base or Options()).with_overrides(**overrides)
    except CirullaError as exc:
        raise ProtocolDataError(f"rules: {exc}") from None


def action_from_proto(action: game_pb2.Action, field: str = "action") -> Action:
    card = card_from_proto(action.card, f"{field}.card")
    capture = mask_from_proto(action.captures, f"{field}.captures")
    declaration = None
    if action.declaration:
        try:
            kind = DeclarationKind(action.declaration)
        except ValueError:
            raise ProtocolDataError(
                f"{field}.declaration: unknown declaration kind {action.declaration}"
            ) from None
        wild = action.wild_value if action.HasField("wild_value") else None
        if wild is not None and not 1 <= wild <= 10:
            raise ProtocolDataError(f"{field}.wild_value: {wild} is not a value 1..10")
        declaration = Declaration(kind, wild)
    try:
        return Action(card, capture, declaration)
    except CirullaError as exc:
        raise ProtocolDataError(f"{field}: {exc}") from None


def action_to_proto(action: Action) -> game_pb2.Action:
    msg = game_pb2.Action(
        card=card_to_proto(action.card),
        captures=[card_to_proto(c) for c in action.captured],
    )
    if action.declaration is not None:
        msg.declaration = int(action.declaration.kind)
        if action.declaration.wild_value is not None:
            msg.wild_value = action.declaration.wild_value
    return msg


def legal_from_proto(legal: Sequence[game_pb2.LegalAction]) -> list[Action]:
    """The numbered legal actions, in index order (index i is list position i)."""
    actions: list[Action | None] = [None] * len(legal)
    for pos, item in enumerate(legal):
        index = item.index
        if index >= len(legal) or actions[index] is not None:
            raise ProtocolDataError(
                f"legal_actions[{pos}].index: {index} is out of range or repeated"
            )
        actions[index] = action_from_proto(item.action, f"legal_actions[{pos}].action")
    if not actions:
        raise ProtocolDataError("legal_actions: a decision request must offer an action")
    return [a for a in actions if a is not None]


def view_from_proto(view: game_pb2.View, options: Options) -> View:
    """A seat's wire view as a rules-core ``View`` (``options`` from ``NewGame.rules``)."""
    players = view.players or options.players
    if players != options.players:
        raise ProtocolDataError(f"view.players: {players}, but the rules say {options.players}")
    if len(view.seats) != players:
        raise ProtocolDataError(f"view.seats: {len(view.seats)} entries for {players} players")
    if len(view.sides) != options.sides:
        raise ProtocolDataError(f"view.sides: {len(view.sides)} entries for {options.sides} sides")
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
    move = clock.move_time_left_ms / 1000 if clock.HasField("move_time_left_ms") else None
    bank = clock.bank_time_left_ms / 1000 if clock.HasField("bank_time_left_ms") else None
    return move, bank
