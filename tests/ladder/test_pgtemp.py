"""``cirulla.ladder.pgtemp`` as ``.ci/run`` runs it: a cluster started with
``start`` is gone after ``stop`` (CI used to leave one running after every run)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from cirulla.ladder.pgtemp import libpq_url, postmaster_pid, running


def pgtemp(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cirulla.ladder.pgtemp", *args],
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_start_then_stop_leaves_nothing_running(tmp_path: Path) -> None:
    folder_file = tmp_path / "folder"
    started = pgtemp("start", "--folder-file", str(folder_file))
    assert started.returncode == 0, started.stderr
    url = started.stdout.strip()
    folder = Path(folder_file.read_text())
    assert (folder / "data" / "PG_VERSION").exists()
    with psycopg.connect(libpq_url(url), connect_timeout=10) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)
    stopped = pgtemp("stop", str(folder))
    assert stopped.returncode == 0, stopped.stderr
    assert not folder.exists()
    try:
        psycopg.connect(libpq_url(url), connect_timeout=5).close()
    except psycopg.OperationalError:
        pass
    else:
        raise AssertionError(f"PostgreSQL still answers at {url} after stop")


@pytest.mark.skipif(os.geteuid() != 0, reason="only root runs PostgreSQL as another user")
def test_a_stop_as_the_wrong_user_still_stops_the_server(tmp_path: Path) -> None:
    """``pg_ctl stop`` run as a user who does not own the cluster fails; the folder used
    to be deleted anyway, leaving the server running without it on its port."""
    folder_file = tmp_path / "folder"
    started = pgtemp("start", "--folder-file", str(folder_file))
    assert started.returncode == 0, started.stderr
    url, folder = started.stdout.strip(), Path(folder_file.read_text())
    pid = postmaster_pid(folder / "data")
    assert pid is not None
    stopped = pgtemp("stop", str(folder), "--os-user", "nobody")
    assert stopped.returncode == 0, stopped.stderr
    assert not folder.exists()
    assert not running(pid), f"the postmaster {pid} still runs"
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(libpq_url(url), connect_timeout=5).close()


def test_stop_without_a_folder_is_one_line() -> None:
    done = pgtemp("stop")
    assert done.returncode == 2
    assert done.stderr.strip() == "pgtemp: stop needs the cluster's folder"


def test_an_unreachable_database_is_one_line_without_its_password() -> None:
    from cirulla.ladder.pgtemp import free_port

    url = f"postgresql://someone:hunter2@127.0.0.1:{free_port()}/nothing"
    for bench in ("pool", "ladder"):
        extra = ["--games", "2"] if bench == "pool" else ["--no-embedded"]
        done = subprocess.run(
            [sys.executable, "-m", "cirulla", "bench", bench, "--db", url, *extra],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 2, done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"cirulla bench {bench}: PostgreSQL at")
        assert "hunter2" not in done.stderr and "Traceback" not in done.stderr
