"""The standings' ratings gone on from the last refresh (``tournament.ratings``) are the
very floats of rating every game again: games arriving out of order, a result replaced,
three-player padding, another tournament's bots in between, thousands of games."""

from __future__ import annotations

import random
from typing import Any

import pytest

from cirulla.bots.botspec import parse_bots
from cirulla.clients.matches.journal import GameResult, Settings
from cirulla.clients.tournament import ratings
from cirulla.clients.tournament.ratings import SNAPSHOT, RatedPrefix
from cirulla.clients.tournament.results import standings


def _result(index: int, seats: tuple[str, ...], rng: random.Random) -> GameResult:
    sides = 2 if len(seats) != 3 else 3
    totals = tuple(rng.randrange(0, 60) for _ in range(sides))
    winner = None if rng.random() < 0.1 else rng.randrange(sides)
    return GameResult(
        index=index,
        match_id=f"m-{index}",
        seats=seats,
        seed=index // 2,
        deal_set=index // 2,
        group=tuple(sorted(set(seats))),
        winner=winner,
        totals=totals,
        deals=4,
        seat_outcomes=("ok",) * len(seats),
        forfeit_sides=(rng.randrange(sides),) if winner is None and rng.random() < 0.5 else (),
    )


def _fresh(settings: Settings, results: list[GameResult]) -> list[tuple[str, float, float]]:
    ratings._LAST = None  # rated from the start
    return _ratings(settings, results)


def _ratings(settings: Settings, results: list[GameResult]) -> list[tuple[str, float, float]]:
    st = standings(settings, results)
    return sorted((b.name, b.rating_mu, b.rating_sigma) for b in st.bots)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_refreshed_ratings_are_those_of_rating_every_game_again(players: int) -> None:
    rng = random.Random(players)
    bots = ["a", "b", "c"]
    settings = Settings(bots=parse_bots({b: "random" for b in bots}), games=300, players=players)
    results: list[GameResult] = []
    order = list(range(3 * SNAPSHOT + 7))
    for n in range(0, len(order), 3):  # games end out of order, two or three at a time
        part = order[n : n + 3]
        rng.shuffle(part)  # (a slice is a copy: shuffled in place it changed nothing)
        order[n : n + 3] = part
    assert order != sorted(order)
    for step, index in enumerate(order):
        if players == 4:  # partners are one bot
            first, second = rng.sample(bots, 2)
            seats = (first, second, first, second)
        else:  # three players: a bot may sit twice (padding)
            seats = tuple(rng.choice(bots) for _ in range(players))
        results.append(_result(index, seats, rng))
        if step % 5 == 0 and step:  # a journaled result read again, changed
            k = rng.randrange(len(results))
            results[k] = _result(results[k].index, results[k].seats, rng)
        went_on = _ratings(settings, results)
        assert went_on == _fresh(settings, results), step
        _ratings(settings, results)  # the state the next step goes on from
    # another tournament's bots in between start anew, then this one's again
    other = Settings(bots=parse_bots({"x": "random", "y": "random"}), games=2)
    _ratings(other, [_result(0, ("x", "y"), rng)])
    assert _ratings(settings, results) == _fresh(settings, results)


class _Counting:
    """The model, counting the games it rates."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.rated = 0

    def rate(self, teams: Any, ranks: Any) -> Any:
        self.rated += 1
        return self.model.rate(teams, ranks=ranks)


def test_snapshots_are_kept_every_few_games_and_dropped_when_the_games_change() -> None:
    """A refresh rates the games after the last snapshot the sequence shares, no more."""
    rng = random.Random(1)
    prefix = RatedPrefix(("a", "b"))
    counting = prefix.model = _Counting(prefix.model)
    keys: list[Any] = [
        (("a", "b"), (0, 1) if rng.random() < 0.5 else (1, 0)) for _ in range(5 * SNAPSHOT)
    ]
    prefix.rate(keys)
    assert sorted(prefix.saved) == [n * SNAPSHOT for n in range(6)]
    assert counting.rated == 5 * SNAPSHOT
    prefix.rate([*keys, (("b", "a"), (1, 0))])
    assert counting.rated == 5 * SNAPSHOT + 1  # one more game: one more rated
    changed = [*keys[: 2 * SNAPSHOT + 3], (("b", "a"), (0, 1)), *keys[2 * SNAPSHOT + 4 :]]
    again = prefix.rate(changed)
    assert counting.rated == 8 * SNAPSHOT + 1  # from the snapshot before the change
    assert sorted(prefix.saved) == [n * SNAPSHOT for n in range(6)]
    fresh = RatedPrefix(("a", "b")).rate(changed)
    assert {k: (r.mu, r.sigma) for k, r in again.items()} == {
        k: (r.mu, r.sigma) for k, r in fresh.items()
    }
