"""A kept-alive bot whose match the runner aborts because the OTHER seat failed (its
process exited without joining) goes back to the pool: the same process plays its next
match. Real server, real bot processes, no mocks."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from cirulla.cli import main


def test_a_kept_bot_plays_on_after_its_opponent_never_joined(tmp_path: Path) -> None:
    out = tmp_path / "t"
    crash = f"crash=cmd:{sys.executable} -c 'import sys; sys.exit(1)' {{server}}"
    args = ["tournament", "--out", str(out), "--bot", crash, "--bot", "greedy"]
    args += ["--games", "4", "--concurrency", "1", "--target", "11", "--seed", "3"]
    # --recover: played on although the crasher joins none of its games (the run fails)
    assert main([*args, "--recover"]) == 1
    games = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
    assert len(games) == 4
    for game in games:
        assert game["end"] == "never-joined", game
        assert game["seat_outcomes"][game["seats"].index("greedy")] == "ok", game
    logs = sorted((out / "logs").glob("greedy-*.log"))
    # every game was aborted by the runner, none through greedy's fault: two processes,
    # one per game of each duplicate pair (never both twins), each playing two matches
    assert len(logs) == 2, [p.name for p in logs]
    for log in logs:
        text = log.read_text()
        assert text.count("assignment: match") == 2, text
        assert "GOODBYE_REASON_ABORTED" in text, text
