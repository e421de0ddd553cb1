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


def pack_decks(decks: Iterable[Sequence[int | str]]) -> bytes:
    """Deck orders (each checked by ``parse_deck``) packed as one bytes, 40 cards a deck:
    what ``DeckSource`` holds, 40 bytes a deck instead of a list of 40 ints (~400)."""
    return b"".join(bytes(parse_deck(d)) for d in decks)


class DeckSource:
    """Where deck orders come from: a seeded shuffle, or an explicit list used in order.

    Shared by the games of one match so that a match is determined by its seed or decks.
    With a seed, the k-th deck is shuffled by its own generator, seeded with
    SHA-256(seed, k): the decks of finished games (which records show) say nothing
    about the decks still to come, and only the seed, which is never shown, does.
    ``decks`` may be ``pack_decks``' bytes, held as given (checked, not copied).
    """

    def __init__(
        self,
        seed: int | None = None,
        decks: Iterable[Sequence[int | str]] | bytes | None = None,
    ):
        if isinstance(decks, bytes):
            if len(decks) % NUM_CARDS:
                raise DeckError(f"packed deck orders take 40 bytes each, got {len(decks)}")
            for at in range(0, len(decks), NUM_CARDS):
                parse_deck(decks[at : at + NUM_CARDS])
        #: the explicit deck orders, 40 bytes each (``pack_decks``)
        self._explicit = (
            None if decks is None else decks if isinstance(decks, bytes) else pack_decks(decks)
        )
        self._next = 0
        self._seed = (secrets.randbits(128) if seed is None else seed) if decks is None else None
        # with the native core, seeded decks are shuffled DECKS_AHEAD at a time (several
        # times cheaper each: native.seeded_decks); the ones not dealt yet wait here, 40
        # bytes each, the first of them deck number _ahead_from
        self._ahead = b""
        self._ahead_from = 0

    def next_deck(self, deal_no: int) -> list[int]:
        if self._explicit is not None:
            given = len(self._explicit) // NUM_CARDS
            if self._next >= given:
                raise DeckError(
                    f"deal {deal_no} needs deck order #{self._next + 1} but only "
                    f"{given} were given (a redeal takes the next one)"
                )
            at = self._next * NUM_CARDS
            self._next += 1
            return list(self._explicit[at : at + NUM_CARDS])
        seed = self._seed
        assert seed is not None
        self._next = number = self._next + 1
        if _native_decks is None or type(seed) is not int:
            return seeded_deck(seed, number)
        k = number - self._ahead_from
        if not 0 <= k < len(self._ahead) // NUM_CARDS:
            self._ahead, self._ahead_from, k = _native_decks(seed, number, DECKS_AHEAD), number, 0
        return list(self._ahead[k * NUM_CARDS : (k + 1) * NUM_CARDS])


def seeded_deck(seed: int, number: int) -> list[int]:
    """Deck order ``number`` (1, 2, ...) of ``seed``: independent of every other number."""
    digest = hashlib.sha256(f"cirulla-deck/1:{seed}:{number}".encode()).digest()
    rng = random.Random(int.from_bytes(digest, "big"))
    # sorting by random keys: a uniform permutation, ~5x cheaper than random.shuffle
    keys = [rng.random() for _ in range(NUM_CARDS)]
    return sorted(range(NUM_CARDS), key=keys.__getitem__)


#: ``seeded_deck`` in C when the native core runs, several decks at once (the same decks bit
#: for bit: tests/rules/test_native.py, test_gamestate.py); the reference above otherwise.
_native_decks: Callable[[int, int, int], bytes] | None = (
    None if native is None else native.seeded_decks
)
#: How many decks a seeded source shuffles at once (native.seeded_decks' lanes: a match
#: deals six or seven a game).
DECKS_AHEAD = 8
