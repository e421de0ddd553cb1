"""Matchmaking: seeds, rating windows, duplicate pairs (pure functions, no database)."""

from __future__ import annotations

import random

from cirulla.clients.ladder.matchmaking import WINDOW_EXTRA, pick_seed, plan
from cirulla.clients.ladder.store import Candidate, MatchConfig


def cand(i: int, mu: float = 25.0, games: int = 5, last: float | None = 100.0, val: int = 0):
    return Candidate(i, f"b{i}", 100 + i, 1, "random", mu, 2.0, games, last, val, 2)


def test_seed_prefers_validation_then_new_then_least_recently_played() -> None:
    rng = random.Random(1)
    field = [cand(1, last=50.0), cand(2, last=10.0), cand(3, games=0, last=None)]
    assert pick_seed(field, rng).bot_id == 3
    assert pick_seed([*field, cand(4, val=2, last=500.0)], rng).bot_id == 4
    assert pick_seed(field[:2], rng).bot_id == 2


def test_two_player_plans_are_duplicate_pairs_with_seats_swapped() -> None:
    rng = random.Random(2)
    plans = plan("2p", [cand(1), cand(2)], MatchConfig(), rng)
    assert len(plans) == 2
    first, second = plans
    assert first.pair_id and first.pair_id == second.pair_id
    assert first.seed == second.seed
    assert [s.version_id for s in first.seats] == [s.version_id for s in reversed(second.seats)]
    assert (first.pair_index, second.pair_index) == (0, 1)


def test_four_players_swap_partnerships_and_three_players_play_once() -> None:
    rng = random.Random(3)
    first, second = plan("4p", [cand(i) for i in range(1, 5)], MatchConfig(), rng)
    sides = lambda p: {s.version_id: s.side for s in p.seats}  # noqa: E731
    assert all(sides(first)[v] != sides(second)[v] for v in sides(first))
    partners = {v for v, side in sides(first).items() if side == 0}
    assert len(partners) == 2
    (single,) = plan("3p", [cand(i) for i in range(1, 4)], MatchConfig(), rng)
    assert single.pair_id is None and [s.side for s in single.seats] == [0, 1, 2]
    assert plan("4p", [cand(i) for i in range(1, 4)], MatchConfig(), rng) == []


def test_opponents_come_from_the_closest_ratings() -> None:
    rng = random.Random(4)
    seed = cand(0, mu=30.0, games=0, last=None)
    others = [cand(i, mu=30.0 - i) for i in range(1, 12)]
    chosen = set()
    for _ in range(200):
        plans = plan("2p", [seed, *others], MatchConfig(), rng)
        chosen |= {s.version_id for s in plans[0].seats} - {seed.version_id}
    # only the 1 + WINDOW_EXTRA nearest are ever drawn, and more than one of them is
    assert chosen <= {100 + i for i in range(1, 2 + WINDOW_EXTRA)}
    assert len(chosen) > 1
