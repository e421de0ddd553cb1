"""Tournaments on the worker pool (``cirulla tournament --db``), on the real PostgreSQL
with real ``cirulla ladder worker`` processes, their match servers and bot processes.

Small budgets: random against greedy (seeded, so deterministic), target 11, a few games.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import grpc
import pytest
from sqlalchemy import select

from cirulla.bots.botspec import parse_bots
from cirulla.cli import main
from cirulla.clients.matches.journal import Settings
from cirulla.clients.tournament.runner import schedule_of
from cirulla.ladder.db import open_database
from cirulla.ladder.pool_store import PoolStore
from cirulla.ladder.schema import pool_jobs, workers
from cirulla.v1 import match_service_pb2, match_service_pb2_grpc
from tests.ladder.test_workers import start as cirulla
from tests.ladder.test_workers import stop, wait_for

LEASE = 4.0
BOTS = ("--bot", "random", "--bot", "greedy")
#: What a game's result is made of, whoever played it.
SAME = ("index", "seats", "seed", "deal_set", "winner", "totals", "deals", "seat_outcomes")


def start_worker(db: str, folder: Path, concurrency: int = 1, *extra: str) -> subprocess.Popen[Any]:
    args = ["ladder", "worker", "--db", db, "--listen", "127.0.0.1:0", "--data", str(folder)]
    args += ["--concurrency", str(concurrency), "--lease", str(LEASE), *extra]
    return cirulla(args, folder.with_suffix(".log"))


def journal(out: Path) -> list[dict[str, Any]]:
    path = out / "games.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def essentials(out: Path) -> dict[int, tuple[Any, ...]]:
    return {g["index"]: tuple(g[k] for k in SAME) for g in journal(out)}


def tournament(out: Path, *args: str) -> list[str]:
    return [
        "tournament",
        "--out",
        str(out),
        "--seed",
        "5",
        "--bot-seed",
        "9",
        "--target",
        "11",
        *BOTS,
        *args,
    ]


@pytest.mark.slow
def test_pool_games_are_the_local_games(postgres_url: str, tmp_path: Path) -> None:
    """Two workers play a tournament's games with exactly the results of a local run;
    records land in the output folder; the workers' servers keep them withheld."""
    local = tmp_path / "local"
    assert main(tournament(local, "--games", "4")) == 0
    engine = open_database(postgres_url)
    procs = [start_worker(postgres_url, tmp_path / f"worker-{n}") for n in "ab"]
    try:
        wait_for("two workers", lambda: len(_workers(engine)) == 2)
        pool = tmp_path / "pool"
        args = tournament(pool, "--games", "4", "--concurrency", "4", "--db", postgres_url)
        assert main(args) == 0
        played = essentials(pool)
        assert played == essentials(local)
        assert len(played) == 4
        games = journal(pool)
        with engine.connect() as conn:
            jobs = conn.execute(
                select(pool_jobs, workers.c.server_address).join(
                    workers, workers.c.id == pool_jobs.c.worker_id
                )
            ).all()
        assert sorted(j.game_index for j in jobs) == [0, 1, 2, 3]
        assert {j.status for j in jobs} == {"finished"}
        host = {j.game_index: j.server_address for j in jobs}
        # A worker's server hosts only the twins it played: a record whose twin was
        # played elsewhere stays closed to anyone without the worker's admin token.
        for game in games:
            record = json.loads((pool / "records" / f"{game['match_id']}.json").read_text())
            assert record["match_id"] == game["match_id"]
            assert (pool / "records" / f"{game['match_id']}.txt").read_text()
            twins = {g["index"] for g in games if g["seed"] == game["seed"]}
            split = len({host[i] for i in twins}) > 1
            with grpc.insecure_channel(host[game["index"]]) as channel:
                stub = match_service_pb2_grpc.MatchServiceStub(channel)
                request = match_service_pb2.GetRecordRequest(record_id=record["record_id"])
                try:
                    served = stub.GetRecord(request, timeout=10).record
                    assert not split, f"record of game {game['index']} served"
                    assert served.match_id == game["match_id"]
                except grpc.RpcError as exc:
                    assert split, exc
                    assert exc.code() == grpc.StatusCode.FAILED_PRECONDITION
                    assert "withheld" in (exc.details() or "")
    finally:
        for proc in procs:
            stop(proc)
        engine.dispose()


def _workers(engine: Any) -> list[tuple[str]]:
    with engine.connect() as conn:
        return [tuple(r) for r in conn.execute(select(workers.c.server_address)).all()]


