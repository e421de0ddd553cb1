"""A bot's logs are bounded in all, not only per file (``--bot-logs``): a hostile bot
that writes megabytes to its log every game and plays well cannot fill the disk game
after game, and its honest opponent's logs stay whole and readable."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from cirulla.bots.cgroups import MIB, BotLimits
from cirulla.clients.matches.log_budget import HEAD_BYTES, TAIL_BYTES, LogBudget

HOSTILE = Path(__file__).parents[1] / "programs" / "hostile.py"
CUT = "bytes of this log cut here: filler's logs passed their budget (8 MiB, --bot-logs)"


def _tournament(*extra: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "cirulla", "tournament", "--concurrency", "1"]
    return subprocess.run(
        [*argv, "--bot-logs", "8M", *extra],
        capture_output=True,
        text=True,
        timeout=600,
    )


def _filler_logs(out: Path) -> tuple[list[dict[str, object]], list[Path], list[Path]]:
    """(the games, the filler's logs still on disk in game order, random's logs)."""
    games = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
    games.sort(key=lambda g: int(str(g["index"])))
    mine: list[Path] = []
    theirs: set[Path] = set()
    for game in games:
        for bot, logged in zip(game["seats"], game["logs"], strict=True):  # type: ignore[call-overload]
            path = out / logged
            (mine.append(path) if bot == "filler" else theirs.add(path))
    return games, [p for p in mine if p.exists()], sorted(theirs)


def test_a_bot_filling_its_log_every_game_stays_within_its_budget(tmp_path: Path) -> None:
    """3 MiB of log a game for 8 games, then 4 more on --resume, under --bot-logs 8M and
    the sandbox: its logs on disk stay under 8 MiB (24 and 36 MiB before), the oldest
    cut to their start and tail with one line saying so; the newest whole;
    every game played to its end, the honest random bot's logs untouched."""
    out = tmp_path / "t"
    bots = ["--bot", f"filler=cmd:{{python}} {HOSTILE} logfill 3", "--bot", "random"]
    done = _tournament("--sandbox", "--target", "11", "--games", "8", "--out", str(out), *bots)
    assert done.returncode == 0, done.stdout + done.stderr
    for played in (8, 12):
        games, mine, theirs = _filler_logs(out)
        assert len(games) == played
        for game in games:  # the filler plays well: nothing stops it, no game is void
            assert game["end"] in ("target", "cappotto"), game
            assert set(game["seat_outcomes"]) == {"ok"}, game  # type: ignore[arg-type]
            assert not any("killed" in str(n) for n in game["notes"]), game  # type: ignore[attr-defined]
        total = sum(p.stat().st_size for p in mine)
        assert total <= 8 * MIB, (played, total)
        newest = mine[-1].read_text(errors="replace")
        assert "HOSTILE logfill wrote" in newest and CUT not in newest
        oldest = mine[0].read_text(errors="replace")
        # its start, one line saying what was cut, its tail (how its game ended)
        assert oldest.startswith("HOSTILE logfill 3 MiB\n"), oldest[:200]
        assert len([line for line in oldest.splitlines() if CUT in line]) == 1
        assert oldest.rstrip().endswith('the match is over"'), oldest[-300:]
        assert mine[0].stat().st_size < HEAD_BYTES + TAIL_BYTES + 200
        for path in theirs:  # the honest bot's logs: whole
            text = path.read_text()
            assert "cut here" not in text and "match over" in text
        if played == 8:
            resumed = _tournament("--resume", str(out), "--games", "12")
            assert resumed.returncode == 0, resumed.stdout + resumed.stderr


def test_the_budget_cuts_the_oldest_closed_logs_then_deletes_them(tmp_path: Path) -> None:
    """Oldest first: cut to start and tail, then deleted; a log still written is never
    touched; each file's limit is never above the budget."""
    budget = LogBudget(1 * MIB)
    assert budget.cap(BotLimits()).file_bytes == 1 * MIB
    assert LogBudget().cap(BotLimits()) == BotLimits()  # 64 MiB files under 256 MiB
    paths = [tmp_path / f"g{i}.log" for i in range(4)]
    other = tmp_path / "other.log"
    other.write_bytes(b"y" * 2 * MIB)
    budget.opened("o", other)
    for i, path in enumerate(paths):
        budget.opened("b", path)
        path.write_bytes(f"start {i}\n".encode() + b"x" * 400_000 + f"\nend {i}\n".encode())
        if i < 3:
            budget.closed(path)
    # three closed logs of 400 KB: the oldest is cut; the fourth is still written
    first = paths[0].read_text()
    assert first.startswith("start 0\n") and first.endswith("end 0\n")
    assert "bytes of this log cut here: b's logs passed their budget (1 MiB" in first
    assert paths[1].stat().st_size > 400_000
    # many small ones, one game each: the oldest are cut, then deleted; never the one
    # still written, nor another bot's
    for i in range(30):
        small = tmp_path / f"s{i}.log"
        budget.opened("b", small)
        small.write_bytes(b"z" * 60_000)
        budget.closed(small)
        assert budget.total("b") <= 1 * MIB + 400_100
    assert paths[3].stat().st_size > 400_000
    assert other.stat().st_size == 2 * MIB
    assert not paths[0].exists() and (tmp_path / "s29.log").exists()
    budget.closed(paths[3])
    assert budget.total("b") <= 1 * MIB


