"""Deck orders: parsing a given order, and the seeded shuffles a match deals from (each deck
its own SHA-256-seeded generator, so finished games tell nothing of the decks to come).
"""

from __future__ import annotations

import hashlib
import random
import secrets
from collections.abc import Callable, Iterable, Sequence

from cirulla.rules.cards import ALL_CARDS_MASK, NUM_CARDS, mask_of, parse_card
from cirulla.rules.core import native
from cirulla.rules.errors import DeckError


def parse_deck(deck: Sequence[int | str]) -> list[int]:
    """A deck order: 40 distinct cards given as ints or codes, dealt from the front."""
    cards = [parse_card(c) if isinstance(c, str) else c for c in deck]
    if len(cards) != NUM_CARDS or mask_of(cards) != ALL_CARDS_MASK:
        raise DeckError(f"a deck order must list all 40 cards once each, got {len(cards)} cards")
    return cards


class DeckSource:
    """Where deck orders come from: a seeded shuffle, or an explicit list used in order.

    Shared by the games of one match so that a match is determined by its seed or decks.
    With a seed, the k-th deck is shuffled by its own generator, seeded with
    SHA-256(seed, k): the decks of finished games (which records show) say nothing
    about the decks still to come, and only the seed, which is never shown, does.
    """

    def __init__(self, seed: int | None = None, decks: Iterable[Sequence[int | str]] | None = None):
        self._explicit = [parse_deck(d) for d in decks] if decks is not None else None
        self._next = 0
        self._seed = (secrets.randbits(128) if seed is None else seed) if decks is None else None
        # the native core's Game shuffles a seeded source's decks several at a time and
        # keeps the ones not dealt yet here (40 bytes each, from deck number _ahead_from);
        # next_deck below computes each deck itself and never reads them
        self._ahead = b""
        self._ahead_from = 0

    def next_deck(self, deal_no: int) -> list[int]:
        if self._explicit is not None:
            if self._next >= len(self._explicit):
                raise DeckError(
                    f"deal {deal_no} needs deck order #{self._next + 1} but only "
                    f"{len(self._explicit)} were given (a redeal takes the next one)"
                )
            deck = self._explicit[self._next]
            self._next += 1
            return list(deck)
        seed = self._seed
        assert seed is not None
        self._next += 1
        if _native_deck is not None and type(seed) is int:
            return _native_deck(seed, self._next)
        return seeded_deck(seed, self._next)


def seeded_deck(seed: int, number: int) -> list[int]:
    """Deck order ``number`` (1, 2, ...) of ``seed``: independent of every other number."""
    digest = hashlib.sha256(f"cirulla-deck/1:{seed}:{number}".encode()).digest()
    rng = random.Random(int.from_bytes(digest, "big"))
    # sorting by random keys: a uniform permutation, ~5x cheaper than random.shuffle
    keys = [rng.random() for _ in range(NUM_CARDS)]
    return sorted(range(NUM_CARDS), key=keys.__getitem__)


#: ``seeded_deck`` in C when the native core runs (the same decks bit for bit:
#: tests/rules/test_native.py); the reference above otherwise.
_native_deck: Callable[[int, int], list[int]] | None = (
    None if native is None else native.seeded_deck
)
