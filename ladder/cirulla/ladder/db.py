"""The ladder's database: the clients' shared database (``cirulla.ladder.database``)
at the ladder's default place.

Engines, URLs and the one Alembic migration chain live in the shared layer because the
worker pool's tables (``cirulla tournament --db``) share the database with the ladder's;
this module keeps the names the ladder's processes and tests use.
"""

from __future__ import annotations

from sqlalchemy import Engine

from cirulla.ladder import database
from cirulla.ladder.database import (
    MIGRATION_LOCK,
    MIGRATIONS,
    SQLITE_BUSY_MS,
    create,
    database_url,
    display_url,
    migrate,
    private_sqlite_file,
)
from cirulla.ladder.defaults import DEFAULT_DB

__all__ = [
    "MIGRATIONS",
    "MIGRATION_LOCK",
    "SQLITE_BUSY_MS",
    "create",
    "database_url",
    "display_url",
    "migrate",
    "open_database",
    "private_sqlite_file",
]


def open_database(db: str = DEFAULT_DB) -> Engine:
    """An engine on ``db`` (the ladder's file by default) with the schema migrated."""
    return database.open_database(db)
