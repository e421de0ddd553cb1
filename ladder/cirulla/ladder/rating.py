"""Ratings: openskill Plackett-Luce, one rating per bot version and queue.

Choices (docs/ladder.md, "Ratings"):

* A game is rated as the library rates teams: two-player games are two teams of one,
  three-player games three teams of one (free-for-all), four-player games the two
  partnerships (seats 0+2 against 1+3) as two teams of two. Ranks come from the result:
  the winning side first, the others by points; equal points share a rank (a draw).
* Standings rank by ``mu - 3 * sigma`` (a conservative estimate: the bot is at least this
  strong with about 99% confidence).
* Inactivity: ``sigma`` grows back while a version does not play in a queue,
  ``sigma' = min(SIGMA0, sqrt(sigma**2 + IDLE_VARIANCE_PER_DAY * idle_days))``, applied
  when it is shown and before its next update, so a bot that has not played for weeks
  drops in the standings until it proves itself again.
* A rating with fewer than ``PROVISIONAL_GAMES`` rated games is marked provisional.
* A new version of a bot starts from the previous version's ``mu`` with the initial
  (wide) ``sigma``: usually close to the old strength, free to move fast.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from openskill.models import PlackettLuce

MODEL = PlackettLuce()
MU0: float = MODEL.mu
SIGMA0: float = MODEL.sigma
#: sigma**2 gained per idle day: a settled sigma of 1 grows to about 2.1 after 30 idle days
#: and 6.4 after a year (never above SIGMA0).
IDLE_VARIANCE_PER_DAY = (SIGMA0 / 25) ** 2
PROVISIONAL_GAMES = 10
DAY = 86_400.0


@dataclass(frozen=True, slots=True)
class Skill:
    mu: float
    sigma: float

    @property
    def score(self) -> float:
        return score(self.mu, self.sigma)


def score(mu: float, sigma: float) -> float:
    """The rank key of the standings."""
    return mu - 3.0 * sigma


def inflate(sigma: float, last_played_at: float | None, now: float) -> float:
    """``sigma`` grown by the time since the last rated game, capped at ``SIGMA0``."""
    if last_played_at is None or now <= last_played_at:
        return sigma
    idle_days = (now - last_played_at) / DAY
    return min(max(SIGMA0, sigma), math.sqrt(sigma * sigma + IDLE_VARIANCE_PER_DAY * idle_days))


def new_version_skill(previous: Skill | None) -> Skill:
    """Where a new version starts: the previous version's mean, the initial uncertainty."""
    return Skill(previous.mu if previous is not None else MU0, SIGMA0)


def ranks_of(
    sides: int, winner: int | None, totals: Sequence[int], forfeit_sides: Sequence[int] = ()
) -> list[int]:
    """Rank per side (1 = best; equal ranks are ties) from a game's result.

    The winner is first; then sides that did not forfeit by points; forfeiting sides last.
    """

    def key(side: int) -> tuple[int, int, int]:
        points = totals[side] if side < len(totals) else 0
        return (0 if side == winner else 1, 1 if side in forfeit_sides else 0, -points)

    keys = [key(side) for side in range(sides)]
    ordered = sorted(set(keys))
    return [ordered.index(k) + 1 for k in keys]


def rate(teams: Sequence[Sequence[Skill]], ranks: Sequence[int]) -> list[list[Skill]]:
    """One game's update: ``teams[i]`` are the skills of side ``i``, ``ranks[i]`` its rank."""
    model_teams = [[MODEL.rating(mu=s.mu, sigma=s.sigma) for s in team] for team in teams]
    rated = MODEL.rate(model_teams, ranks=list(ranks))
    return [[Skill(r.mu, r.sigma) for r in team] for team in rated]
