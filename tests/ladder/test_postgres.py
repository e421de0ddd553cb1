"""The PostgreSQL the ladder's tests run on is real: it connects, each test has its own
database, and row locks with SKIP LOCKED behave as the workers' claiming relies on."""

from __future__ import annotations

import subprocess
import sys

import psycopg

from cirulla.ladder.pgtemp import libpq_url


def test_postgres_connects_and_is_15_or_newer(postgres_url: str) -> None:
    with psycopg.connect(libpq_url(postgres_url)) as conn:
        row = conn.execute("SHOW server_version_num").fetchone()
    assert row is not None and int(row[0]) >= 150000


def test_each_test_gets_an_empty_database(postgres_url: str) -> None:
    with psycopg.connect(libpq_url(postgres_url)) as conn:
        tables = conn.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'"
        ).fetchone()
        conn.execute("CREATE TABLE leftover (id int)")  # the next test must not see it
    assert tables == (0,)


def test_skip_locked_hands_each_row_to_one_claimer(postgres_url: str) -> None:
    url = libpq_url(postgres_url)
    with psycopg.connect(url, autocommit=True) as setup:
        setup.execute("CREATE TABLE jobs (id int PRIMARY KEY)")
        setup.execute("INSERT INTO jobs SELECT generate_series(1, 3)")
    claim = "SELECT id FROM jobs ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED"
    with psycopg.connect(url) as first, psycopg.connect(url) as second:
        got_first = first.execute(claim).fetchone()
        got_second = second.execute(claim).fetchone()  # first's lock is still held
        assert got_first == (1,)
        assert got_second == (2,)


def test_ladder_migrations_run_on_postgres_from_two_processes_at_once(postgres_url: str) -> None:
    """Two ladder processes starting together both migrate (the advisory lock makes one
    wait), and the schema ends up at the newest revision, once."""
    script = (
        "import sys; from cirulla.ladder.db import open_database; "
        "open_database(sys.argv[1]); print('ok')"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, postgres_url],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    with psycopg.connect(libpq_url(postgres_url)) as conn:
        tables = {
            row[0]
            for row in conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
            )
        }
        versions = conn.execute("SELECT version_num FROM alembic_version").fetchall()
    assert {"bots", "bot_versions", "ladder_matches", "ladder_seats", "workers"} <= tables
    assert len(versions) == 1
