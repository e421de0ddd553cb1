"""Results reported at the same time by several workers: every result is recorded once
and every rating update builds on the one before it (no lost update), on PostgreSQL with
real concurrent transactions and on SQLite."""

from __future__ import annotations

import random
import threading

import pytest
from sqlalchemy import select, update

from cirulla.ladder import rating
from cirulla.ladder.db import open_database
from cirulla.ladder.schema import bot_versions, rating_history, ratings
from cirulla.ladder.store import (
    LadderStore,
    MatchConfig,
    MatchOutcome,
    MatchPlan,
    SeatOutcome,
    SeatPlan,
)

THREADS = 8
PER_THREAD = 10


def test_concurrent_results_are_rated_once_each_in_sequence(db_url: str) -> None:
    store = LadderStore(open_database(db_url), clock=lambda: 5_000_000.0)
    # claim() respects each bot's limit of matches being played: allow them all at once
    a, _, _ = store.add_bot("a", "random", max_concurrency=THREADS * PER_THREAD)
    b, _, _ = store.add_bot("b", "greedy", max_concurrency=THREADS * PER_THREAD)
    with store.engine.begin() as conn:
        conn.execute(update(bot_versions).values(validation_games_left=0))
    va, vb = a["version_id"], b["version_id"]
    plans = [  # seats alternate: results lock the two bots in both orders
        MatchPlan("2p", (SeatPlan(0, 0, x), SeatPlan(1, 1, y)), 1, MatchConfig())
        for x, y in [(va, vb), (vb, va)] * (THREADS * PER_THREAD // 2)
    ]
    ids = store.schedule(plans)
    a_side = {
        match_id: 0 if plan.seats[0].version_id == va else 1
        for match_id, plan in zip(ids, plans, strict=True)
    }
    workers = [store.register_worker(f"w{i}", "127.0.0.1:1") for i in range(THREADS)]
    mine: dict[str, list[str]] = {w: [] for w in workers}
    for i in range(len(ids)):
        worker = workers[i % THREADS]
        claimed = store.claim(worker, "127.0.0.1:1")
        assert claimed is not None
        mine[worker].append(claimed.id)
    winners = {match_id: random.Random(match_id).randrange(2) for match_id in ids}
    errors: list[BaseException] = []
    start = threading.Barrier(THREADS)

    def report(worker: str) -> None:
        try:
            start.wait()
            for match_id in mine[worker]:
                outcome = MatchOutcome(
                    winner=winners[match_id],
                    totals=(51, 30) if winners[match_id] == 0 else (30, 51),
                    seats=(SeatOutcome(0), SeatOutcome(1)),
                )
                assert store.finish(match_id, outcome)
                assert not store.finish(match_id, outcome)  # a second report: nothing
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=report, args=(w,)) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    with store.engine.connect() as conn:
        games = dict(conn.execute(select(ratings.c.version_id, ratings.c.games)).all())
        history = conn.execute(
            select(rating_history.c.version_id, rating_history.c.match_id, rating_history.c.mu)
            .where(rating_history.c.version_id == a["version_id"])
            .order_by(rating_history.c.id)
        ).all()
    assert games == {a["version_id"]: len(ids), b["version_id"]: len(ids)}
    assert sorted(h.match_id for h in history) == sorted(ids)
    # Replayed one by one in the order they were stored, the updates give the same
    # ratings: each one started from the previous one's result.
    skills = [rating.Skill(rating.MU0, rating.SIGMA0), rating.Skill(rating.MU0, rating.SIGMA0)]
    for row in history:
        a_won = winners[row.match_id] == a_side[row.match_id]
        new = rating.rate([[skills[0]], [skills[1]]], [1, 2] if a_won else [2, 1])
        skills = [new[0][0], new[1][0]]
        assert row.mu == pytest.approx(skills[0].mu)
