"""``results.json`` is a summary refreshed at most once a second while games run, never
behind the journal when the runner stops: at the end and on Ctrl-C.

Rewriting it after every game cost time linear in the games played, per game; a real
runner (its own process, a real local server, kept-alive bots) is watched from outside.
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from cirulla.bots.botspec import parse_bots
from cirulla.clients.matches.journal import GameResult, Settings
from cirulla.clients.tournament.results import standings
from cirulla.clients.tournament.runner import REFRESH_SECONDS
from tests.server_harness import tied_to_this_process


def runner(out: Path, games: int) -> subprocess.Popen[bytes]:
    argv = [sys.executable, "-m", "cirulla", "tournament", "--bot", "a=random", "--bot", "b=random"]
    # games to 11 (a few hundredths of a second each): 40 of them still take longer than
    # the refresh period, and a write after each game would still be many more versions
    argv += ["--games", str(games), "--seed", "5", "--target", "11", "--out", str(out)]
    return subprocess.Popen(
        tied_to_this_process(argv), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


def journal_lines(out: Path) -> int:
    try:
        return len((out / "games.jsonl").read_text().splitlines())
    except OSError:
        return 0


def finished_games(out: Path) -> int:
    return int(json.loads((out / "results.json").read_text())["finished_games"])


def test_results_json_is_rewritten_at_most_once_a_second(tmp_path: Path) -> None:
    out = tmp_path / "t"
    results = out / "results.json"
    proc = runner(out, 40)
    versions: set[tuple[int, int]] = set()  # each atomic rewrite is a new file
    first = last = 0.0
    try:
        while proc.poll() is None:
            try:
                st = os.stat(results)
            except OSError:
                pass
            else:
                if (st.st_ino, st.st_mtime_ns) not in versions:
                    versions.add((st.st_ino, st.st_mtime_ns))
                    last = time.monotonic()
                    first = first or last
            time.sleep(0.002)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.wait() == 0
    assert journal_lines(out) == 40 and finished_games(out) == 40
    # A write after each game would be ~40 versions in a few seconds; one a second (plus
    # the final one, which may follow the last periodic one at once) is far fewer.
    allowed = math.floor((last - first) / REFRESH_SECONDS) + 2
    assert 1 <= len(versions) <= allowed, (len(versions), last - first)


def test_ctrl_c_leaves_results_json_matching_the_journal(tmp_path: Path) -> None:
    out = tmp_path / "t"
    proc = runner(out, 400)
    try:
        deadline = time.monotonic() + 60
        while journal_lines(out) < 3:
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.01)
        proc.send_signal(signal.SIGINT)
        proc.wait(60)
    finally:
        if proc.poll() is None:
            proc.kill()
    played = journal_lines(out)
    assert 3 <= played < 400
    assert finished_games(out) == played


def test_the_per_game_sprt_check_skips_only_the_ratings() -> None:
    settings = Settings(
        bots=parse_bots({"a": "random", "b": "greedy"}), sprt=(0.0, 10.0, 0.05, 0.05)
    )
    games = [
        GameResult(
            index=i,
            match_id=f"m{i}",
            seats=("a", "b") if i % 2 == 0 else ("b", "a"),
            seed=i // 2,
            deal_set=i // 2,
            group=("a", "b"),
            winner=0 if i % 3 else 1,
            totals=(51, 20) if i % 3 else (20, 51),
            deals=3,
            seat_outcomes=("ok", "ok"),
        )
        for i in range(40)
    ]
    full, quick = standings(settings, games), standings(settings, games, ratings=False)
    assert [(h.penta, h.wdl, h.sprt_llr, h.sprt_decision) for h in quick.head_to_head] == [
        (h.penta, h.wdl, h.sprt_llr, h.sprt_decision) for h in full.head_to_head
    ]
    assert [(b.name, b.wdl) for b in quick.bots] == [(b.name, b.wdl) for b in full.bots]
    unrated = standings(settings, []).bots[0].rating_mu
    assert all(b.rating_mu == unrated for b in quick.bots)
    assert any(b.rating_mu != unrated for b in full.bots)
