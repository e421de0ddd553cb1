"""An idle ladder looks at its database less and less often, and what its own service
learns of (a bot added, a match requested) wakes it at once (``cirulla.ladder.idle``)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

from sqlalchemy import func, select

from cirulla.ladder.idle import Backoff, Stop, wait_idle
from cirulla.ladder.schema import ladder_matches
from tests.ladder_harness import LadderProcess, open_store, wait_for


def test_the_waits_stay_short_for_the_grace_then_double_up_to_the_most() -> None:
    now = [100.0]
    backoff = Backoff(0.2, 1.0, grace=2.0, clock=lambda: now[0])
    assert [backoff.next() for _ in range(3)] == [0.2, 0.2, 0.2]  # within the grace
    now[0] += 2.0
    assert [backoff.next() for _ in range(5)] == [0.2, 0.4, 0.8, 1.0, 1.0]
    backoff.reset()  # work: short waits again, for another grace
    assert [backoff.next() for _ in range(2)] == [0.2, 0.2]
    now[0] += 2.5
    assert [backoff.next() for _ in range(2)] == [0.2, 0.4]


def _in_thread(target: object) -> threading.Thread:
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread


def test_a_nudge_ends_an_idle_wait_but_never_a_periodic_one() -> None:
    stop = Stop()
    idle = _in_thread(lambda: stop.idle(120, stop.nudges()))
    time.sleep(0.1)
    stop.nudge()
    idle.join(30)
    assert not idle.is_alive() and not stop.is_set()
    # the heartbeat's and the reaper's waits: a nudge is not a stop
    answers: list[bool] = []
    periodic = _in_thread(lambda: answers.append(stop.wait(0.5)))
    time.sleep(0.1)
    stop.nudge()
    periodic.join(30)
    assert answers == [False]
    # a stop ends both kinds at once
    idle = _in_thread(lambda: wait_idle(stop, Backoff(120, 120), stop.nudges()))
    time.sleep(0.1)
    stop.set()
    idle.join(30)
    assert not idle.is_alive() and stop.wait(0)


def test_a_nudge_that_came_while_the_loop_looked_for_work_is_not_lost() -> None:
    """The scheduler reads the nudges, looks (a bot added meanwhile nudges), finds
    nothing planned with what it read, and goes idle: it must look again at once."""
    stop = Stop()
    seen = stop.nudges()
    stop.nudge()  # while it looked
    idle = _in_thread(lambda: stop.idle(120, seen))
    idle.join(30)
    assert not idle.is_alive()


def _first_scheduled_at(db: str) -> float | None:
    store = open_store(db)
    try:
        with store.engine.connect() as conn:
            first = conn.execute(select(func.min(ladder_matches.c.created_at))).scalar_one()
    finally:
        store.engine.dispose()
    return None if first is None else float(first)


def test_a_bot_added_to_a_long_idle_ladder_is_scheduled_at_once(tmp_path: Path) -> None:
    """With ``--idle-poll 3600`` the idle scheduler's waits are 0.2 s for its first 2 s,
    then grow 0.4, 0.8, ... 6.4, 12.8 s: 16 s after its start it is in a wait that ends
    about 27 s after it. The two bots added then through its service wake it: their first
    match is scheduled at once, not ~11 s later (a slow start only moves the waits later:
    the test cannot fail for it)."""
    db = f"sqlite:///{tmp_path / 'ladder.sqlite3'}"
    ladder = LadderProcess(tmp_path / "ladder", db, "--concurrency", "1", "--idle-poll", "3600")
    ladder.start()
    try:
        time.sleep(16)
        assert _first_scheduled_at(db) is None
        added = time.time()
        ladder.add("random", "random")
        ladder.add("greedy", "greedy")
        first = wait_for(lambda: _first_scheduled_at(db), 60, "a scheduled match", every=0.1)
        assert first - added < 6, f"scheduled {first - added:.1f}s after the bots were added"
    finally:
        ladder.stop()


def test_idle_poll_out_of_range_is_one_line_naming_it(tmp_path: Path) -> None:
    for command in ("serve", "worker"):
        out = subprocess.run(
            [sys.executable, "-m", "cirulla", "ladder", command, "--idle-poll", "0"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert out.returncode == 2
        assert out.stderr.strip().splitlines() == [
            f"cirulla ladder {command}: --idle-poll must be 0.2 to 3600 seconds, not 0.0"
        ]
        assert not list(tmp_path.iterdir())  # nothing made
