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


class IllegalActionError(CirullaError):
    """A well-formed action the rules forbid here. ``rule`` names the rule that was broken."""

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(f"{message} [rule: {rule}]")
        self.rule = rule
        self.detail = message


class DeckError(CirullaError):
    """An explicit deck order that is not 40 distinct cards, or ran out on a redeal."""
