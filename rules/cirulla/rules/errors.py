"""Error types of the rules core, layered as in python-chess: syntax first, legality second.

Every error is a ``ValueError`` so callers that only care about "bad input" catch one type,
while the referee can still tell a typo (``CardError``) from a rule breach (``IllegalActionError``).
"""

from __future__ import annotations


class CirullaError(ValueError):
    """Base of every error the rules core raises for bad input."""


class CardError(CirullaError):
    """A card code that is not one of the 40 cards (``7D``, ``AS``, ``KH``...)."""


class OptionError(CirullaError):
    """An unknown rule option, preset or an out-of-range value."""


class InvalidActionError(CirullaError):
    """Action text that cannot be parsed at all (syntax, not legality)."""


#: The rules an action can break, as ``IllegalActionError.rule`` and the protocol's
#: ``ActionRejected.rule`` (REJECT_REASON_ILLEGAL) name them. The one list: play.proto's
#: comment on ``ActionRejected.rule`` repeats it (a test keeps the two equal).
ILLEGAL_RULES: dict[str, str] = {
    "card_in_hand": "the card played is not in the seat's hand",
    "declaration_timing": "a declaration is made only holding 3 cards, on the first turn "
    "of a round",
    "declaration": "the declaration does not fit the hand (or 7H's named value is missing "
    "or not allowed)",
    "capture_on_table": "a captured card is not on the table",
    "must_capture": "a card that can capture must capture",
    "capture": "the captured cards are not a capture the card can make",
    "ace_sweep": "an ace with no ace on the table sweeps the whole table",
    "pairing_precedence": "with pairing precedence, a card that pairs a table card must "
    "take the pair",
}
#: Rules the core's own callers can break (not reachable through the server's decisions).
STATE_RULES = ("game_over", "deal_over", "turn", "seats", "match_over")


class IllegalActionError(CirullaError):
    """A well-formed action the rules forbid here. ``rule`` names the rule that was broken."""

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(f"{message} [rule: {rule}]")
        self.rule = rule
        self.detail = message


class DeckError(CirullaError):
    """An explicit deck order that is not 40 distinct cards, or ran out on a redeal."""
