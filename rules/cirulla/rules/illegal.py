"""Why an action is illegal: the rule it breaks and a sentence for the player, for the
referee's refusals (``Game.explain_illegal``; ``Game.apply`` raises them as
``IllegalActionError``). Only an action already known to be illegal comes here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cirulla.rules.actions import Action, Declaration, declaration_codes
from cirulla.rules.captures import captures_by_value
from cirulla.rules.cards import CARD_NAMES, VALUES, WILD, cards_of, format_cards

if TYPE_CHECKING:
    from cirulla.rules.game import Game


def explain_illegal(game: Game, action: Action) -> tuple[str, str]:
    """Name the rule an illegal action breaks in ``game``, as (rule, why): the referee's error
    messages (``Game.explain_illegal``)."""
    seat = game.turn
    hand = game.hands[seat]
    card = CARD_NAMES[action.card]
    if not hand >> action.card & 1:
        return "card_in_hand", f"{card} is not in seat {seat}'s hand ({format_cards(hand)})"
    decl = action.declaration
    if decl is not None:
        if hand.bit_count() != 3:
            return (
                "declaration_timing",
                "a declaration is made holding exactly 3 cards, at the first turn of a round",
            )
        if decl.code() not in declaration_codes(hand):
            return "declaration", _explain_declaration(decl, hand)
    named = (decl.wild_value if decl and decl.wild_value else 0) or game.wild
    value = named if action.card == WILD and named else VALUES[action.card]
    caps = captures_by_value(game.table, game.wild, game.options.pairing_precedence)[value]
    if action.capture & ~game.table:
        return (
            "capture_on_table",
            f"{format_cards(action.capture & ~game.table)} not on the table "
            f"({format_cards(game.table) or 'empty'})",
        )
    if not action.capture:
        return (
            "must_capture",
            f"{card} can capture, and a card that can capture must capture "
            f"(e.g. {format_cards(caps[0], '+')})",
        )
    if not caps:
        return "capture", f"{card} (value {value}) cannot capture anything on this table"
    if value == 1 and caps == (game.table,) and not game._ace_on_table():
        return "ace_sweep", "an ace played with no ace on the table takes the whole table"
    total = sum(_value_on_table(game, c) for c in cards_of(action.capture))
    if game.options.pairing_precedence and total == value and action.capture.bit_count() > 1:
        return (
            "pairing_precedence",
            f"a table card pairs {card}, so adding captures are not allowed",
        )
    return (
        "capture",
        f"{format_cards(action.capture, '+')} (sum {total}) is neither a card of value "
        f"{value}, cards adding to {value}, nor cards making 15 with {card}",
    )


def _value_on_table(game: Game, card: int) -> int:
    return game.wild if card == WILD and game.wild else VALUES[card]


def _explain_declaration(decl: Declaration, hand: int) -> str:
    has_wild = bool(hand >> WILD & 1)
    if has_wild and decl.wild_value is None:
        return "holding 7H, a declaration must name its value (e.g. low:7H=1)"
    if not has_wild and decl.wild_value is not None:
        return "a wild value can only be named by the holder of 7H"
    allowed = ", ".join(str(Declaration.from_code(c)) for c in declaration_codes(hand))
    return (
        f"{decl} is not allowed with {format_cards(hand)}: a low hand sums to 9 or less, "
        f"three of a kind has three equal values (allowed here: {allowed or 'none'})"
    )
