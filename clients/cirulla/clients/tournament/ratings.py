"""The standings' openskill ratings, gone on from where the last refresh left them.

Ratings are computed game by game in schedule order, so every refresh of the standings
(the progress line, ``results.json``, about once a second while games run) rated every
game played so far again: some 0.35 ms a game each time, most of a refresh's cost, and
about 2 ms of the runner's CPU per game of a 40-game tournament (more in longer ones).
What the ratings depend on is the sequence of (the sides' bots, their ranks), one per
game in schedule order; ``RatedPrefix`` keeps that sequence from the last computation and
the ratings after every ``SNAPSHOT``-th game of it, and goes on from the last snapshot
that the new sequence shares (games finish out of order: a game that ends after a later
one changes the sequence from its place on). The same model rates the same games from
the same ratings in the same order: the same floats as rating them all again
(tests/tournament/test_ratings.py).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from openskill.models import PlackettLuce, PlackettLuceRating

#: The ratings are kept after every this many games (memory: a few small objects each).
SNAPSHOT = 32
#: One game as the ratings see it: its sides' bots and their ranks, in side order.
RateKey = tuple[tuple[str, ...], tuple[int, ...]]


class RatedPrefix:
    """The ratings of one set of bots after a sequence of games, with snapshots."""

    def __init__(self, names: tuple[str, ...]) -> None:
        # imported here: `cirulla --help` loads the results, openskill is the tournament extra
        from openskill.models import PlackettLuce

        self.names = names
        self.model: PlackettLuce = PlackettLuce()
        self.keys: list[RateKey] = []
        #: Ratings after the first N games of ``keys``, by N (0: every bot's first rating).
        self.saved: dict[int, dict[str, PlackettLuceRating]] = {
            0: {name: self.model.rating(name=name) for name in names}
        }

    def rate(self, keys: list[RateKey]) -> dict[str, PlackettLuceRating]:
        """The ratings after the games ``keys``, in order (the ones kept: do not change
        them). A game with one bot on two sides (3-player padding) teaches nothing."""
        same = 0
        limit = min(len(keys), len(self.keys))
        while same < limit and keys[same] == self.keys[same]:
            same += 1
        start = max(n for n in self.saved if n <= same)
        for n in [n for n in self.saved if n > start]:  # rated after another game
            del self.saved[n]
        ratings = dict(self.saved[start])
        for at in range(start, len(keys)):
            bots, ranks = keys[at]
            if len(set(bots)) == len(bots):
                new = self.model.rate([[ratings[b]] for b in bots], ranks=list(ranks))
                for bot, team in zip(bots, new, strict=True):
                    ratings[bot] = team[0]
            if (at + 1) % SNAPSHOT == 0:
                self.saved[at + 1] = dict(ratings)
        self.keys = keys
        return ratings


_LOCK = threading.Lock()
#: The last set of bots rated (one tournament runs per process; another's bots start anew).
_LAST: RatedPrefix | None = None


def rate_games(names: tuple[str, ...], keys: list[RateKey]) -> dict[str, PlackettLuceRating]:
    """The ratings of ``names`` after the games ``keys``, in order: as a fresh
    ``RatedPrefix(names).rate(keys)``, going on from the last call's when it can."""
    global _LAST
    with _LOCK:
        if _LAST is None or _LAST.names != names:
            _LAST = RatedPrefix(names)
        return _LAST.rate(keys)
