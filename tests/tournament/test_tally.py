"""The runner's SPRT check after every game (``results.Tally``, games added one at a time)
gives the standings that adding up every game again gave (the loop ``standings`` ran
before, kept here as the reference): games arriving out of order, forfeits and problems,
2, 3 and 4 players, a deck set with a third game, standings read earlier left as they
were."""

from __future__ import annotations

import copy
import dataclasses
import random

import pytest

from cirulla.bots.botspec import parse_bots
from cirulla.clients.matches.journal import GameResult, Settings
from cirulla.clients.tournament.results import (
    BotLine,
    HeadToHead,
    Standings,
    Tally,
    _record_game,
    side_bots,
    standings,
)
from cirulla.clients.tournament.stats import Penta, Sprt, Wdl

BOTS = ["a", "b", "c"]


def _reference(settings: Settings, results: list[GameResult]) -> Standings:
    """``standings(..., ratings=False)`` as it was: every game added up again."""
    ordered = sorted(results, key=lambda r: r.index)
    lines = {name: BotLine(name) for name in settings.bots}
    pairs: dict[tuple[str, ...], HeadToHead] = {}
    sets: dict[tuple[tuple[str, ...], int], list[float]] = {}
    sprt = Sprt(*settings.sprt) if settings.sprt else None
    void = 0
    for result in ordered:
        void += result.winner is None
        pair_wdl = _record_game(lines, result, settings.players)
        if len(set(result.group)) == 2 and len(result.group) == 2:
            a, b = result.group
            h2h = pairs.setdefault(result.group, HeadToHead(" vs ".join(result.group), a, b))
            game = pair_wdl.get((a, b), Wdl())
            h2h.wdl = h2h.wdl + game
            sets.setdefault((result.group, result.deal_set), []).append(game.score)
            if result.deals:
                sides = side_bots(result, settings.players)
                pts = {bot: float(result.totals[side]) for side, bot in sides.items()}
                h2h.points = (h2h.points[0] + pts[a], h2h.points[1] + pts[b])
                h2h.deals += result.deals
    for (group, _), scores in sets.items():
        if len(scores) == 2:
            pairs[group].penta = pairs[group].penta + Penta.of_pair(*scores)
    for h2h in pairs.values():
        if sprt is not None:
            h2h.sprt_llr = sprt.llr_penta(h2h.penta)
            h2h.sprt_llr_trinomial = sprt.llr(h2h.wdl)
            h2h.sprt_decision = sprt.verdict(h2h.sprt_llr)
    bots = sorted(lines.values(), key=lambda b: (-b.wdl.score, -b.win_rate, b.name))
    return Standings(bots, list(pairs.values()), len(ordered), void)


def _results(players: int, games: int, rng: random.Random) -> list[GameResult]:
    """Duplicate deck sets of every pairing of ``BOTS``: both seatings of each deck."""
    out: list[GameResult] = []
    pairings = [("a", "b"), ("a", "c"), ("b", "c")]
    sides = 3 if players == 3 else 2
    while len(out) < games:
        first, second = pairings[rng.randrange(len(pairings))]
        deal_set = len(out) // 2
        for seating in ((first, second), (second, first)):
            if players == 4:
                seats: tuple[str, ...] = (*seating, *seating)
            elif players == 3:
                seats = (seating[0], seating[1], seating[1])
            else:
                seats = seating
            winner = None if rng.random() < 0.15 else rng.randrange(sides)
            index = len(out)
            out.append(
                GameResult(
                    index=index,
                    match_id=f"m-{index}",
                    seats=seats,
                    seed=deal_set,
                    deal_set=deal_set,
                    group=(first, second),
                    winner=winner,
                    totals=tuple(rng.randrange(0, 60) for _ in range(sides)),
                    deals=rng.randrange(0, 6),
                    seat_outcomes=tuple("timeout" if rng.random() < 0.05 else "ok" for _ in seats),
                    forfeit_sides=(rng.randrange(sides),)
                    if winner is None and rng.random() < 0.5
                    else (),
                )
            )
    return out


@pytest.mark.parametrize("players", [2, 3, 4])
def test_games_added_one_at_a_time_give_the_standings_of_adding_all_again(players: int) -> None:
    rng = random.Random(players)
    settings = Settings(
        bots=parse_bots({b: "random" for b in BOTS}),
        games=400,
        players=players,
        sprt=(0.0, 50.0, 0.05, 0.05),
    )
    results = _results(players, 240, rng)
    order = list(range(len(results)))
    for n in range(0, len(order), 12):  # games end out of order, a dozen at a time
        part = order[n : n + 12]
        rng.shuffle(part)
        order[n : n + 12] = part
    tally = Tally(settings)
    played: list[GameResult] = []
    earlier: list[tuple[Standings, Standings]] = []
    for step, index in enumerate(order):
        tally.add(results[index])
        played.append(results[index])
        now = tally.standings()
        assert now == _reference(settings, played), f"after {step + 1} games"
        if step % 60 == 0:
            earlier.append((now, copy.deepcopy(now)))
    # what the SPRT decided on: some pairs complete, some pairings decided or not
    assert any(h.penta.pairs for h in now.head_to_head)
    assert all(h.sprt_decision is not None or h.sprt_llr is not None for h in now.head_to_head)
    # standings read earlier are copies: the games added after them changed nothing
    for kept, frozen in earlier:
        assert kept == frozen and kept.games < now.games


def test_the_pairings_are_listed_by_their_first_game_whatever_ends_first() -> None:
    rng = random.Random(11)
    settings = Settings(bots=parse_bots({b: "random" for b in BOTS}), games=40, players=2)
    results = _results(2, 40, rng)
    assert len({r.group for r in results}) == 3
    tally = Tally(settings)
    for result in reversed(results):
        tally.add(result)
    firsts = [
        next(r.group for r in results if " vs ".join(r.group) == h.pairing)
        for h in tally.standings().head_to_head
    ]
    assert firsts == sorted(firsts, key=lambda g: min(r.index for r in results if r.group == g))
    assert tally.standings() == _reference(settings, results)


def test_a_deck_set_with_a_third_game_counts_no_pair_of_it() -> None:
    rng = random.Random(7)
    settings = Settings(bots=parse_bots({b: "random" for b in BOTS}), games=20, players=2)
    results = _results(2, 12, rng)
    third = dataclasses.replace(results[0], index=len(results), match_id="m-again")
    tally = Tally(settings)
    for result in [*results, third]:
        tally.add(result)
    assert tally.standings() == _reference(settings, [*results, third])
    group = results[0].group
    complete = next(
        h for h in _reference(settings, results).head_to_head if h.pairing == " vs ".join(group)
    )
    after = next(h for h in tally.standings().head_to_head if h.pairing == " vs ".join(group))
    assert after.penta.pairs == complete.penta.pairs - 1  # its set is no longer a pair


def test_standings_with_ratings_are_the_tallys_with_ratings() -> None:
    rng = random.Random(3)
    settings = Settings(bots=parse_bots({b: "random" for b in BOTS}), games=100, players=2)
    results = _results(2, 60, rng)
    rated = standings(settings, reversed(results))
    plain = standings(settings, results, ratings=False)
    assert [b.name for b in rated.bots] == [b.name for b in plain.bots]
    assert any(b.rating_mu != 25.0 for b in rated.bots)
    assert all(b.rating_mu == 25.0 for b in plain.bots)
    strip = [dataclasses.replace(b, rating_mu=25.0, rating_sigma=25.0 / 3) for b in rated.bots]
    assert strip == plain.bots and rated.head_to_head == plain.head_to_head
