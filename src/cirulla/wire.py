"""cirulla.v1 messages <-> rules-core values: cards, card sets, actions, rule options.

The server encodes what the bots decode, so both sides share this one implementation: a
card, an action or a rule set means the same thing on either end of the wire, and a new
field is handled in one place. Decoding is strict and every error names the field that
was wrong (``SubmitAction.action.captures[2]: unknown card code 'ZZ'``); callers pass
the field path of the message they decode.

Only values live here. What is specific to one side stays there: the server's events,
views and records (``cirulla.server.convert.*``), the bot's views and clocks
(``cirulla.bots.convert``).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from typing import Any

from cirulla.rules.actions import Action, Declaration, DeclarationKind
from cirulla.rules.cards import CARD_NAMES, card_suit, card_value, cards_of, make_card, parse_card
from cirulla.rules.errors import CirullaError
from cirulla.rules.options import Options, OptionValue
from cirulla.v1 import cards_pb2, events_pb2, game_pb2, rules_pb2

__all__ = [
    "CARD_MESSAGES",
    "OPTION_FIELDS",
    "PRESET_NAMES",
    "WireError",
    "action_from_proto",
    "action_to_proto",
    "card_from_proto",
    "card_to_proto",
    "cards_from_proto",
    "cards_to_proto",
    "mask_from_proto",
    "notation",
    "options_from_proto",
    "options_to_proto",
    "overrides_from_proto",
    "parse_notation",
    "preset_from_proto",
    "preset_to_proto",
    "rules_from_proto",
    "rules_to_proto",
]


class WireError(CirullaError):
    """A message field that is not a valid value; the message starts with the field path.

    A ``CirullaError`` (so a ``ValueError``): whoever already turns bad rules input into
    a clear answer (a rejected action, INVALID_ARGUMENT) handles it the same way.
    """

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}")
        self.field = field
        self.problem = problem


# ---------------------------------------------------------------------- cards

#: The 40 cards as messages, indexed by card: suit, rank and code all set, as the server
#: sends them. Shared and read-only: protobuf copies a message wherever it is assigned.
#: The wire's suits in the rules core's suit order (D, H, C, S) and ranks by value (1..10).
SUITS_PB: tuple[cards_pb2.Suit, ...] = (
    cards_pb2.SUIT_DIAMONDS,
    cards_pb2.SUIT_HEARTS,
    cards_pb2.SUIT_CLUBS,
    cards_pb2.SUIT_SPADES,
)
RANKS_PB: tuple[cards_pb2.Rank, ...] = (
    cards_pb2.RANK_ACE,
    cards_pb2.RANK_TWO,
    cards_pb2.RANK_THREE,
    cards_pb2.RANK_FOUR,
    cards_pb2.RANK_FIVE,
    cards_pb2.RANK_SIX,
    cards_pb2.RANK_SEVEN,
    cards_pb2.RANK_JACK,
    cards_pb2.RANK_QUEEN,
    cards_pb2.RANK_KING,
)
#: The rules core's declaration kinds as the wire's enum values.
DECLARATION_KINDS_PB: dict[DeclarationKind, game_pb2.DeclarationKind] = {
    DeclarationKind.LOW_HAND: game_pb2.DECLARATION_KIND_LOW_HAND,
    DeclarationKind.THREE_OF_A_KIND: game_pb2.DECLARATION_KIND_THREE_OF_A_KIND,
}
_DECLARATION_KINDS = {pb: kind for kind, pb in DECLARATION_KINDS_PB.items()}
#: Why a game ended, as records and the text protocol name it, and as the wire's enum.
GAME_END_REASONS_PB: dict[str, events_pb2.GameEndReason] = {
    "target": events_pb2.GAME_END_REASON_TARGET,
    "cappotto": events_pb2.GAME_END_REASON_CAPPOTTO,
    "forfeit": events_pb2.GAME_END_REASON_FORFEIT,
    "aborted": events_pb2.GAME_END_REASON_ABORTED,
}
#: The wire's game-end reasons by name (``GAME_END_REASONS_PB`` read backwards).
GAME_END_REASON_NAMES: dict[int, str] = {pb: name for name, pb in GAME_END_REASONS_PB.items()}
CARD_MESSAGES: tuple[cards_pb2.Card, ...] = tuple(
    cards_pb2.Card(
        suit=SUITS_PB[card_suit(c)], rank=RANKS_PB[card_value(c) - 1], code=CARD_NAMES[c]
    )
    for c in range(40)
)
# Fast path of the decoder: a card exactly as the server writes it.
_CANONICAL = {(m.suit, m.rank, m.code): c for c, m in enumerate(CARD_MESSAGES)}


def card_to_proto(card: int) -> cards_pb2.Card:
    """The shared, read-only message of ``card`` (copy it before changing it)."""
    return CARD_MESSAGES[card]


@functools.lru_cache(maxsize=8192)
def cards_to_proto(mask: int) -> Sequence[cards_pb2.Card]:
    """The cards of ``mask``, ascending, as shared messages.

    Cached because the same hands, tables and piles are encoded again at every decision.
    """
    return tuple(CARD_MESSAGES[c] for c in cards_of(mask))


def card_from_proto(card: cards_pb2.Card, field: str = "card") -> int:
    """A card given by ``code``, by ``suit`` + ``rank``, or by both when they agree."""
    known = _CANONICAL.get((card.suit, card.rank, card.code))
    if known is not None:
        return known
    by_code = None
    if card.code:
        try:
            by_code = parse_card(card.code)
        except CirullaError as exc:
            raise WireError(field, str(exc)) from None
    if card.suit or card.rank:
        if not (1 <= card.suit <= 4 and 1 <= card.rank <= 10):
            raise WireError(
                field, f"needs both suit and rank (got suit={card.suit} rank={card.rank})"
            )
        by_parts = make_card(card.rank, card.suit - 1)
        if by_code is not None and by_code != by_parts:
            raise WireError(
                field,
                f"code {card.code!r} disagrees with suit and rank ({CARD_NAMES[by_parts]})",
            )
        return by_parts
    if by_code is None:
        raise WireError(field, "empty card: set code (e.g. '7D') or suit and rank")
    return by_code


def cards_from_proto(cards: Iterable[cards_pb2.Card], field: str) -> list[int]:
    """A card list in its order (a deck); repeats are left to the caller to judge."""
    return [card_from_proto(card, f"{field}[{i}]") for i, card in enumerate(cards)]


def mask_from_proto(cards: Iterable[cards_pb2.Card], field: str) -> int:
    """A set of cards; a card listed twice is an error (a set has no repeats)."""
    mask = 0
    for i, card in enumerate(cards):
        # the canonical form first: naming the field costs more than decoding the card
        c = _CANONICAL.get((card.suit, card.rank, card.code))
        if c is None:
            c = card_from_proto(card, f"{field}[{i}]")
        if mask >> c & 1:
            raise WireError(f"{field}[{i}]", f"{CARD_NAMES[c]} is listed twice")
        mask |= 1 << c
    return mask


# ---------------------------------------------------------------------- actions


def action_to_proto(action: Action | int) -> game_pb2.Action:
    """An action (or its int code) with its declaration and the value named for 7H."""
    if isinstance(action, int):
        action = Action.from_int(action)
    out = game_pb2.Action(card=CARD_MESSAGES[action.card], captures=cards_to_proto(action.capture))
    if action.declaration is not None:
        out.declaration = DECLARATION_KINDS_PB[action.declaration.kind]
        if action.declaration.wild_value is not None:
            out.wild_value = action.declaration.wild_value
    return out


def action_from_proto(action: game_pb2.Action, field: str = "action") -> Action:
    """Syntax only: whether the action is legal is the game's business."""
    if not action.HasField("card"):
        raise WireError(f"{field}.card", "missing: set the card played")
    card = card_from_proto(action.card, f"{field}.card")
    capture = mask_from_proto(action.captures, f"{field}.captures")
    declaration = None
    wild = action.wild_value if action.HasField("wild_value") else None
    if action.declaration:
        kind = _DECLARATION_KINDS.get(action.declaration)
        if kind is None:
            raise WireError(
                f"{field}.declaration",
                f"unknown declaration kind {action.declaration} "
                "(1 = LOW_HAND, 2 = THREE_OF_A_KIND)",
            )
        if wild is not None and not 1 <= wild <= 10:
            raise WireError(f"{field}.wild_value", f"{wild} is not a value 1..10")
        declaration = Declaration(kind, wild)
    elif wild is not None:
        raise WireError(f"{field}.wild_value", "set without a declaration")
    try:
        return Action(card, capture, declaration)
    except CirullaError as exc:
        raise WireError(field, str(exc)) from None