def test_a_bad_budget_is_one_line(tmp_path: Path) -> None:
    for argv, says in (
        (["tournament", "--bot", "random", "--bot", "random", "--bot-logs", "lots"], "256M"),
        (["tournament", "--bot", "random", "--bot", "random", "--bot-logs", "10K"], "1M"),
        (["ladder", "worker", "--bot-logs", "lots"], "256M"),
        (["ladder", "serve", "--bot-logs", "0.5M"], "at least 1M"),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "cirulla", *argv],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=tmp_path,
        )
        assert done.returncode == 2, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1 and "--bot-logs" in done.stderr
        assert says in done.stderr, done.stderr


def test_a_ladder_bounds_a_bot_filling_its_log_every_match(tmp_path: Path) -> None:
    """The same bot on ``cirulla ladder serve --bot-logs 4M`` (sandboxed), 1.5 MiB a
    match: its logs stay under 4 MiB plus its matches in play (12 MiB and more after
    8 matches before), it keeps playing, and its last match's log is whole."""
    from tests.ladder_harness import LadderProcess, count_status, open_store, wait_for

    db = f"sqlite:///{tmp_path / 'ladder.sqlite3'}"
    ladder = LadderProcess(tmp_path / "ladder", db, "--bot-logs", "4M")
    ladder.start()
    logs = ladder.folder / "cirulla-ladder-data" / "logs"

    def filler_bytes() -> int:
        total = 0
        for path in logs.glob("*.log"):
            if not path.name.startswith("honest-"):
                with contextlib.suppress(FileNotFoundError):
                    total += path.stat().st_size
        return total

    peak = 0

    def played() -> bool:
        nonlocal peak
        peak = max(peak, filler_bytes())
        return count_status(open_store(db)).get("finished", 0) >= 8

    try:
        ladder.add("filler", f"cmd:{{python}} {HOSTILE} logfill 1.5", max_concurrency=1)
        ladder.add("honest", "random", max_concurrency=1)
        wait_for(played, 300, "8 finished matches", every=0.2)
    finally:
        ladder.stop()
    total = filler_bytes()
    print(f"\nfiller's logs: {total} bytes at the end, {peak} at most while it played")
    assert total <= 4 * MIB, total
    assert peak <= 4 * MIB + 1.6 * MIB, peak  # and its one match in play
    cut = [p for p in logs.glob("*.log") if CUT.replace("8 MiB", "4 MiB") in p.read_text()]
    assert cut, sorted(p.name for p in logs.glob("*"))


@pytest.mark.slow
def test_a_restarted_ladder_counts_the_logs_its_earlier_run_left(tmp_path: Path) -> None:
    """``ladder serve --bot-logs 4M``, 1.5 MiB of log a match: 3 matches, stopped,
    started again, 3 more. The restarted ladder counts the filler's logs the first run
    left (oldest first), so they stay under 4 MiB plus its match in play (6.9 MiB at
    the end and 8.4 MiB at most before: a fresh budget each run)."""
    from tests.ladder_harness import LadderProcess, count_status, open_store, wait_for

    db = f"sqlite:///{tmp_path / 'ladder.sqlite3'}"
    ladder = LadderProcess(tmp_path / "ladder", db, "--bot-logs", "4M")
    logs = ladder.folder / "cirulla-ladder-data" / "logs"
    peak = 0

    def filler_bytes() -> int:
        total = 0
        for path in logs.glob("*.log"):
            if not path.name.startswith(("honest-", "server")):
                with contextlib.suppress(FileNotFoundError):
                    total += path.stat().st_size
        return total

    def play(matches: int) -> None:
        """Start the ladder, wait until ``matches`` are finished in all, stop it."""
        nonlocal peak
        ladder.start()
        store = open_store(db)  # one store a run, closed before the ladder stops

        def done() -> bool:
            nonlocal peak
            peak = max(peak, filler_bytes())
            return count_status(store).get("finished", 0) >= matches

        try:
            if matches == 3:
                ladder.add("filler", f"cmd:{{python}} {HOSTILE} logfill 1.5", max_concurrency=1)
                ladder.add("honest", "random", max_concurrency=1)
            wait_for(done, 300, f"{matches} finished matches", every=0.2)
        finally:
            store.engine.dispose()
            ladder.stop()

    play(3)
    first = filler_bytes()
    assert 3 * MIB < first <= 4 * MIB, first  # the first run's logs fill the budget
    peak = 0
    play(6)
    total = filler_bytes()
    print(f"\nfiller's logs: {first} after the first run, {total} after the second, peak {peak}")
    assert total <= 4 * MIB, total
    assert peak <= 4 * MIB + 1.6 * MIB, peak  # and its one match in play
    served = (ladder.folder / "serve.log").read_text()
    assert "ladder_bot_logs_counted" in served and "ladder_bot_logs_count_failed" not in served
