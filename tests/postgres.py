"""PostgreSQL for tests: a real server, one fresh database per test.

``CIRULLA_TEST_POSTGRES_URL`` (exported by ``.ci/setup.d/10-postgres.sh``) names a running
server; without it the session starts its own throwaway cluster with
``cirulla.clients.pgtemp`` (needs Debian's ``postgresql-15``; if it is missing the tests
that need PostgreSQL fail with one line saying what to install, they are never skipped).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest

from cirulla.clients.pgtemp import TEST_URL_ENV, PostgresMissing, TempPostgres


def with_database(url: str, name: str) -> str:
    """The same server URL pointing at another database."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, parts.fragment))


def libpq_url(url: str) -> str:
    """psycopg takes ``postgresql://``; SQLAlchemy-style ``postgresql+psycopg://`` too."""
    return url.replace("postgresql+psycopg://", "postgresql://", 1)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """URL of a running PostgreSQL (its default database); started once per session."""
    url = os.environ.get(TEST_URL_ENV)
    if url:
        yield url
        return
    try:
        server = TempPostgres()
        server.start()
    except PostgresMissing as exc:
        server.stop()
        pytest.fail(str(exc), pytrace=False)
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture
def postgres_url(postgres_server: str) -> Iterator[str]:
    """URL (``postgresql://``) of a database created for this test and dropped after it."""
    name = f"test_{uuid.uuid4().hex[:16]}"
    admin = libpq_url(postgres_server)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield with_database(postgres_server, name)
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh ladder database URL, once on SQLite and once on PostgreSQL."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'ladder.sqlite3'}"
    return str(request.getfixturevalue("postgres_url"))
