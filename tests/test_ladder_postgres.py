"""The PostgreSQL the ladder's tests run on is real: it connects, each test has its own
database, and row locks with SKIP LOCKED behave as the workers' claiming relies on."""

from __future__ import annotations

import psycopg

from .postgres import libpq_url


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
