"""Issue 25 item 2: a bot that cannot start, with ``--recover`` (cutechess's and
fastchess's name): the tournament plays on with its games as forfeits, prints the dead
bot's log tail once and exits 1 at the end. Without it the run stops after 3 games."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

# prints "no module named mine" (the spec, also printed, does not hold that text)
BROKEN = 'broken=cmd:{python} -c \'import sys; print("no module", "named mine"); sys.exit(1)\''


#: Two runs of three unjoined games: --recover goes on after the stop would come (3) and
#: still prints the tail once when a second run of three ends (6). Each unjoined game
#: takes the runner's one-second join grace.
GAMES = 6


def run(out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "cirulla", "tournament", "--out", str(out)]
    argv += ["--bot", BROKEN, "--bot", "random", "--games", str(GAMES), "--concurrency", "1"]
    argv += ["--target", "11", "--seed", "5", "--bot-seed", "5", *extra]
    return subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.slow
def test_recover_plays_every_game_prints_the_tail_once_and_exits_1(tmp_path: Path) -> None:
    done = run(tmp_path / "t", "--recover")
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert "Traceback" not in output
    assert output.count("did not join its last 3 games") == 1, output
    assert output.count("no module named mine") == 1, output  # the tail, printed once
    assert "exit status 1" in output
    games = [json.loads(x) for x in (tmp_path / "t" / "games.jsonl").read_text().splitlines()]
    assert len(games) == GAMES  # every game played, the broken bot's as forfeits
    for game in games:
        seat = game["seats"].index("broken")
        assert game["unjoined"] == [seat] and game["winner"] == 1 - seat
    assert "Standings" in done.stdout


def test_without_recover_the_tournament_stops_after_three_games(tmp_path: Path) -> None:
    done = run(tmp_path / "t")
    assert done.returncode == 1
    assert "--recover" in done.stdout  # the stop names the way to go on
    assert len((tmp_path / "t" / "games.jsonl").read_text().splitlines()) == 3


def test_a_bot_that_joined_no_game_fails_even_a_short_run(tmp_path: Path) -> None:
    """Two games never reach the stop after three (issue 40, item 5): the run still ends
    with status 1 and the dead bot's own error, and the healthy bot is not blamed."""
    argv = [sys.executable, "-m", "cirulla", "tournament", "--out", str(tmp_path / "t")]
    argv += ["--bot", "greedy", "--bot", "mine=cmd:{python} nothere.py", "--games", "2"]
    argv += ["--target", "11", "--seed", "5"]
    done = subprocess.run(
        argv, capture_output=True, text=True, timeout=300, check=False, cwd=tmp_path
    )
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert "Traceback" not in output
    assert "bot mine joined none of its 2 games" in output, output
    assert "nothere.py" in output.split("joined none of its")[1]  # its stderr's tail
    assert "No such file or directory" in output
    assert "greedy) exited" not in output and "greedy joined none" not in output
    games = [json.loads(x) for x in (tmp_path / "t" / "games.jsonl").read_text().splitlines()]
    assert len(games) == 2 and all(g["winner"] == g["seats"].index("greedy") for g in games)


def test_a_bot_that_joined_some_games_is_not_called_dead(tmp_path: Path) -> None:
    """A bot that fails now and then is beaten, not broken: the run passes."""
    flaky = (
        "flaky=cmd:{python} -c 'import os, sys; "
        'sys.exit(1) if os.path.exists("once") else open("once", "w"); '
        'os.execv(sys.executable, [sys.executable, "-m", "cirulla", "bot", "random"])\''
    )
    argv = [sys.executable, "-m", "cirulla", "tournament", "--out", str(tmp_path / "t")]
    argv += ["--bot", "random", "--bot", flaky, "--games", "2", "--concurrency", "1"]
    argv += ["--target", "11", "--seed", "5"]
    done = subprocess.run(
        argv, capture_output=True, text=True, timeout=300, check=False, cwd=tmp_path
    )
    output = done.stdout + done.stderr
    games = [json.loads(x) for x in (tmp_path / "t" / "games.jsonl").read_text().splitlines()]
    assert [bool(g["unjoined"]) for g in games].count(True) == 1, output
    assert done.returncode == 0, output
    assert "joined none" not in output