def test_bad_pool_database_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = {
        f"sqlite:///{tmp_path / 'x.sqlite3'}": "the worker pool needs PostgreSQL",
        "postgresql://nobody@127.0.0.1:9/none": "cannot use the database",
    }
    for db, message in cases.items():
        out = tmp_path / f"out-{len(db)}"
        code = main(tournament(out, "--games", "2", "--db", db))
        err = capsys.readouterr().err
        assert code == 2, err
        assert message in err
        assert "Traceback" not in err
        assert len(err.strip().splitlines()) == 1, err


# A deterministic bot slow enough to be caught mid-game: it sleeps the seconds written in
# the file ``delay`` beside it at each decision (read when it starts: a test sets 0 once
# the moment it needs a slow game is past, and the games after that play at full speed).
# It notes its seat token in a file of the test (to look for it everywhere afterwards)
# and says in its log whether the token is on its command line.
SLOW_BOT = """
import os, sys, time
from cirulla.bots.kit import run_bot

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "delay")) as f:
    DELAY = float(f.read())
token = os.environ["CIRULLA_TOKEN"]
print("token on the command line:", any(token in a for a in sys.argv), file=sys.stderr)
if len(sys.argv) > 1:  # the test's file of tokens, named on the command line
    with open(sys.argv[1], "a") as f:
        f.write(token + "\\n")

def decide(view, legal, time_left):
    time.sleep(DELAY)
    return 0

run_bot(decide, name="slow")
"""
#: Slow enough that a game seen running is still running when it is killed.
SLOW_SECONDS = 0.15


def slow_bot(folder: Path) -> Path:
    """The slow bot, in a folder of its own (bound whole in a sandbox, ``delay`` too)."""
    bot = folder / "slow-bot" / "slow_bot.py"
    bot.parent.mkdir()
    bot.write_text(SLOW_BOT)
    set_delay(bot, SLOW_SECONDS)
    return bot


def set_delay(bot: Path, seconds: float) -> None:
    """The slow bot's delay a decision, for the bot processes started from now on."""
    (bot.parent / "delay").write_text(f"{seconds}\n")


@pytest.mark.slow
def test_runner_and_worker_killed_then_resume(postgres_url: str, tmp_path: Path) -> None:
    """SIGKILL a worker mid-game and the runner: the game is re-queued when its lease
    expires and played by another worker, ``--resume`` journals every game once without
    replaying finished ones, and no seat token reaches a log, a file or the database."""
    bot = slow_bot(tmp_path)
    tokens = tmp_path / "tokens.txt"
    engine = open_database(postgres_url)
    out = tmp_path / "pool"
    args = ["tournament", "--out", str(out), "--seed", "3", "--target", "11"]
    args += ["--bot", f"slow=cmd:{{python}} {bot} {tokens}", "--bot", "greedy", "--games", "6"]
    args += ["--concurrency", "2", "--db", postgres_url]
    # the slow bot writes its seat tokens to a file of the test, which no sandboxed bot
    # can (tests/ladder/test_fairplay.py): these workers run it unsandboxed
    procs = {"a": start_worker(postgres_url, tmp_path / "worker-a", 2, "--no-sandbox")}
    try:
        procs["runner"] = cirulla(args, tmp_path / "runner.log")

        def running_on_a() -> Any:
            if not journal(out):
                return None
            with engine.connect() as conn:
                return conn.execute(
                    select(pool_jobs.c.id, pool_jobs.c.worker_id)
                    .join(workers, workers.c.id == pool_jobs.c.worker_id)
                    .where(pool_jobs.c.status == "running", workers.c.name.like("%worker-a"))
                ).first()

        killed = wait_for("a game running on worker a", running_on_a)
        os.killpg(procs["a"].pid, signal.SIGKILL)
        os.killpg(procs["runner"].pid, signal.SIGKILL)
        procs["a"].wait()
        procs["runner"].wait()
        # the game a held when it died (still "running", its lease left to expire): asked
        # again after the kill, since the one seen before it may have ended in between
        killed = running_on_a()
        assert killed is not None, "worker a held no game when it was killed"
        # The kill is past: the slow bot's games need no longer be slow (worker b starts
        # new bot processes, the lost game's replay included).
        set_delay(bot, 0)
        before = {g["index"] for g in journal(out)}
        with engine.connect() as conn:
            finished_before = set(
                conn.execute(
                    select(pool_jobs.c.game_index).where(pool_jobs.c.status == "finished")
                ).scalars()
            )
        procs["b"] = start_worker(postgres_url, tmp_path / "worker-b", 2, "--no-sandbox")
        assert main(["tournament", "--resume", str(out), "--db", postgres_url]) == 0
    finally:
        for proc in procs.values():
            stop(proc)
    games = journal(out)
    assert sorted(g["index"] for g in games) == list(range(6))  # each game once
    with engine.connect() as conn:
        jobs = {j.id: j for j in conn.execute(select(pool_jobs)).all()}
        dump = "\n".join(repr(tuple(j)) for j in jobs.values())
    engine.dispose()
    assert {j.status for j in jobs.values()} == {"finished"}
    lost = jobs[killed.id]
    assert lost.attempts >= 2
    assert f"worker {killed.worker_id} stopped renewing its lease" in lost.notes
    # Finished before the kill: never played again, whether journaled then or on resume.
    assert before <= finished_before
    for job in jobs.values():
        if job.game_index in finished_before:
            assert job.attempts == 1, job
    # Seat tokens: on no command line, in no log, output file or database row.
    seen = [t for t in tokens.read_text().split() if t]
    assert len(seen) >= 6
    slow_logs = [p for p in (out / "logs").glob("*.log") if "token on the command" in p.read_text()]
    assert slow_logs
    for path in slow_logs:
        assert "token on the command line: True" not in path.read_text()
    files = [p for p in tmp_path.rglob("*") if p.is_file() and ".sqlite3" not in p.name]
    texts = [p.read_text(errors="replace") for p in files if p != tokens]
    texts.append(dump)
    for token in seen:
        leaks = [t for t in texts if token in t]
        assert not leaks, token


