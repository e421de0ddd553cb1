"""A restarted ladder counts the bot logs its earlier run left (``earlier_logs``): each
file given to its bot by the store's facts (bot names, match seats), oldest first; a
file no bot or two bots could own left alone."""

from __future__ import annotations

import os
from pathlib import Path

from sqlalchemy import insert

from cirulla.bots.cgroups import MIB
from cirulla.clients.matches.log_budget import LogBudget
from cirulla.ladder.db import open_database
from cirulla.ladder.earlier_logs import count_earlier_logs
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
