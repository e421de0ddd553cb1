"""Starting ``cirulla server`` wrong fails with one line naming the problem: a database
path that cannot be opened, a port in use or out of range, an empty token file. Secrets
stay off the command line and the database is readable by its owner only."""

from __future__ import annotations

import asyncio
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from cirulla.cli import main
from cirulla.server.app import start_server
from cirulla.server.store import Store
from tests.server_harness import server_command


def one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err
    assert len(err.splitlines()) == 1, err
    return err


def test_a_bad_db_path_is_one_line_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "no" / "such" / "dir" / "x.sqlite3"
    assert main(["server", "--listen", "127.0.0.1:0", "--db", str(missing)]) == 2
    assert str(missing) in one_error_line(capsys)
    garbage = tmp_path / "garbage.sqlite3"
    garbage.write_bytes(b"this is not a database" * 100)
    assert main(["server", "--listen", "127.0.0.1:0", "--db", str(garbage)]) == 2
    assert str(garbage) in one_error_line(capsys)


def test_port_out_of_range_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "d.sqlite3")
    assert main(["server", "--listen", "127.0.0.1:70000", "--db", db]) == 2
    assert "65535" in one_error_line(capsys)


def test_a_port_in_use_is_refused(tmp_path: Path) -> None:
    port: list[int] = []

    async def main_async() -> subprocess.CompletedProcess[str]:
        srv = await start_server("127.0.0.1:0")
        port.append(srv.port)
        try:
            argv = server_command("--listen", f"127.0.0.1:{srv.port}", "--db", str(tmp_path / "d"))
            return await asyncio.to_thread(
                subprocess.run, argv, capture_output=True, text=True, timeout=60
            )
        finally:
            await srv.stop()

    done = asyncio.run(main_async())
    assert done.returncode == 2
    assert not (tmp_path / "d").exists()  # a refused start makes no database
    # one line: the server's own, without gRPC core's log line of the failed bind before it
    assert done.stderr.splitlines() == [
        f"cirulla server: cannot listen on 127.0.0.1:{port[0]}: the port is in use"
    ], done.stderr


def test_an_address_that_is_not_local_is_one_line(tmp_path: Path) -> None:
    argv = server_command("--listen", "192.0.2.1:50051", "--db", str(tmp_path / "d"))
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "cirulla server: cannot listen on 192.0.2.1:50051: Cannot assign requested address"
    ], done.stderr
    assert not (tmp_path / "d").exists()


def test_an_empty_admin_token_file_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "token"
    empty.write_text("\n")
    db = str(tmp_path / "d.sqlite3")
    assert (
        main(["server", "--listen", "127.0.0.1:0", "--db", db, "--admin-token-file", str(empty)])
        == 2
    )
    assert str(empty) in one_error_line(capsys)


def test_the_database_is_private(tmp_path: Path) -> None:
    db = tmp_path / "new.sqlite3"
    Store(db).close()
    assert stat.S_IMODE(os.stat(db).st_mode) == 0o600


def test_a_serving_process_freezes_start_up_and_makes_full_collections_rare() -> None:
    """``serve`` tunes the garbage collector once started (``app.tune_gc``): a full
    collection stops the event loop for every object held, so it must be rare; the young
    generations keep Python's thresholds. In a child: the tests' own process keeps its."""
    code = (
        "import gc\n"
        "from cirulla.server.app import FULL_COLLECTION_EVERY, tune_gc\n"
        "young, middle, _ = gc.get_threshold()\n"
        "tune_gc()\n"
        "assert gc.get_freeze_count() > 1000, gc.get_freeze_count()\n"
        "assert gc.get_threshold() == (young, middle, FULL_COLLECTION_EVERY)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
