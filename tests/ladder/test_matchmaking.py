"""Matchmaking: seeds, rating windows, duplicate pairs (pure functions, no database)."""

from __future__ import annotations

import random

from cirulla.ladder.matchmaking import WINDOW_EXTRA, pick_seed, plan
from cirulla.ladder.store import Candidate, MatchConfig


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


def test_deck_seeds_are_wide_and_not_from_the_matchmaking_generator() -> None:
    # the same matchmaking generator twice: the pairings repeat, the decks do not
    seeds = [plan("2p", [cand(1), cand(2)], MatchConfig(), random.Random(7))[0].seed for _ in "ab"]
    assert seeds[0] != seeds[1]
    wide = [plan("3p", [cand(1), cand(2), cand(3)], MatchConfig(), random.Random(8))[0].seed]
    wide += [
        plan("2p", [cand(1), cand(2)], MatchConfig(), random.Random(9))[0].seed for _ in "abcd"
    ]
    assert max(s.bit_length() for s in wide) > 31  # beyond any 2**31 search
    assert all(0 <= s < 2**63 for s in wide)  # a BIGINT holds it


def test_every_ladder_match_gives_its_bots_seeds_of_its_own() -> None:
    from cirulla.clients.matches.schedule import bot_seed
    from cirulla.ladder.runner import referee_settings
    from cirulla.ladder.store import ClaimedMatch, ClaimedSeat

    seats = (ClaimedSeat(0, 0, 1, "a", 1, "random"), ClaimedSeat(1, 1, 2, "b", 1, "greedy"))
    match = ClaimedMatch("lm-1", "2p", 5, None, MatchConfig(), seats)
    bases = {referee_settings(match).bot_seed for _ in range(3)}
    assert len(bases) == 3 and None not in bases  # drawn per match, never the default
    given = {bot_seed(base or 0, 0, 1) for base in bases}
    assert len(given) == 3  # so the same seat gets another CIRULLA_SEED each match
