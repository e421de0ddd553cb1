"""Reading without a running ladder: ``standings``, ``history``, ``h2h`` and ``match``
read the ladder's database when no ladder answers, and say so in one line on stderr.
A real ladder plays, is SIGKILLed (its state file stays) or stopped (the state file
goes: ``--db`` names the database); on SQLite and PostgreSQL.

Three commands run as real ``cirulla`` processes (a read beside the state file, a read with
``--db`` from another folder, no ladder and no database); the others call the same entry
point, ``cirulla.cli.main``, in this process, each with the notice set of a fresh process:
the same parsing, rpc to the dead port, fallback and output, without what a Python process
spends starting and importing for such a read (0.55 CPU-s with bytecode caches, 1.4 without).
The dead ladder costs no waiting: a refused connection is UNAVAILABLE at once."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cirulla.cli import main
from cirulla.ladder import cli_client
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


class InProcess:
    """``cirulla ladder ARGS`` run by ``cirulla.cli.main`` in this process, from ``folder``,
    as a fresh process would: no database said read yet; its exit status, stdout, stderr."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
        self.monkeypatch = monkeypatch
        self.capsys = capsys

    def __call__(self, folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
        argv = ["ladder", *args]
        self.capsys.readouterr()  # nothing earlier in what this command printed
        with self.monkeypatch.context() as patch:
            patch.chdir(folder)
            patch.setattr(cli_client, "_READ_NOTICES", set())
            code = main(argv)
        got = self.capsys.readouterr()
        return subprocess.CompletedProcess(argv, code, got.out, got.err)


def read(folder: Path, *args: str, run: Callable[..., Any] = cirulla) -> str:
    out = run(folder, *args)
    assert out.returncode == 0, out.stdout + out.stderr
    (line,) = out.stderr.splitlines()  # one line, and only one
    assert line.startswith(NOTICE), out.stderr
    return out.stdout


@pytest.mark.slow
def test_reads_come_from_the_database_when_the_ladder_is_down(
    tmp_path: Path, db_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    here = InProcess(monkeypatch, capsys)
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
    standings = json.loads(read(folder, "standings", "--json", "--all"))  # a process
    assert int(standings["rated_games"]) == store.rated_games("2p") >= 2
    assert [e["bot"]["name"] for e in standings["entries"]] == [e["bot"]["name"] for e in expected]
    assert "grd" in read(folder, "standings", "--all", run=here)
    history = json.loads(read(folder, "history", "grd", "--json", run=here))
    assert history["bot"]["name"] == "grd" and history["matches"]
    match_id = history["matches"][0]["match_id"]
    shown = read(folder, "match", match_id, run=here)
    assert match_id in shown and "grd" in shown
    h2h = json.loads(read(folder, "h2h", "grd", "rnd", "--json", run=here))
    assert h2h["games"] == store.head_to_head("grd", "rnd")["games"] >= 1
    # an unknown match is one line too, from the database
    missing = here(folder, "match", "lm-nope")
    assert missing.returncode == 2 and "no ladder match" in missing.stderr
    assert "Traceback" not in missing.stderr

    # from another folder, no state file there: --db names the database
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    again = json.loads(read(elsewhere, "standings", "--json", "--all", "--db", db_url))  # a process
    assert [e["bot"]["name"] for e in again["entries"]] == [e["bot"]["name"] for e in expected]
    assert again["rated_games"] == standings["rated_games"]
    out = read(elsewhere, "h2h", "grd", "rnd", "--db", db_url, run=here)
    assert f"{h2h['games']} games" in out
    # writes never fall back to the database
    refused = here(elsewhere, "pause", "grd")
    assert refused.returncode == 2 and NOTICE not in refused.stderr
    # no ladder, no database: the usual line
    nothing = cirulla(elsewhere, "standings")  # a process
    assert nothing.returncode == 2 and "no ladder in this folder" in nothing.stderr


def _revision(file: Path) -> str | None:
    """The alembic revision a SQLite file holds, read with sqlite3 itself."""
    import sqlite3

    with sqlite3.connect(file) as conn:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
        if "alembic_version" not in tables:
            return None
        (revision,) = conn.execute("SELECT version_num FROM alembic_version").fetchone()
    return str(revision)


def test_a_read_never_migrates_the_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A ladder of another version may be serving the file: a read of an older schema says
    what to do in one line and leaves the schema as it was; a file that is not a ladder's
    gets no schema written into it."""
    from alembic import command

    from cirulla.ladder.database import alembic_config, create

    here = InProcess(monkeypatch, capsys)
    older = tmp_path / "older.db"
    engine = create(str(older))
    config = alembic_config()
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, "0006")
    engine.dispose()
    assert _revision(older) == "0006"
    out = here(tmp_path, "standings", "--db", str(older))
    assert out.returncode != 0
    (line,) = out.stderr.splitlines()[-1:]
    assert "revision 0006" in line and "cirulla ladder serve" in line, out.stderr
    assert "Traceback" not in out.stderr
    assert _revision(older) == "0006"

    other = tmp_path / "other.db"
    import sqlite3

    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE notes (body TEXT)")
    out = here(tmp_path, "standings", "--db", str(other))
    assert out.returncode != 0
    assert "holds no ladder schema" in out.stderr, out.stderr
    assert _revision(other) is None


def test_a_write_in_the_folder_of_a_stopped_ladder_says_it_is_not_running(
    tmp_path: Path,
) -> None:
    """`cirulla ladder pause` where the ladder ran (its database here, its state file gone
    with it) says the ladder is not running, not that there is no ladder in this folder."""
    (tmp_path / "cirulla-ladder.sqlite3").write_bytes(b"")
    done = subprocess.run(
        [sys.executable, "-m", "cirulla", "ladder", "pause", "greedy"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "the ladder of this folder is not running" in done.stderr


def test_a_file_that_is_no_database_is_one_line_without_sqlalchemys_link(tmp_path: Path) -> None:
    """The error of a --db that is no database is its first line: SQLAlchemy's
    "(Background on this error at: https://...)" line is not the user's business."""
    garbage = tmp_path / "garbage.txt"
    garbage.write_text("not a database\n")
    done = subprocess.run(
        [sys.executable, "-m", "cirulla", "ladder", "standings", "--db", f"sqlite:///{garbage}"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines()[-1] == (
        f"cirulla ladder standings: cannot read the database at sqlite:///{garbage}: "
        "(sqlite3.DatabaseError) file is not a database"
    ), done.stderr
    assert "Background on this error" not in done.stderr


@pytest.mark.parametrize("command", ["serve", "worker"])
def test_serve_or_worker_on_a_file_that_is_no_database_is_one_line(
    tmp_path: Path, command: str
) -> None:
    """`ladder serve|worker --db` of no database was SQLAlchemy's traceback."""
    garbage = tmp_path / "garbage.txt"
    garbage.write_text("not a database\n")
    argv = [sys.executable, "-m", "cirulla", "ladder", command, "--db", f"sqlite:///{garbage}"]
    argv += ["--listen", "127.0.0.1:0", "--data", str(tmp_path / "data")]
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "Background on this error" not in done.stderr
    assert done.stderr.splitlines()[-1] == (
        f"cirulla ladder {command}: cannot use the database: "
        "(sqlite3.DatabaseError) file is not a database"
    ), done.stderr
