"""The pool's wake-ups (``cirulla.ladder.pool_notify``), on the real PostgreSQL: a job
queued wakes an idle worker at once, a result reported ends the runner's wait at once,
a dropped listening connection is connected again, and with the notifications lost the
polls still finish everything.

Each test gives the waits it checks a poll far longer than its bound (the runner's
``poll_seconds=30``, a worker's ``--idle-poll 3600``): only a notification can end them
in time. Listening connections are told apart by their ``application_name`` and found
in the test's own database only (other tests share the server)."""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from sqlalchemy import select

from cirulla.bots.botspec import parse_bots
from cirulla.cli import main
from cirulla.clients.matches.journal import GameResult, Settings
from cirulla.clients.matches.schedule import ScheduledGame
from cirulla.clients.tournament.pool import PoolReferee
from cirulla.clients.tournament.runner import schedule_of
from cirulla.ladder.db import open_database
from cirulla.ladder.pgtemp import libpq_url
from cirulla.ladder.pool_notify import APPLICATION_NAMES, JOBS_CHANNEL, RESULTS_CHANNEL
from cirulla.ladder.pool_store import PoolStore
from cirulla.ladder.schema import pool_jobs, workers
from tests.ladder.test_workers import stop, wait_for
from tests.tournament.test_pool import journal, start_worker, tournament

SETTINGS = Settings(bots=parse_bots({"random": "random", "greedy": "greedy"}), games=4, seed=1)
#: What a notification's payload may be: a job's id, nothing else.
JOB_ID = re.compile(r"pj-[0-9a-f]{16}")


def listeners(url: str, channel: str) -> list[int]:
    """The backends of this database listening on ``channel`` (by application name,
    once their LISTEN ran)."""
    with psycopg.connect(libpq_url(url), autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
            "AND application_name = %s AND query LIKE 'LISTEN%%'",
            (APPLICATION_NAMES[channel],),
        ).fetchall()
    return [int(pid) for (pid,) in rows]


def drop(url: str, channel: str) -> int:
    """Kill the listening connections on ``channel`` of this database; how many."""
    with psycopg.connect(libpq_url(url), autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND application_name = %s",
            (APPLICATION_NAMES[channel],),
        ).fetchall()
    return len(rows)


def reconnected(url: str, channel: str, old: int) -> int:
    """Wait until ``channel``'s listener listens again on a new connection; its pid."""
    pids = wait_for("the listener back", lambda: [p for p in listeners(url, channel) if p != old])
    return int(pids[0])


def result_of(game: ScheduledGame) -> dict[str, object]:
    """A made-up result for ``game``, as a worker reports one."""
    done = GameResult(
        index=game.index,
        match_id=f"m-test-{game.index}",
        seats=game.seats,
        seed=game.seed,
        deal_set=game.deal_set,
        group=game.group,
        winner=0,
        totals=(11, 3),
        deals=2,
        seat_outcomes=("ok", "ok"),
    )
    return done.to_dict()


class PlayInThread:
    """``referee.play(game)`` in a thread: when it returned, and what."""

    def __init__(self, referee: PoolReferee, game: ScheduledGame) -> None:
        self.returned_at = 0.0
        self.result: GameResult | None = None
        self.thread = threading.Thread(target=self._play, args=(referee, game), daemon=True)
        self.thread.start()

    def _play(self, referee: PoolReferee, game: ScheduledGame) -> None:
        self.result = referee.play(game)
        self.returned_at = time.monotonic()

    def join(self) -> GameResult:
        self.thread.join(60)
        assert not self.thread.is_alive(), "play() still waiting"
        assert self.result is not None
        return self.result


@pytest.fixture
def heard(postgres_url: str) -> Iterator[None]:
    """The test's own LISTEN on both channels: after the test, each has carried job ids
    and nothing else."""
    conn = psycopg.connect(libpq_url(postgres_url), autocommit=True)
    conn.execute(f"LISTEN {JOBS_CHANNEL}")
    conn.execute(f"LISTEN {RESULTS_CHANNEL}")
    yield
    got = [(n.channel, n.payload) for n in conn.notifies(timeout=0.5)]
    conn.close()
    assert {channel for channel, _ in got} == {JOBS_CHANNEL, RESULTS_CHANNEL}, got
    assert all(JOB_ID.fullmatch(payload) for _, payload in got), got


def play_as_worker(store: PoolStore, game: ScheduledGame) -> float:
    """Claim the game's job (looking every 0.25 s), report a result; when it was
    reported."""
    job = wait_for("the job", lambda: store.claim("w-test", 30), timeout=30)
    assert job.game.index == game.index
    assert store.mark_running(job.id, "w-test")
    assert store.finish(job.id, "w-test", result_of(game), None, None, [])
    return time.monotonic()


