"""A bot that resumes its seat under a name spelling its hand (issue 37, finding 3): the
hostile bot ``rename`` (tests/programs/hostile.py) tries it with the name, the version and
both in every game; each resume is refused (FAILED_PRECONDITION, a seat's name is its
first Hello's), it plays on under its first name, and nothing of its hand is in the
records, the results or the notes. The chaos test plays it on a ladder and reads its
seat in GetMatch and ListMatches as anyone can."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.programs.hostile import LEAK_PREFIX

HOSTILE = Path(__file__).parents[1] / "programs" / "hostile.py"


def test_a_rename_on_resume_is_refused_and_the_seat_keeps_its_first_name(
    tmp_path: Path,
) -> None:
    out = tmp_path / "t"
    argv = [sys.executable, "-m", "cirulla", "tournament", "--sandbox", "--games", "1"]
    argv += ["--bot", f"rename=cmd:{{python}} {HOSTILE} rename", "--bot", "random"]
    done = subprocess.run([*argv, "--out", str(out)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    tried = [
        line
        for log in (out / "logs").glob("*.log")
        for line in log.read_text().splitlines()
        if line.startswith("HOSTILE rename name=")
    ]
    games = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
    assert len(tried) == 3 * len(games) == 6, tried  # name, version, both; in each game
    assert all(LEAK_PREFIX in line and "refused FAILED_PRECONDITION" in line for line in tried), (
        tried
    )
    for game in games:  # it played on under its first name
        assert game["seat_outcomes"] == ["ok", "ok"], game
    records = sorted((out / "records").glob("*.json"))
    assert len(records) == len(games)
    for path in records:
        seats = json.loads(path.read_text())["seats"]
        assert sorted(s["name"] for s in seats) == ["random", "rename"], seats
    for path in out.rglob("*"):
        if path.is_file() and path.parent.name != "logs":  # its own log says what it tried
            assert LEAK_PREFIX not in path.read_text(errors="replace"), path
