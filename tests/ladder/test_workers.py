"""Beyond one machine, on the real PostgreSQL: `cirulla ladder serve --concurrency 0`
only schedules, two `cirulla ladder worker` processes play, a connect-in bot enrolled at
the ladder plays its seats on whichever worker hosts them, and one worker is SIGKILLed
mid-match. Its running matches are cancelled with the reason once its lease expires,
the other worker goes on, every match ends once and every rated result is in the
ratings exactly once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select, update

from cirulla.ladder.db import open_database
from cirulla.ladder.schema import (
    bot_versions,
    ladder_matches,
    ladder_seats,
    rating_history,
    ratings,
    workers,
)
from cirulla.ladder.store import LadderStore
from tests.server_harness import tied_to_this_process

LEASE = 4.0


def start(args: list[str], log: Path, env: dict[str, str] | None = None) -> subprocess.Popen[Any]:
    return subprocess.Popen(
        tied_to_this_process([sys.executable, "-m", "cirulla", *args]),
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        env={**os.environ, **(env or {})},
        start_new_session=True,  # its own process group: SIGKILL takes its bots too
    )


def wait_for(what: str, check: Any, timeout: float = 240.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.25)
    raise AssertionError(f"timed out waiting for {what}")


def stop(proc: subprocess.Popen[Any]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.mark.slow
def test_two_workers_one_killed_mid_match(postgres_url: str, tmp_path: Path) -> None:
    store = LadderStore(open_database(postgres_url))
    for name, spec in (("r1", "random"), ("r2", "random"), ("g1", "greedy"), ("g2", "greedy")):
        store.add_bot(name, spec)
    remote, _, key = store.add_bot("remote", "connect", max_concurrency=1)
    with store.engine.begin() as conn:  # rated from the first game: more to count
        conn.execute(update(bot_versions).values(validation_games_left=0))

    procs: dict[str, subprocess.Popen[Any]] = {}
    state = tmp_path / "ladder.json"
    try:
        procs["serve"] = start(
            [
                "ladder", "serve", "--db", postgres_url, "--listen", "127.0.0.1:0",
                "--data", str(tmp_path / "serve"), "--state-file", str(state),
                "--concurrency", "0", "--move-limit-ms", "5000", "--game-timeout", "120",
            ],
            tmp_path / "serve.log",
        )  # fmt: skip
        for name in ("a", "b"):
            procs[name] = start(
                [
                    "ladder", "worker", "--db", postgres_url, "--listen", "127.0.0.1:0",
                    "--data", str(tmp_path / f"worker-{name}"), "--concurrency", "2",
                    "--lease", str(LEASE),
                ],
                tmp_path / f"worker-{name}.log",
            )  # fmt: skip
        address = wait_for("the ladder's state file", lambda: state.exists() and state)
        ladder = json.loads(address.read_text())["address"]
        procs["bot"] = start(
            ["bot", "random", "--ladder", ladder, "--bot-name", "remote"],
            tmp_path / "remote-bot.log",
            env={"CIRULLA_BOT_KEY": key},
        )

        def worker_id(name: str) -> str | None:
            with store.engine.connect() as conn:
                return conn.execute(
                    select(workers.c.id).where(workers.c.name.like(f"%worker-{name}"))
                ).scalar_one_or_none()

        wid_a = wait_for("worker a", lambda: worker_id("a"))
        wid_b = wait_for("worker b", lambda: worker_id("b"))
        with store.engine.connect() as conn:
            worker_addresses = set(
                conn.execute(
                    select(workers.c.server_address).where(workers.c.id.in_([wid_a, wid_b]))
                ).scalars()
            )

        def running_on(wid: str) -> list[str]:
            with store.engine.connect() as conn:
                return list(
                    conn.execute(
                        select(ladder_matches.c.id).where(
                            ladder_matches.c.worker_id == wid,
                            ladder_matches.c.status == "running",
                        )
                    ).scalars()
                )

        def finished() -> int:
            with store.engine.connect() as conn:
                return int(
                    conn.execute(
                        select(func.count())
                        .select_from(ladder_matches)
                        .where(ladder_matches.c.status == "finished")
                    ).scalar_one()
                )

        wait_for("a finished match", lambda: finished() >= 1)
        killed = wait_for("a match running on worker b", lambda: running_on(wid_b))
        os.killpg(procs["b"].pid, signal.SIGKILL)
        procs["b"].wait()
        at_kill = finished()

        def settled() -> bool:
            # all of worker b's matches: those running when it was killed, and one it
            # may have claimed just before (its lease ends up to a heartbeat later)
            with store.engine.connect() as conn:
                return not conn.execute(
                    select(ladder_matches.c.id).where(
                        ladder_matches.c.worker_id == wid_b,
                        ladder_matches.c.status.in_(("claimed", "running")),
                    )
                ).first()

        wait_for("worker b's matches to be reaped", settled, timeout=LEASE * 10 + 60)
        wait_for("worker a to play on", lambda: finished() >= at_kill + 4)

        def remote_played() -> bool:
            with store.engine.connect() as conn:
                return bool(
                    conn.execute(
                        select(ladder_matches.c.id)
                        .join(ladder_seats, ladder_seats.c.match_id == ladder_matches.c.id)
                        .where(
                            ladder_seats.c.version_id == remote["version_id"],
                            ladder_seats.c.outcome == "ok",
                            ladder_matches.c.status == "finished",
                        )
                    ).first()
                )

        wait_for("a finished match of the connect-in bot", remote_played)
    finally:
        for proc in procs.values():
            stop(proc)

    with store.engine.connect() as conn:
        matches = {row.id: row for row in conn.execute(select(ladder_matches)).all()}
        seats = conn.execute(select(ladder_seats)).all()
        games = dict(conn.execute(select(ratings.c.version_id, ratings.c.games)).all())
        history = conn.execute(select(rating_history.c.version_id, rating_history.c.match_id)).all()
    logs = {p.name: p.read_text(errors="replace")[-3000:] for p in tmp_path.glob("*.log")}
    # The killed worker's matches: finished before the kill, or cancelled with the reason.
    for match_id in killed:
        row = matches[match_id]
        assert row.status in ("finished", "cancelled"), (row, logs)
        if row.status == "cancelled":
            assert f"worker {wid_b} stopped renewing its lease" in row.cancel_reason
    assert any(matches[m].status == "cancelled" for m in killed), logs
    # Every match ended once (finished or cancelled; scheduled ones were never claimed
    # when everything stopped; one that a live process had just claimed, or started,
    # when it was stopped keeps its claim until the lease runs out, unplayed and
    # unrated; none of the killed worker's is left), and every rated one is in the
    # ratings exactly once.
    statuses = {"finished", "cancelled", "scheduled", "claimed", "running"}
    assert {m.status for m in matches.values()} <= statuses
    held = [m for m in matches.values() if m.status in ("claimed", "running")]
    assert all(m.worker_id != wid_b and not m.rated for m in held), (
        [(m.id, m.status, m.worker_id) for m in held],
        {"a": wid_a, "b": wid_b},
    )
    # a finished twin is rated only once its pair is over (docs/ladder.md, "Withheld
    # means withheld"): one whose partner is still held counts nowhere yet
    over = {m.pair_id for m in matches.values() if m.pair_id} - {
        m.pair_id for m in matches.values() if m.status not in ("finished", "cancelled")
    }
    rated = {
        m.id
        for m in matches.values()
        if m.status == "finished" and m.rated and (not m.pair_id or m.pair_id in over)
    }
    assert rated, logs
    expected: dict[int, int] = {}
    for seat in seats:
        if seat.match_id in rated:
            expected[seat.version_id] = expected.get(seat.version_id, 0) + 1
    assert {v: n for v, n in games.items() if n} == expected
    assert sorted((h.match_id, h.version_id) for h in history) == sorted(
        (s.match_id, s.version_id) for s in seats if s.match_id in rated
    )
    # The connect-in bot played on the workers' match servers, never on the ladder's.
    remote_matches = {s.match_id for s in seats if s.version_id == remote["version_id"]}
    served = {matches[m].server_address for m in remote_matches if matches[m].status == "finished"}
    assert len(worker_addresses) == 2 and ladder not in worker_addresses
    assert served and served <= worker_addresses
