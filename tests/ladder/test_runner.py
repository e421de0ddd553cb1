"""The worker's kept-alive bots: a fault's log is the faulty match's own part of a log
that spans many matches, and a process of an older version is not reused."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from cirulla.bots.botspec import BotSpec
from cirulla.ladder.runner import LadderBotPool, log_tail


def test_log_tail_keeps_only_the_matchs_part(tmp_path: Path) -> None:
    log = tmp_path / "greedy-1.log"
    log.write_text(
        "12:00 greedy INFO assignment: match m-1 seat 0\n"
        "first match chatter\n"
        "12:01 greedy INFO assignment: match m-2 seat 1\n"
        "Traceback: the second match broke\n"
        "12:02 greedy INFO assignment: match m-3 seat 0\n"
        "third match, already under way\n"
    )
    tail = log_tail(log, match_id="m-2")
    assert tail.startswith("12:01 greedy INFO assignment: match m-2 seat 1")
    assert "the second match broke" in tail
    assert "first match" not in tail and "third match" not in tail
    # the last match runs to the end of the log; an unknown id gets the plain tail
    assert log_tail(log, match_id="m-3").endswith("third match, already under way\n")
    assert log_tail(log, chars=31, match_id="nope") == "third match, already under way\n"
    assert log_tail(tmp_path / "missing.log") == ""


READY = "import sys; print('{\"ready\": true}', flush=True); sys.stdin.read()"


def test_pool_restarts_a_bot_whose_spec_changed(tmp_path: Path) -> None:
    one = BotSpec.parse(f"serve:{shlex.join([sys.executable, '-c', READY, 'v1'])}")
    two = BotSpec.parse(f"serve:{shlex.join([sys.executable, '-c', READY, 'v2'])}")
    pool = LadderBotPool(tmp_path)
    try:
        first = pool.acquire("bot", spec=one)
        pool.release("bot", first)
        again = pool.acquire("bot", spec=one)
        assert again is first  # same version: the idle process is reused
        pool.release("bot", again)
        second = pool.acquire("bot", spec=two)
        assert second is not first and second.argv[-1] == "v2"
        assert first.poll() is not None  # the old version's process was stopped
        assert pool.started("bot") == 2
        pool.release("bot", second)
        assert pool.stop_idle(0.0) == 1 and second.poll() is not None
    finally:
        pool.close()