@pytest.mark.slow
def test_sigterm_cancels_queued_jobs_and_sprt_stops_the_pool(
    postgres_url: str, tmp_path: Path
) -> None:
    """A runner queues at most --concurrency jobs: SIGTERM cancels those no worker has
    claimed, ``--resume`` queues them again, and once the SPRT decides the run ends with
    no job queued or played beyond the games it journals."""
    engine = open_database(postgres_url)
    out = tmp_path / "pool"
    args = ["tournament", "--out", str(out), "--seed", "5", "--target", "11", "--games", "40"]
    bot = slow_bot(tmp_path)
    args += ["--bot", f"slow=cmd:{{python}} {bot}", "--bot", "greedy"]
    args += ["--concurrency", "4", "--db", postgres_url, "--sprt", "0", "400", "0.1", "0.1"]
    worker = start_worker(postgres_url, tmp_path / "worker", 1)
    try:
        runner = cirulla(args, tmp_path / "runner.log")
        wait_for("a finished game", lambda: journal(out))
        os.killpg(runner.pid, signal.SIGTERM)
        assert runner.wait(timeout=120) == 130
        with engine.connect() as conn:
            states = conn.execute(select(pool_jobs.c.status, pool_jobs.c.cancel_reason)).all()
        assert len(states) <= len(journal(out)) + 4
        cancelled = [r for s, r in states if s == "cancelled"]
        assert cancelled  # one worker, four jobs queued: some were never claimed
        assert all("runner stopped before a worker claimed it" in r for r in cancelled)
        assert "scheduled" not in {s for s, _ in states}
        # Slow games only kept the first run from deciding before its SIGTERM: the
        # resumed run's games (until the SPRT decides) play at full speed.
        set_delay(bot, 0)
        assert main(["tournament", "--resume", str(out), "--db", postgres_url]) == 0
    finally:
        stop(worker)
    games = journal(out)
    with engine.connect() as conn:
        jobs = conn.execute(select(pool_jobs.c.game_index, pool_jobs.c.status)).all()
    engine.dispose()
    assert len(games) < 40  # the SPRT decided
    results = json.loads((out / "results.json").read_text())
    assert results["standings"]["head_to_head"][0]["sprt"]["decision"] in ("H0", "H1")
    finished = sorted(i for i, s in jobs if s == "finished")
    assert finished == sorted(g["index"] for g in games)  # each journaled game played once
    assert {s for _, s in jobs} <= {"finished", "cancelled"}


def test_a_resume_with_other_settings_is_a_new_pool_tournament(postgres_url: str) -> None:
    """Same settings: the same pool tournament and its jobs (finished ones reused).
    Other settings (e.g. --move-limit changed on resume): a new one, and the old one's
    waiting jobs are cancelled, since they would be played with the old settings."""
    store = PoolStore(open_database(postgres_url))
    settings = Settings(bots=parse_bots({"random": "random", "greedy": "greedy"}), games=2, seed=1)
    first = store.open_tournament(None, settings.to_dict(), "out")
    game = schedule_of(settings)[0]
    assert store.submit(first, game, 2) == "scheduled"
    assert store.open_tournament(first, settings.to_dict(), "out") == first
    assert store.submit(first, game, 2) == "scheduled"  # the same job, not a second one
    slower = dataclasses.replace(settings, move_limit_ms=20_000)
    second = store.open_tournament(first, slower.to_dict(), "out")
    assert second != first
    old = store.job(first, game.index)
    assert old is not None and old.status == "cancelled"
    assert "resumed with other settings" in old.cancel_reason
    assert store.job(second, game.index) is None
    store.engine.dispose()
