"""Who plays whom next: Halite III's matchmaker, on duplicate pairs.

* **Seed**: the first seat goes to a new version that still has validation games to play,
  else to a bot that never played the queue, else to the least recently played one (ties
  broken at random), so every bot keeps playing and new bots settle fast.
* **Opponents**: the other bots sorted by distance in rating (``mu - 3 sigma``) from the
  seed; a window of the closest ``players - 1 + randint(0, WINDOW_EXTRA)`` of them is
  drawn, and the opponents are sampled from the window. Close games tell the most about
  ratings; the random width keeps the ladder from splitting into islands.
* **Duplicate pairs**: two-player games are played twice on the same deck seed with the
  seats swapped, four-player games twice with the partnerships swapped (same seats
  order, sides exchanged), so neither side owes its result to the cards. Three-player
  games are single games with a random seat order.

Concurrency limits are the store's business: ``LadderStore.candidates`` only offers bots
with room for the games planned, and ``claim`` starts a match only while every bot in
it is below its limit of matches being played.
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Sequence

from cirulla.ladder.store_rows import (
    CONNECT_SPEC,
    QUEUE_PLAYERS,
    Candidate,
    MatchConfig,
    MatchPlan,
    SeatPlan,
    new_id,
)

#: Extra opponents (beyond the seats to fill) the random window may reach.
WINDOW_EXTRA = 3
#: Queues played as duplicate pairs.
PAIRED = ("2p", "4p")
#: Bits of a match's deck seed, drawn by the system's CSPRNG (not ``rng``, whose outputs
#: an observer of many matches could learn): too many for a bot to search for its deck.
SEED_BITS = 63


def games_per_plan(queue: str) -> int:
    return 2 if queue in PAIRED else 1


def pick_seed(candidates: Sequence[Candidate], rng: random.Random) -> Candidate:
    def key(c: Candidate) -> tuple[int, int, float, float]:
        validating = 0 if c.validation_games_left > 0 else 1
        new = 0 if c.games == 0 else 1
        return (validating, new, c.last_played_at or 0.0, rng.random())

    return min(candidates, key=key)


def pick_opponents(
    seed: Candidate, others: Sequence[Candidate], count: int, rng: random.Random
) -> list[Candidate]:
    by_distance = sorted(others, key=lambda c: (abs(c.score - seed.score), rng.random()))
    window = by_distance[: count + rng.randint(0, WINDOW_EXTRA)]
    return rng.sample(window, count)


def plan(
    queue: str, candidates: Sequence[Candidate], config: MatchConfig, rng: random.Random
) -> list[MatchPlan]:
    """The next match (or duplicate pair) of ``queue``; empty if too few bots are free."""
    players = QUEUE_PLAYERS[queue]
    if len({c.bot_id for c in candidates}) < players:
        return []
    seed = pick_seed(candidates, rng)
    others = [c for c in candidates if c.bot_id != seed.bot_id]
    chosen = [seed, *pick_opponents(seed, others, players - 1, rng)]
    deck_seed = secrets.randbits(SEED_BITS)
    # A connect-in bot is one remote process nobody can restart or sandbox: playing both
    # twins of a pair it would remember game 1's hands, its opponents' in game 2. Its
    # matches are single games (docs/ladder.md, "Threat model").
    if queue == "3p" or any(c.spec == CONNECT_SPEC for c in chosen):
        rng.shuffle(chosen)
        seats = tuple(
            SeatPlan(i, i % 2 if queue == "4p" else i, c.version_id) for i, c in enumerate(chosen)
        )
        return [MatchPlan(queue, seats, deck_seed, config)]
    pair = new_id("lp")
    orders: list[tuple[Candidate, ...]]
    if queue == "2p":
        a, b = chosen
        orders = [(a, b), (b, a)]
    else:
        # seats 0+2 against 1+3: the seed and its partner, then the partnerships swapped
        a, b, c, d = chosen
        orders = [(a, b, c, d), (b, a, d, c)]
    return [
        MatchPlan(
            queue,
            tuple(SeatPlan(i, i % 2, bot.version_id) for i, bot in enumerate(order)),
            deck_seed,
            config,
            pair_id=pair,
            pair_index=index,
        )
        for index, order in enumerate(orders)
    ]
