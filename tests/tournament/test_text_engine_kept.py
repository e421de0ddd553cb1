"""Issue 25 item 3: a ``text:`` engine is kept alive between the games of a tournament,
like built-in and ``serve:`` bots (the text protocol's ``newgame`` starts each game), so
a slow-starting engine pays its start twice for a whole tournament: once for each game of
a duplicate pair, since a process never plays both (it would know its opponent's hands in
the second). It is restarted only after a crash, and the tournament goes on. The engine
(tests/programs/counting_engine.py) counts its own starts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ENGINE = Path(__file__).parents[1] / "programs" / "counting_engine.py"


def tournament(out: Path, engine: str, games: int) -> list[dict[str, object]]:
    argv = [sys.executable, "-m", "cirulla", "tournament", "--out", str(out)]
    argv += ["--bot", "greedy", "--bot", f"c=text:{{python}} {ENGINE} {engine}"]
    argv += ["--games", str(games), "--target", "11", "--concurrency", "1"]
    argv += ["--seed", "3", "--bot-seed", "3", "--move-limit", "3000"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = (out / "games.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def test_a_text_engine_starts_twice_for_a_whole_tournament(tmp_path: Path) -> None:
    starts = tmp_path / "starts"
    games = tournament(tmp_path / "t", f"--starts {starts} --slow-start 0.5", 8)
    assert len(games) == 8
    assert all(g["seat_outcomes"] == ["ok", "ok"] for g in games), games
    assert starts.read_text().count("started") == 2
    # two kept processes played every game, one game of each of the 4 pairs each
    logs = tmp_path / "t" / "logs"
    for name in ("c-1.log", "c-2.log"):
        assert (logs / name).read_text().count("assignment: match") == 4
    assert not (logs / "c-3.log").exists()
    played = {(g["seed"], g["logs"][g["seats"].index("c")]) for g in games}
    assert len(played) == 8  # no process played both games of a deck seed


def test_an_engine_that_crashes_mid_game_is_restarted_and_the_tournament_goes_on(
    tmp_path: Path,
) -> None:
    starts, marker = tmp_path / "starts", tmp_path / "crashed"
    games = tournament(tmp_path / "t", f"--starts {starts} --crash-once {marker}", 6)
    assert marker.exists()  # it did crash, at its third genmove
    assert len(games) == 6
    outcomes = [g["seat_outcomes"][g["seats"].index("c")] for g in games]
    assert outcomes[0] == "crash" and outcomes[1:] == ["ok"] * 5, outcomes
    # the first (it crashed in the first game), its replacement for that pair's twin, and
    # one for the next pair's twin; those two then alternate
    assert starts.read_text().count("started") == 3
    log = (tmp_path / "t" / "logs" / "c-1.log").read_text()
    assert "the engine stopped" in log and "Traceback" not in log
    # the game's note names that log, where the engine's own exit is told
    seat = games[0]["seats"].index("c")
    crash = [n for n in games[0]["notes"] if "forfeited: crash" in n]
    assert crash and crash[0].endswith(f"(its log: {games[0]['logs'][seat]})"), games[0]
    assert games[0]["logs"][seat] == "logs/c-1.log", games[0]["logs"]


def test_a_kept_engine_by_relative_path_plays_sandboxed(tmp_path: Path) -> None:
    """The kept engine's command reaches the sandbox word by word (after --), so its
    relative path is made absolute and bound, as a cmd: command's is."""
    (tmp_path / "eng.py").write_text(ENGINE.read_text())
    argv = [sys.executable, "-m", "cirulla", "tournament", "--out", "t", "--sandbox"]
    argv += ["--bot", "greedy", "--bot", "e=text:{python} eng.py", "--games", "2"]
    argv += ["--target", "11", "--concurrency", "1", "--seed", "4", "--bot-seed", "4"]
    done = subprocess.run(
        argv, cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    games = [json.loads(x) for x in (tmp_path / "t" / "games.jsonl").read_text().splitlines()]
    assert [g["seat_outcomes"] for g in games] == [["ok", "ok"]] * 2, games
    for name in ("e-1.log", "e-2.log"):  # one process per game of the pair
        log = (tmp_path / "t" / "logs" / name).read_text()
        assert log.count("assignment: match") == 1 and "speaks text protocol" in log
