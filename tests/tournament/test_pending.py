"""The runner's games still to play, read from the first game not done (``_pending``),
are the ones its old whole-schedule filter named (kept here as the reference): games
finishing out of order, SPRT-decided pairings starting no new deck set, the count the
progress bar shows, and the deal groups the bot pool is told are over."""

from __future__ import annotations

import io
import random
from pathlib import Path

from cirulla.bots.botspec import parse_bots
from cirulla.clients.matches.bot_pool import BotPool
from cirulla.clients.matches.journal import GameResult, Settings
from cirulla.clients.matches.referee import deal_group
from cirulla.clients.matches.schedule import ScheduledGame
from cirulla.clients.tournament.results import HeadToHead, Standings, standings
from cirulla.clients.tournament.runner import RunOptions, Tournament
from cirulla.console import output_console


def _reference(t: Tournament, st: Standings) -> list[ScheduledGame]:
    """``Tournament.pending`` as it was: the whole schedule filtered at every look."""

    def decided(group: tuple[str, ...]) -> bool:
        return t.sprt is not None and any(
            h.sprt_decision for h in st.head_to_head if tuple(group) == (h.first, h.second)
        )

    return [
        g
        for g in t.schedule
        if g.index not in t.done
        and not (decided(g.group) and (g.group, g.deal_set) not in t.started_sets)
    ]


def _result(game: ScheduledGame) -> GameResult:
    return GameResult(
        index=game.index,
        match_id=f"m-{game.index}",
        seats=game.seats,
        seed=game.seed,
        deal_set=game.deal_set,
        group=game.group,
        winner=0,
        totals=(11, 3),
        deals=2,
        seat_outcomes=("ok",) * len(game.seats),
    )


def _tournament(tmp_path: Path, sprt: bool) -> Tournament:
    settings = Settings(
        bots=parse_bots({"a": "random", "b": "greedy", "c": "random"}),
        games=60,
        seed=3,
        sprt=(0.0, 50.0, 0.05, 0.05) if sprt else None,
    )
    return Tournament(settings, RunOptions(out=tmp_path), output_console(file=io.StringIO()))


def test_pending_read_from_the_front_is_the_whole_schedule_filtered(tmp_path: Path) -> None:
    t = _tournament(tmp_path / "plain", sprt=False)
    st = standings(t.settings, [])
    rng = random.Random(5)
    order = [g for g in t.schedule]
    for n in range(0, len(order), 5):  # games end out of order, a few at a time
        part = order[n : n + 5]
        rng.shuffle(part)
        order[n : n + 5] = part
    for played, game in enumerate(order, start=1):
        t.started_sets.add((game.group, game.deal_set))
        t.done[game.index] = _result(game)
        assert t.pending(st) == _reference(t, st)
        assert t._pending_count(st, played) == len(_reference(t, st))
    assert t.pending(st) == [] and t._front == len(t.schedule)


def test_a_decided_pairing_starts_no_new_deck_set(tmp_path: Path) -> None:
    t = _tournament(tmp_path / "sprt", sprt=True)
    half = t.schedule[: len(t.schedule) // 3]
    for game in half[:-1]:  # the last game of a set left unplayed: its twin is started
        t.started_sets.add((game.group, game.deal_set))
        t.done[game.index] = _result(game)
    t.started_sets.add((half[-1].group, half[-1].deal_set))
    decided = t.schedule[0].group
    st = Standings([], [HeadToHead(" vs ".join(decided), *decided, sprt_decision="H1")], 0, 0)
    pending = t.pending(st)
    assert pending == _reference(t, st)
    assert half[-1] in pending  # its set was started: finished, so the pair stays whole
    assert not any(
        g.group == decided and (g.group, g.deal_set) not in t.started_sets for g in pending
    )
    assert any(g.group != decided for g in pending)
    assert t._pending_count(st, len(half) - 1) == len(pending)


def test_the_pool_is_told_a_group_is_over_only_when_none_of_its_games_is_left(
    tmp_path: Path,
) -> None:
    t = _tournament(tmp_path / "groups", sprt=False)
    st = standings(t.settings, [])
    told: list[str] = []

    class Pool(BotPool):  # a real pool (no process started) that notes what it is told
        def group_over(self, group: str) -> None:
            told.append(group)
            super().group_over(group)

    pool = Pool(t.settings.bots, tmp_path / "logs")
    seed = t.schedule[0].seed
    *played, last = t._by_seed[seed]  # every game dealt from the seed, all pairings
    assert played and all(g.seed == seed for g in played)
    for game in played:
        t.done[game.index] = _result(game)
    t._settle_groups(pool, {seed}, [last], st)
    assert told == []  # its last game is being played
    t._settle_groups(pool, {seed}, [], st)
    assert told == []  # its last game is still to play
    t.done[last.index] = _result(last)
    t._settle_groups(pool, {seed}, [], st)
    assert told == [deal_group(seed)]
