"""Tournament schedule: which bots meet, in which seats, with which deck seeds.

Luck of the deal is cancelled by duplicate deals: every deck seed of a pairing is played
once per seat rotation, so each bot receives exactly the cards the others received.

* 2 players: pairing (A, B) plays each seed as A-B and B-A.
* 4 players: the two bots of a pairing form the partnerships (seats 0+2 against 1+3) and
  play each seed as A-B-A-B and B-A-B-A.
* 3 players: a group of three plays each seed in the three cyclic rotations, so every bot
  sits in every seat once. Round-robin takes every group of three distinct bots; gauntlet
  takes the first bot with every pair of the others. With only two bots, the groups are
  (A, A, B) and (A, B, B) (round-robin) or (A, B, B) (gauntlet).

Seeds depend only on the tournament seed and the deck-set number, so all pairings play the
same cards and the schedule is rebuilt identically on ``--resume``. Games are ordered
deck set by deck set, so a tournament stopped early is still balanced.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import random
import secrets
from collections.abc import Sequence
from dataclasses import dataclass

FORMATS = ("round-robin", "gauntlet")

#: Deck seeds of an explicit (narrow) tournament seed stay below 2**31, as they always were.
SEED_BITS = 31
#: Bits of the deck seeds of a wide (default, random) tournament seed.
WIDE_SEED_BITS = 64
#: Bits of a bot's CIRULLA_SEED (what bots have always been given).
BOT_SEED_BITS = 31


@dataclass(frozen=True, slots=True)
class ScheduledGame:
    """One game of the schedule; ``index`` is its key in the journal."""

    index: int
    group: tuple[str, ...]
    deal_set: int
    seed: int
    seats: tuple[str, ...]

    @property
    def pairing(self) -> str:
        """Human name of the group, e.g. ``"random vs greedy"``."""
        return " vs ".join(self.group)


def deck_seed(tournament_seed: int, deal_set: int) -> int:
    """Seed of the deck set ``deal_set``: a pure function, so resume rebuilds it.

    A tournament seed below 2**SEED_BITS (an explicit ``--seed 1``) gives the same 31-bit
    deck seeds as always (same seeds, same games); a wide one (the random default) gives
    64-bit deck seeds, so a bot that learns one game's seed or a few of its cards cannot
    search the seed space for its deck or for the tournament seed."""
    bits = SEED_BITS if 0 <= tournament_seed < 2**SEED_BITS else WIDE_SEED_BITS
    return random.Random(f"cirulla-tournament:{tournament_seed}:{deal_set}").getrandbits(bits)


def new_tournament_seed() -> int:
    """The default tournament seed: random and wide (at least 2**SEED_BITS, so 64-bit
    deck seeds follow), never guessable from a finished game."""
    return (1 << SEED_BITS) + secrets.randbelow((1 << WIDE_SEED_BITS) - (1 << SEED_BITS))


def new_bot_seed_base() -> int:
    """The default base of the bots' seeds: random per tournament, saved for --resume."""
    return secrets.randbits(WIDE_SEED_BITS)


def bot_seed(base: int, game_index: int, seat: int) -> int:
    """A seat's CIRULLA_SEED (for reproducible bots): HMAC-SHA256 of the game and seat
    under ``base``, which is independent of the deck seeds, so a bot that knows its seed,
    ``base`` and everything public still cannot predict a deck."""
    message = f"cirulla-bot-seed:{game_index}:{seat}".encode()
    digest = hmac.new(str(base).encode(), message, hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") % (1 << BOT_SEED_BITS)


def groups(bots: Sequence[str], players: int, fmt: str) -> list[tuple[str, ...]]:
    """The bot groups that meet: pairs for 2 and 4 players, triples for 3."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; formats are {', '.join(FORMATS)}")
    if players not in (2, 3, 4):
        raise ValueError(f"players must be 2, 3 or 4, not {players}")
    if len(set(bots)) != len(bots):
        raise ValueError(f"bot names must be distinct, got {', '.join(bots)}")
    if len(bots) < 2:
        raise ValueError("a tournament needs at least two bots")
    first, others = bots[0], list(bots[1:])
    if players in (2, 4):
        if fmt == "gauntlet":
            return [(first, other) for other in others]
        return list(itertools.combinations(bots, 2))
    if len(bots) == 2:
        a, b = bots
        return [(a, b, b)] if fmt == "gauntlet" else [(a, a, b), (a, b, b)]
    if fmt == "gauntlet":
        return [(first, *pair) for pair in itertools.combinations(others, 2)]
    return list(itertools.combinations(bots, 3))


def rotations(group: tuple[str, ...], players: int) -> list[tuple[str, ...]]:
    """Seat assignments (bot name per seat) that together play one deck set."""
    if players == 2:
        a, b = group
        return [(a, b), (b, a)]
    if players == 4:
        a, b = group
        return [(a, b, a, b), (b, a, b, a)]
    return [group[i:] + group[:i] for i in range(3)]


def games_per_set(players: int) -> int:
    return 3 if players == 3 else 2


def build_schedule(
    bots: Sequence[str],
    *,
    players: int,
    fmt: str,
    games: int,
    seed: int,
    seeds: Sequence[int] | None = None,
) -> list[ScheduledGame]:
    """The whole tournament: ``games`` per group, rounded up to full duplicate sets.

    ``seeds``: the deck seed of each set (``--deals``), instead of deriving it from ``seed``.
    """
    if games < 1:
        raise ValueError(f"games per pairing must be at least 1, not {games}")
    per_set = games_per_set(players)
    sets = -(-games // per_set)
    all_groups = groups(bots, players, fmt)
    schedule: list[ScheduledGame] = []
    for deal_set in range(sets):
        seed_k = seeds[deal_set] if seeds is not None else deck_seed(seed, deal_set)
        for group in all_groups:
            for seats in rotations(group, players):
                schedule.append(ScheduledGame(len(schedule), group, deal_set, seed_k, seats))
    return schedule