def notation(action: Action | int) -> str:
    """The rules core's notation ("5H:2C+3S", "low 4C", "three:7H=5 5C:5S"), one everywhere."""
    return str(Action.from_int(action) if isinstance(action, int) else action)


def parse_notation(text: str, field: str = "notation") -> Action:
    """The rules core's notation; the short form "three=5 5C:5S" is accepted too."""
    tokens = text.split()
    if len(tokens) == 2 and "=" in tokens[0] and ":" not in tokens[0]:
        word, _, value = tokens[0].partition("=")
        tokens[0] = f"{word}:7H={value}"
    try:
        return Action.parse(" ".join(tokens))
    except CirullaError as exc:
        raise WireError(field, str(exc)) from None


# ---------------------------------------------------------------------- rule options

#: RuleOptions fields, in proto order; the same names as ``Options``.
OPTION_FIELDS: tuple[str, ...] = tuple(f.name for f in rules_pb2.RuleOptions.DESCRIPTOR.fields)
#: Preset enum value -> rules-core preset name (PRESET_UNSPECIFIED means standard).
PRESET_NAMES: dict[int, str] = {
    rules_pb2.PRESET_UNSPECIFIED: "standard",
    rules_pb2.PRESET_STANDARD: "standard",
    rules_pb2.PRESET_GENOVA_HOME: "genova-home",
    rules_pb2.PRESET_FANTACARTE: "fantacarte",
}
_PRESET_VALUES = {
    "standard": rules_pb2.PRESET_STANDARD,
    "genova-home": rules_pb2.PRESET_GENOVA_HOME,
    "fantacarte": rules_pb2.PRESET_FANTACARTE,
}


