"""PostgreSQL for tests: a real server, one fresh database per test.

``CIRULLA_TEST_POSTGRES_URL`` (exported by ``.ci/setup.d/10-postgres.sh``) names a running
server; without it the session starts its own throwaway cluster with
``cirulla.ladder.pgtemp`` (needs Debian's ``postgresql-15``; if it is missing the tests
that need PostgreSQL fail with one line saying what to install, they are never skipped).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from cirulla.ladder.pgtemp import (
    TEST_URL_ENV,
    PostgresMissing,
    running_server,
    scratch_database,
)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """URL of a running PostgreSQL (its default database); started once per session."""
    try:
        with running_server(os.environ.get(TEST_URL_ENV)) as url:
            yield url
    except PostgresMissing as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture
def postgres_url(postgres_server: str) -> Iterator[str]:
    """URL (``postgresql://``) of a database created for this test and dropped after it."""
    with scratch_database(postgres_server, "test") as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh ladder database URL, once on SQLite and once on PostgreSQL."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'ladder.sqlite3'}"
    return str(request.getfixturevalue("postgres_url"))
