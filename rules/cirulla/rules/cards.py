"""Cards as plain ints, sets of cards as 40-bit masks.

A card is ``rank_index * 4 + suit`` (rank_index 0..9 for A..K, suits D H C S). Ordering by
value first means iterating a mask yields cards sorted by capture value, which the capture
generator exploits for caching, and the four cards of one value are adjacent bits.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from cirulla.rules.errors import CardError

RANK_LETTERS = "A234567JQK"
SUIT_LETTERS = "DHCS"
SUIT_NAMES = ("coins", "cups", "clubs", "swords")

DIAMONDS, HEARTS, CLUBS, SPADES = range(4)
COINS, CUPS = DIAMONDS, HEARTS

NUM_CARDS = 40
ALL_CARDS_MASK = (1 << NUM_CARDS) - 1


def make_card(value: int, suit: int) -> int:
    """The card of capture value ``value`` (1..10) in ``suit`` (0..3)."""
    return (value - 1) * 4 + suit


def card_value(card: int) -> int:
    """Printed capture value 1..10 (a named wild card's value lives in the game state)."""
    return (card >> 2) + 1


def card_suit(card: int) -> int:
    return card & 3


VALUES: tuple[int, ...] = tuple(card_value(c) for c in range(NUM_CARDS))
CARD_NAMES: tuple[str, ...] = tuple(
    RANK_LETTERS[c >> 2] + SUIT_LETTERS[c & 3] for c in range(NUM_CARDS)
)
_BY_NAME = {name: c for c, name in enumerate(CARD_NAMES)}

SETTEBELLO = make_card(7, DIAMONDS)
WILD = make_card(7, HEARTS)
COINS_MASK = sum(1 << make_card(v, DIAMONDS) for v in range(1, 11))
ACES_MASK = 0b1111
GRANDE_MASK = sum(1 << make_card(v, DIAMONDS) for v in (8, 9, 10))
SUIT_MASKS: tuple[int, ...] = tuple(
    sum(1 << make_card(v, s) for v in range(1, 11)) for s in range(4)
)
PRIMIERA_POINTS: tuple[int, ...] = tuple(
    (16, 12, 13, 14, 15, 18, 21, 10, 10, 10)[c >> 2] for c in range(NUM_CARDS)
)


def parse_card(text: str) -> int:
    """A card from its code, case-insensitive, surrounding blanks ignored.

    >>> from cirulla.rules import card_name, card_value, parse_card
    >>> parse_card("7h"), card_name(25), card_value(parse_card("KS"))
    (25, '7H', 10)
    >>> parse_card("8D")
    Traceback (most recent call last):
    ...
    cirulla.rules.errors.CardError: unknown card code '8D': expected rank A/2/3/4/5/6/7/J/Q/K ...
    """
    card = _BY_NAME.get(text.strip().upper()) if isinstance(text, str) else None
    if card is None:
        raise CardError(
            f"unknown card code {text!r}: expected rank {'/'.join(RANK_LETTERS)} "
            f"followed by suit {'/'.join(SUIT_LETTERS)}, e.g. 7D, AS, KH"
        )
    return card


def card_name(card: int) -> str:
    if not 0 <= card < NUM_CARDS:
        raise CardError(f"card index {card!r} out of range 0..39")
    return CARD_NAMES[card]


def parse_cards(text: str | Iterable[str]) -> list[int]:
    """Space, comma or plus separated codes, or an iterable of codes."""
    if isinstance(text, str):
        text = text.replace(",", " ").replace("+", " ").split()
    return [parse_card(t) for t in text]


def mask_of(cards: Iterable[int]) -> int:
    m = 0
    for c in cards:
        m |= 1 << c
    return m


def cards_of(mask: int) -> list[int]:
    """Cards of a mask in ascending order (ascending value, then suit D H C S)."""
    cached = SMALL_SETS.get(mask)
    if cached is not None:
        return list(cached)
    cards = _cards_of(mask)
    if len(cards) <= 3:  # hands: the hottest call in search, so cached
        SMALL_SETS[mask] = tuple(cards)
    return cards


# Card tuples of masks of up to three cards (every hand), filled as they are met.
SMALL_SETS: dict[int, tuple[int, ...]] = {}


def _cards_of(mask: int) -> list[int]:
    if mask < 0:  # its lowest bit never runs out: the loop below would not end
        raise ValueError(f"{mask} is not a card mask (negative)")
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def names_of(mask: int) -> list[str]:
    return [CARD_NAMES[c] for c in cards_of(mask)]


def format_cards(mask: int, sep: str = " ") -> str:
    return sep.join(names_of(mask))


def parse_mask(text: str | Iterable[str]) -> int:
    cards = parse_cards(text)
    m = mask_of(cards)
    if m.bit_count() != len(cards):
        raise CardError(f"a card is repeated in {text!r}")
    return m


class CardSet:
    """A read-only, set-like view of a card mask for humans and tests (the core uses ints).

    >>> from cirulla.rules import CardSet, parse_card, parse_mask
    >>> hand = CardSet.parse("KS 7H ad")
    >>> hand, len(hand), parse_card("7H") in hand
    (CardSet.parse('AD 7H KS'), 3, True)
    >>> str(hand), hand.mask == parse_mask("AD 7H KS")
    ('AD 7H KS', True)
    """

    __slots__ = ("mask",)

    def __init__(self, mask: int | Iterable[int] = 0) -> None:
        self.mask = mask if isinstance(mask, int) else mask_of(mask)

    @classmethod
    def parse(cls, text: str | Iterable[str]) -> CardSet:
        return cls(parse_mask(text))

    def __iter__(self) -> Iterator[int]:
        return iter(cards_of(self.mask))

    def __len__(self) -> int:
        return self.mask.bit_count()

    def __contains__(self, card: object) -> bool:
        return isinstance(card, int) and 0 <= card < NUM_CARDS and bool(self.mask >> card & 1)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, CardSet):
            return self.mask == other.mask
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.mask)

    def __str__(self) -> str:
        return format_cards(self.mask)

    def __repr__(self) -> str:
        return f"CardSet.parse({format_cards(self.mask)!r})"