def options_to_proto(options: Options) -> rules_pb2.RuleOptions:
    """Every field set: the effective options, as NewGame and records carry them."""
    return rules_pb2.RuleOptions(**options.to_dict())


def overrides_from_proto(options: rules_pb2.RuleOptions) -> dict[str, OptionValue]:
    """Only the fields that are set (an unset field keeps the preset's value)."""
    return {field.name: value for field, value in options.ListFields()}


def options_from_proto(
    options: rules_pb2.RuleOptions, base: Options | None = None, field: str = "rules"
) -> Options:
    """``base`` (default: standard) with the fields that are set; checked by ``Options``."""
    try:
        return (base or Options()).with_overrides(**overrides_from_proto(options))
    except CirullaError as exc:
        raise WireError(field, str(exc)) from None


def preset_to_proto(name: str) -> rules_pb2.Preset:
    """A rules-core preset name ("genova-home", "genova_home" ...) as its enum value."""
    value = _PRESET_VALUES.get(name.strip().lower().replace("_", "-"))
    if value is None:
        raise WireError(
            "preset", f"unknown preset {name!r}; presets are {', '.join(_PRESET_VALUES)}"
        )
    return value


def preset_from_proto(preset: int, field: str = "rules.preset") -> str:
    name = PRESET_NAMES.get(preset)
    if name is None:
        known = ", ".join(f"{v} = {rules_pb2.Preset.Name(v)}" for v in _PRESET_VALUES.values())
        raise WireError(field, f"unknown preset {preset} ({known})")
    return name


def rules_to_proto(preset: str, overrides: dict[str, Any] | None = None) -> rules_pb2.Rules:
    """A requested rule set: preset plus the options that differ from it (``overrides``:
    option values by name, as given: ``RuleOptions`` checks each name and value)."""
    return rules_pb2.Rules(
        preset=preset_to_proto(preset), overrides=rules_pb2.RuleOptions(**(overrides or {}))
    )


def rules_from_proto(
    rules: rules_pb2.Rules, field: str = "rules"
) -> tuple[str, dict[str, OptionValue], Options]:
    """(preset name, overrides, effective options) of a requested rule set, checked."""
    preset = preset_from_proto(rules.preset, f"{field}.preset")
    overrides = overrides_from_proto(rules.overrides)
    try:
        options = Options.preset(preset, **overrides)
    except CirullaError as exc:
        raise WireError(f"{field}.overrides", str(exc)) from None
    return preset, overrides, options
