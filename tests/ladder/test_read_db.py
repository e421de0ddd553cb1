"""Reading without a running ladder: ``standings``, ``history``, ``h2h`` and ``match``
read the ladder's database when no ladder answers, and say so in one line on stderr.
A real ladder plays, is SIGKILLed (its state file stays) or stopped (the state file
goes: ``--db`` names the database); on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cirulla.v1 import ladder_pb2
from tests.ladder_harness import LadderProcess, open_store, wait_for

NOTICE = "ladder not running: read from the database at "


def cirulla(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cirulla", "ladder", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
    )


def read(folder: Path, *args: str) -> str:
    out = cirulla(folder, *args)
    assert out.returncode == 0, out.stdout + out.stderr
    (line,) = out.stderr.splitlines()  # one line, and only one
    assert line.startswith(NOTICE), out.stderr
    return out.stdout


@pytest.mark.slow
def test_reads_come_from_the_database_when_the_ladder_is_down(tmp_path: Path, db_url: str) -> None:
    ladder = LadderProcess(tmp_path / "ladder", db_url)
    ladder.start()
    try:
        # the ladder's side over its rpc (the commands under test are the reads below)
        ladder.add("rnd", "random")
        ladder.add("grd", "greedy")
        store = open_store(db_url)
        wait_for(lambda: store.rated_games("2p") >= 2, 240, "rated games", every=0.2)
        for name in ("rnd", "grd"):
            ladder.stub().PauseBot(
                ladder_pb2.PauseBotRequest(bot_name=name), metadata=ladder.admin(), timeout=60
            )
    finally:
        ladder.kill()  # SIGKILL: the state file stays, naming a port nobody listens on
    folder = ladder.folder
    assert (folder / "cirulla-ladder.json").exists()
    expected = store.standings("2p", include_inactive=True)
    standings = json.loads(read(folder, "standings", "--json", "--all"))
    assert int(standings["rated_games"]) == store.rated_games("2p") >= 2
    assert [e["bot"]["name"] for e in standings["entries"]] == [e["bot"]["name"] for e in expected]
    assert "grd" in read(folder, "standings", "--all")
    history = json.loads(read(folder, "history", "grd", "--json"))
    assert history["bot"]["name"] == "grd" and history["matches"]
    match_id = history["matches"][0]["match_id"]
    shown = read(folder, "match", match_id)
    assert match_id in shown and "grd" in shown
    h2h = json.loads(read(folder, "h2h", "grd", "rnd", "--json"))
    assert h2h["games"] == store.head_to_head("grd", "rnd")["games"] >= 1
    # an unknown match is one line too, from the database
    missing = cirulla(folder, "match", "lm-nope")
    assert missing.returncode == 2 and "no ladder match" in missing.stderr
    assert "Traceback" not in missing.stderr

    # from another folder, no state file there: --db names the database
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    again = json.loads(read(elsewhere, "standings", "--json", "--all", "--db", db_url))
    assert [e["bot"]["name"] for e in again["entries"]] == [e["bot"]["name"] for e in expected]
    assert again["rated_games"] == standings["rated_games"]
    out = read(elsewhere, "h2h", "grd", "rnd", "--db", db_url)
    assert f"{h2h['games']} games" in out
    # writes never fall back to the database
    refused = cirulla(elsewhere, "pause", "grd")
    assert refused.returncode == 2 and NOTICE not in refused.stderr
    # no ladder, no database: the usual line
    nothing = cirulla(elsewhere, "standings")
    assert nothing.returncode == 2 and "no ladder in this folder" in nothing.stderr
