"""A restarted ladder counts the bot logs its earlier run left (``earlier_logs``): each
file given to its bot by the store's facts (bot names, match seats), oldest first; a
file no bot or two bots could own left alone."""

from __future__ import annotations

import os
from pathlib import Path

from sqlalchemy import insert

from cirulla.bots.botspec import parse_bots
from cirulla.bots.cgroups import MIB
from cirulla.clients.matches.journal import GameResult, Settings
from cirulla.clients.matches.log_budget import LogBudget
from cirulla.clients.tournament.runner import schedule_of
from cirulla.ladder.db import open_database
from cirulla.ladder.earlier_logs import count_earlier_logs
from cirulla.ladder.pool_store import PoolStore
from cirulla.ladder.pool_worker import PoolRunner
from cirulla.ladder.schema import bot_versions, bots, ladder_matches, ladder_seats
from cirulla.ladder.store import LadderStore


def test_each_earlier_log_counts_for_its_own_bot_oldest_first(tmp_path: Path) -> None:
    store = LadderStore(open_database(f"sqlite:///{tmp_path / 'ladder.sqlite3'}"))
    names = ["a", "a-1", "m-7-beef"]  # a bot's name may end in -digits, or look like a match
    with store.engine.begin() as conn:
        for n, name in enumerate(names, 1):
            conn.execute(insert(bots).values(id=n, name=name, created_at=0.0))
            conn.execute(
                insert(bot_versions).values(
                    id=n, bot_id=n, version=1, spec="random", queues="2p", created_at=0.0
                )
            )
        for match, server_id, seated in (
            ("lm-1", "m-5-cafe", (1, 2)),
            ("lm-2", "m-7-beef", (1, 2)),
        ):
            conn.execute(
                insert(ladder_matches).values(
                    id=match,
                    queue="2p",
                    seed=1,
                    settings="{}",
                    created_at=0.0,
                    server_match_id=server_id,
                )
            )
            for seat, version in enumerate(seated):
                conn.execute(
                    insert(ladder_seats).values(
                        match_id=match, seat=seat, side=seat, version_id=version
                    )
                )
    logs = tmp_path / "logs"
    logs.mkdir()
    files = {
        "a-1-1.log": "a-1",  # a process of bot a-1, not bot a's
        "a-2.log": "a",
        "m-5-cafe-0.log": "a",  # seat 0 of the game the server named m-5-cafe
        "m-5-cafe-1.log": "a-1",
        "m-7-beef-1.log": None,  # bot m-7-beef's process, or seat 1 of m-7-beef (a-1's)
        "m-9-dead-0.log": None,  # a game the store does not know
        "server.log": None,
        "b-1.log": None,  # no such bot
    }
    for age, name in enumerate(files):
        (logs / name).write_bytes(b"x" * MIB)
        os.utime(logs / name, (1000.0 + age, 1000.0 + age))
    os.utime(logs / "m-5-cafe-0.log", (10.0, 10.0))  # a's oldest
    budget = LogBudget(2 * MIB)
    assert count_earlier_logs(store, logs, budget) == 4
    for name, owner in files.items():
        if owner is None:  # not counted, not touched
            assert (logs / name).stat().st_size == MIB, name
    # a: 2 MiB, at its budget: whole; a-1 likewise
    assert budget.total("a") == 2 * MIB and budget.total("a-1") == 2 * MIB
    # half a MiB more for a: its oldest file (by time, not by name) is cut first
    (logs / "a-3.log").write_bytes(b"y\n" * (MIB // 4))
    budget.opened("a", logs / "a-3.log")
    budget.closed(logs / "a-3.log")
    assert (logs / "m-5-cafe-0.log").stat().st_size < MIB
    assert (logs / "a-2.log").stat().st_size == MIB
    assert budget.total("a") <= 2 * MIB


def test_a_pool_tournaments_referee_made_again_counts_the_logs_its_games_left(
    tmp_path: Path,
) -> None:
    """A worker that makes a pool tournament's referee again (the ladder restarted, or
    the referee was closed while idle) counts what the tournament's earlier games left
    in ``DATA/pool/<id>/logs``: each finished game's seat logs for their bots, each
    kept-alive process's log for its bot; a path a result names outside ``logs/`` and
    files of no bot are left whole."""
    store = PoolStore(open_database(f"sqlite:///{tmp_path / 'pool.sqlite3'}"))
    settings = Settings(bots=parse_bots({"a": "random", "b": "greedy"}), games=2, seed=1)
    tournament = store.open_tournament(None, settings.to_dict(), "out")
    first, second = schedule_of(settings)[:2]
    store.submit(tournament, first, 2)
    store.submit(tournament, second, 2)
    played = store.claim("w-old", 30.0)
    assert played is not None and store.mark_running(played.id, "w-old")
    result = GameResult(
        index=played.game.index,
        match_id="m-1-aa",
        seats=("a", "b", "a"),
        seed=1,
        deal_set=0,
        group=(),
        winner=0,
        totals=(51, 12),
        deals=4,
        seat_outcomes=("ok", "ok", "ok"),
        logs=("logs/m-1-aa-0.log", "logs/m-1-aa-1.log", "../escape.log"),
    )
    assert store.finish(played.id, "w-old", result.to_dict(), None, None, [])
    data = tmp_path / "data"
    out = data / "pool" / tournament
    logs = out / "logs"
    logs.mkdir(parents=True)
    files = {
        "logs/m-1-aa-0.log": "a",  # seat 0 of the finished game: a's oldest
        "logs/m-1-aa-1.log": "b",
        "logs/a-1.log": "a",  # kept-alive processes of a and b
        "logs/a-2.log": "a",
        "logs/b-3.log": "b",
        "logs/c-1.log": None,  # no such bot
        "logs/server.log": None,
        "../escape.log": None,  # named by the result, outside logs/: never touched
    }
    for age, name in enumerate(files):
        (out / name).write_bytes(b"x\n" * (MIB // 2))
        os.utime(out / name, (1000.0 + age, 1000.0 + age))
    os.utime(logs / "m-1-aa-0.log", (10.0, 10.0))
    budget_bytes = 5 * MIB // 2
    runner = PoolRunner(store, "127.0.0.1:1", data, "w-new", bot_logs=budget_bytes)
    job = store.claim("w-new", 30.0)
    assert job is not None and job.game.index == second.index
    try:
        referee = runner._take(job)
        budget = referee.pool.budget
        assert budget.total("a") <= budget_bytes < 3 * MIB  # three files of a, one MiB each
        assert (logs / "m-1-aa-0.log").stat().st_size < MIB  # the oldest cut first
        assert (logs / "a-1.log").stat().st_size == MIB
        assert budget.total("b") == 2 * MIB  # under its budget: both whole
        for name, owner in files.items():
            if owner is None:
                assert (out / name).stat().st_size == MIB, name
        assert budget.total("c") == 0
    finally:
        runner.close()
        store.engine.dispose()
