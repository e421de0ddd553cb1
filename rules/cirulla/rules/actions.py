"""Actions: one card played, the capture set it takes, and an optional declaration.

A declaration is made at the start of the player's turn, so it travels with the card played
in the same action: one decision per turn, and every declaration choice (including the value
named for the wild ``7H``) is a distinct legal action.

Search code uses the int encoding (``Action.to_int``); people and logs use the text notation:

    ``5H``               play 5H, capture nothing
    ``5H:2C+3S``         play 5H, capture 2C and 3S
    ``low 4C:4S``        declare a low hand, then play 4C capturing 4S
    ``three:7H=3 3C``    declare three of a kind naming the wild 7H a 3, then play 3C
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import IntEnum

from cirulla.rules.cards import (
    CARD_NAMES,
    NUM_CARDS,
    VALUES,
    WILD,
    card_name,
    cards_of,
    format_cards,
    parse_card,
    parse_mask,
)
from cirulla.rules.errors import CardError, InvalidActionError

#: Scope a declaration scores, indexed by its kind (the high bits of a declaration code,
#: ``code >> 4``): a low hand 3, three of a kind 10. The one
#: definition: the game, the bots and the wire read it here.
DECLARATION_POINTS = (0, 3, 10)


class DeclarationKind(IntEnum):
    LOW_HAND = 1
    THREE_OF_A_KIND = 2

    @property
    def points(self) -> int:
        return DECLARATION_POINTS[self]

    @property
    def label(self) -> str:
        return "low_hand" if self is DeclarationKind.LOW_HAND else "three_of_a_kind"


_KIND_WORDS = {
    "low": DeclarationKind.LOW_HAND,
    "low_hand": DeclarationKind.LOW_HAND,
    "three": DeclarationKind.THREE_OF_A_KIND,
    "three_of_a_kind": DeclarationKind.THREE_OF_A_KIND,
}


@dataclass(frozen=True, slots=True)
class Declaration:
    """``wild_value`` is the value named for ``7H`` (1..10), ``None`` if the hand lacks it."""

    kind: DeclarationKind
    wild_value: int | None = None

    @property
    def points(self) -> int:
        return self.kind.points

    def code(self) -> int:
        return int(self.kind) << 4 | (self.wild_value or 0)

    @classmethod
    def from_code(cls, code: int) -> Declaration | None:
        if not code:
            return None
        return cls(DeclarationKind(code >> 4), (code & 15) or None)

    def __str__(self) -> str:
        word = "low" if self.kind is DeclarationKind.LOW_HAND else "three"
        return word if self.wild_value is None else f"{word}:7H={self.wild_value}"


def declaration_codes(hand: int) -> tuple[int, ...]:
    """Every declaration a 3-card hand allows, as codes, in ascending code order.

    With ``7H`` each named value 1..10 is tried; where a value makes both a low hand and
    three of a kind only the higher (three of a kind) is offered, as RULES.md says.
    """
    cached = _DECL_CACHE.get(hand)
    if cached is not None:
        return cached
    cards = cards_of(hand)
    codes: list[int] = []
    if len(cards) == 3:
        others = [VALUES[c] for c in cards if c != WILD]
        choices = range(1, 11) if len(others) == 2 else (0,)
        for w in choices:
            vals = [*others, w] if w else others
            if vals[0] == vals[1] == vals[2]:
                codes.append(int(DeclarationKind.THREE_OF_A_KIND) << 4 | w)
            elif sum(vals) <= 9:
                codes.append(int(DeclarationKind.LOW_HAND) << 4 | w)
    result = tuple(sorted(codes))
    _DECL_CACHE[hand] = result
    return result


_DECL_CACHE: dict[int, tuple[int, ...]] = {}


def encode(card: int, capture: int, decl_code: int = 0) -> int:
    return card | decl_code << 6 | capture << 12


def decode(code: int) -> tuple[int, int, int]:
    """``(card, decl_code, capture)`` of an action code: the inverse of ``encode``, for the
    hot paths that weigh codes without building an ``Action``."""
    return code & 63, code >> 6 & 63, code >> 12


@dataclass(frozen=True, slots=True)
class Action:
    """A complete turn. ``capture`` is a card mask (0 = the card stays on the table).

    The text form is the protocol's notation: the card, ``:`` and what it takes, after
    any declaration.

    >>> from cirulla.rules import Action, card_name, parse_card
    >>> take = Action.parse("7D:JC")
    >>> take.card == parse_card("7D"), [card_name(c) for c in take.captured]
    (True, ['JC'])
    >>> Action.from_int(take.to_int()) == take
    True
    >>> str(Action.parse("low:7h=1 7H:4C+KS"))  # declare a low hand, the wild 7 as an ace
    'low:7H=1 7H:4C+KS'
    >>> Action.parse("7D:XX")
    Traceback (most recent call last):
    ...
    cirulla.rules.errors.InvalidActionError: cannot parse action '7D:XX': unknown card code ...
    """

    card: int
    capture: int = 0
    declaration: Declaration | None = None
    # the int encoding, computed once: the game's legality check is a look-up of it
    _code: int = field(default=0, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.card, int) or not 0 <= self.card < NUM_CARDS:
            raise CardError(f"card index {self.card!r} out of range 0..39")
        if self.capture >> NUM_CARDS or self.capture < 0:
            raise InvalidActionError(f"capture mask {self.capture:#x} has bits beyond 40 cards")
        if self.capture >> self.card & 1:
            raise InvalidActionError(f"{CARD_NAMES[self.card]} cannot capture itself")
        decl = self.declaration.code() if self.declaration else 0
        object.__setattr__(self, "_code", encode(self.card, self.capture, decl))

    @property
    def captured(self) -> list[int]:
        return cards_of(self.capture)

    def to_int(self) -> int:
        return self._code

    @classmethod
    def from_int(cls, code: int) -> Action:
        """The action of a code; actions are immutable, so each code's is built once and
        shared (``Game.legal_actions`` returns them without building anything). Where the
        native core runs, the shared ones live in its table (``native.action_of_code``)."""
        if cls is Action and _SHARED is not None:
            return _SHARED(code)
        action = _INTERNED.get(code)
        if action is None or cls is not Action:
            action = cls._checked(code)
            if cls is Action:
                if len(_INTERNED) >= _INTERNED_LIMIT:
                    _INTERNED.clear()  # bounded: servers and bots run for days
                _INTERNED[code] = action
        return action

    @classmethod
    def _checked(cls, code: int) -> Action:
        """A new action of ``code``, every field checked by the constructor."""
        card, decl_code, capture = decode(code)
        return cls(card, capture, Declaration.from_code(decl_code))

    @classmethod
    def parse(cls, text: str) -> Action:
        """Syntax only: whether the action is legal is the game's business."""
        tokens = text.split()
        if not tokens or len(tokens) > 2:
            raise InvalidActionError(
                f"cannot parse action {text!r}: expected '[low|three[:7H=N]] CARD[:CARD+CARD...]'"
            )
        declaration = None
        if len(tokens) == 2:
            declaration = _parse_declaration(tokens[0], text)
        card_text, colon, capture_text = tokens[-1].partition(":")
        if colon and not capture_text:
            raise InvalidActionError(
                f"cannot parse action {text!r}: ':' must be followed by the captured cards"
            )
        try:
            card = parse_card(card_text)
            capture = parse_mask(capture_text.split("+")) if capture_text else 0
        except CardError as exc:
            raise InvalidActionError(f"cannot parse action {text!r}: {exc}") from None
        return cls(card, capture, declaration)

    def __str__(self) -> str:
        play = card_name(self.card)
        if self.capture:
            play += ":" + format_cards(self.capture, "+")
        return f"{self.declaration} {play}" if self.declaration else play

    def __repr__(self) -> str:
        return f"Action.parse({str(self)!r})"


#: Action by code, for ``Action.from_int`` on the Python core (a few thousand codes occur
#: in a match, a hundred thousand and more in random play).
_INTERNED: dict[int, Action] = {}
_INTERNED_LIMIT = 200_000
#: ``native.action_of_code`` once game.py has bound the native core, which then holds the
#: shared actions for ``Action.from_int`` and ``Game.legal_actions`` alike.
_SHARED: Callable[[int], Action] | None = None


def _parse_declaration(token: str, text: str) -> Declaration:
    word, _, wild = token.lower().partition(":")
    kind = _KIND_WORDS.get(word)
    if kind is None:
        raise InvalidActionError(
            f"cannot parse action {text!r}: declaration must be 'low' or 'three', not {word!r}"
        )
    if not wild:
        return Declaration(kind)
    name, _, value = wild.partition("=")
    if name.upper() != "7H" or not value.isdigit() or not 1 <= int(value) <= 10:
        raise InvalidActionError(
            f"cannot parse action {text!r}: the wild card is named as ':7H=N' with N in 1..10"
        )
    return Declaration(kind, int(value))


def action_text(code: int) -> str:
    return str(Action.from_int(code))