def test_a_reported_result_ends_the_runners_wait_at_once_even_after_a_drop(
    postgres_url: str, tmp_path: Path, heard: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """The runner polls its jobs every 30 s here: each result reaches it in well under
    that, before and after its listening connection is killed (it listens again, with
    one log line)."""
    caplog.set_level(logging.INFO, logger="cirulla.pool")
    referee = PoolReferee(SETTINGS, postgres_url, tmp_path / "out", poll_seconds=30)
    store = PoolStore(open_database(postgres_url))
    games = schedule_of(SETTINGS)
    try:
        assert referee.listener.listening.wait(30)
        play = PlayInThread(referee, games[0])
        reported = play_as_worker(store, games[0])
        assert play.join().winner == 0
        assert play.returned_at - reported < 5, "the result waited for the poll"

        old = listeners(postgres_url, RESULTS_CHANNEL)
        assert len(old) == 1  # one listening connection for every game of the runner
        assert drop(postgres_url, RESULTS_CHANNEL) == 1
        reconnected(postgres_url, RESULTS_CHANNEL, old[0])
        play = PlayInThread(referee, games[1])
        reported = play_as_worker(store, games[1])
        assert play.join().index == games[1].index
        assert play.returned_at - reported < 5, "the result waited for the poll"
    finally:
        referee.close()
        store.engine.dispose()
    lost = [r.getMessage() for r in caplog.records if "pool_listen" in r.getMessage()]
    assert len(lost) == 1 and lost[0].startswith("pool_listen_lost"), lost


def test_without_its_listener_the_runner_sees_results_by_its_poll(
    postgres_url: str, tmp_path: Path, heard: Any
) -> None:
    """LISTEN never issued (the listener closed before the game): the result is read at
    the next poll."""
    referee = PoolReferee(SETTINGS, postgres_url, tmp_path / "out", poll_seconds=0.5)
    store = PoolStore(open_database(postgres_url))
    game = schedule_of(SETTINGS)[0]
    try:
        started = time.monotonic()
        referee.listener.close()
        assert time.monotonic() - started < 5  # its pipe ends the wait, not a timeout
        # its server process leaves a moment after the connection closed (it was still in
        # pg_stat_activity once, in a full run): gone within seconds, then nobody listens
        wait_for("no listener", lambda: not listeners(postgres_url, RESULTS_CHANNEL), 10)
        play = PlayInThread(referee, game)
        play_as_worker(store, game)
        assert play.join().totals == (11, 3)
    finally:
        referee.close()
        store.engine.dispose()


@pytest.mark.slow
def test_a_queued_job_wakes_an_idle_worker_at_once_after_a_drop(
    postgres_url: str, tmp_path: Path
) -> None:
    """With ``--idle-poll 3600`` an idle worker's waits are 0.2 s for its first 2 s, then
    0.4, 0.8, ... 6.4, 12.8 s: 20 s after it registered it is in a wait that ends about
    27 s after that (a slow start only moves the waits later). Its listening connection
    killed meanwhile is back at once; a job queued then is claimed within seconds."""
    engine = open_database(postgres_url)
    store = PoolStore(engine)
    worker = start_worker(postgres_url, tmp_path / "worker", 1, "--idle-poll", "3600")
    try:
        wait_for("the worker", lambda: _count(engine, workers.c.id))
        registered = time.monotonic()
        old = wait_for("its listener", lambda: listeners(postgres_url, JOBS_CHANNEL))
        assert len(old) == 1
        assert drop(postgres_url, JOBS_CHANNEL) == 1
        reconnected(postgres_url, JOBS_CHANNEL, old[0])
        time.sleep(max(0.0, registered + 20 - time.monotonic()))
        tournament_id = store.open_tournament(None, SETTINGS.to_dict(), "test")
        store.submit(tournament_id, schedule_of(SETTINGS)[0], 2)
        wait_for("a claim", lambda: _count(engine, pool_jobs.c.claimed_at), timeout=60)
        with engine.connect() as conn:
            job = conn.execute(select(pool_jobs.c.created_at, pool_jobs.c.claimed_at)).one()
        assert job.claimed_at - job.created_at < 5, "the job waited for the idle poll"
    finally:
        stop(worker)
        engine.dispose()
    text = (tmp_path / "worker.log").read_text()
    assert text.count("pool_listen_lost") == 1, text
    assert "Traceback" not in text


@pytest.mark.slow
def test_with_the_listeners_killed_over_and_over_the_polls_finish_the_tournament(
    postgres_url: str, tmp_path: Path
) -> None:
    """Every listening connection (the worker's, the runner's) is killed as soon as it
    shows up: the notifications are lost, the polls find the jobs and the results, the
    tournament ends, and nothing crashes."""
    killing = threading.Event()
    kills: list[int] = []

    def killer() -> None:
        while not killing.wait(0.05):
            kills.extend(drop(postgres_url, ch) for ch in (JOBS_CHANNEL, RESULTS_CHANNEL))

    engine = open_database(postgres_url)
    worker = start_worker(postgres_url, tmp_path / "worker", 2)
    thread = threading.Thread(target=killer, daemon=True)
    thread.start()
    try:
        wait_for("the worker", lambda: _count(engine, workers.c.id))
        out = tmp_path / "pool"
        args = tournament(out, "--games", "4", "--concurrency", "2", "--db", postgres_url)
        assert main(args) == 0
        assert sorted(g["index"] for g in journal(out)) == [0, 1, 2, 3]
    finally:
        killing.set()
        thread.join(30)
        stop(worker)
        engine.dispose()
    assert sum(kills) >= 2  # both kinds of listener connected, and were killed
    text = (tmp_path / "worker.log").read_text()
    assert "pool_listen_lost" in text and "Traceback" not in text


def _count(engine: Any, column: Any) -> int:
    with engine.connect() as conn:
        return len(conn.execute(select(column).where(column.is_not(None))).all())
