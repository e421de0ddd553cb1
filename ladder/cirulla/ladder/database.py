"""The clients' database on SQLite or PostgreSQL: engines, URLs and the one migration chain.

One database holds the ladder's tables and the worker pool's (``cirulla tournament --db``
queues its games there for ``cirulla ladder worker`` processes), so both open it here.
``open_database(url)`` maps the user's ``--db`` (a file path, ``sqlite:///...``,
``postgresql://...``) onto an engine and runs the Alembic migrations shipped in
``cirulla.ladder.migrations`` (``upgrade head``) before anything reads a table,
so every process brings the schema up to date by itself, whichever starts first. On
SQLite every transaction is ``BEGIN IMMEDIATE`` (one writer at a time, waiting up to
``busy_timeout`` instead of failing on a lock upgrade) in WAL mode; PostgreSQL uses
psycopg 3 and row locks.

``metadata`` is the one ``MetaData`` of that database: the pool's tables
(``pool_store``) and the ladder's (its ``schema`` module) are defined on it.
"""

from __future__ import annotations

import ast
import functools
import os
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Connection, Engine, MetaData, create_engine, event, inspect, text
from sqlalchemy.engine import make_url
from sqlalchemy.pool import ConnectionPoolEntry

if TYPE_CHECKING:
    from alembic.config import Config

metadata = MetaData()

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
#: Key of the PostgreSQL advisory lock that serialises concurrent migrations.
MIGRATION_LOCK = 0x6C616464  # "ladd"
SQLITE_BUSY_MS = 30_000


def database_url(db: str) -> str:
    """``--db`` as an SQLAlchemy URL: plain paths are SQLite files; ``postgresql://`` and
    ``postgres://`` use psycopg 3."""
    if "://" not in db:
        return "sqlite:///" + str(Path(db).expanduser())
    scheme, rest = db.split("://", 1)
    if scheme in ("postgresql", "postgres"):
        return "postgresql+psycopg://" + rest
    if scheme.startswith(("postgresql+", "sqlite")):
        return db
    raise ValueError(
        f"--db {db!r}: use a file path, sqlite:///PATH or postgresql://USER@HOST:PORT/NAME"
    )


def display_url(url: str) -> str:
    """The URL without its password, for logs and state files."""
    return make_url(url).render_as_string(hide_password=True)


def private_sqlite_file(url: str) -> None:
    """Create the SQLite file 0600 (and make an existing one, its WAL and SHM 0600).

    SQLite creates ``-wal`` and ``-shm`` with the mode of the database file, so the file
    the ladder keeps its seat tokens and seeds in is never readable by other local users.
    """
    path = make_url(url).database
    if not path or path == ":memory:":
        return
    file = Path(path)
    file.parent.mkdir(parents=True, exist_ok=True)
    os.close(os.open(file, os.O_WRONLY | os.O_CREAT, 0o600))
    for candidate in (file, Path(f"{file}-wal"), Path(f"{file}-shm")):
        if candidate.exists():
            candidate.chmod(0o600)


def create(db: str) -> Engine:
    url = database_url(db)
    if url.startswith("sqlite"):
        private_sqlite_file(url)
        engine = create_engine(url, connect_args={"timeout": SQLITE_BUSY_MS / 1000})
        _sqlite_setup(engine)
        return engine
    return create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=10)


def _sqlite_setup(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection: sqlite3.Connection, _record: ConnectionPoolEntry) -> None:
        # Let SQLAlchemy's "begin" event start transactions (pysqlite's own are deferred).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_MS}")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(conn: Connection) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE")


class SchemaError(ValueError):
    """A database a read cannot use as it is: not a ladder's, or at another revision."""


def alembic_config() -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return config


@functools.cache
def head_revision() -> str | None:
    """The newest revision of the shipped migrations, read from their files' ``revision``
    and ``down_revision`` lines without importing Alembic (the one revision no other one
    revises); None unless there is exactly one such head (then Alembic decides).
    tests/ladder/test_read_db.py checks it against Alembic's own head."""
    revisions: set[str] = set()
    revised: set[str] = set()
    for file in (MIGRATIONS / "versions").glob("*.py"):
        for node in ast.parse(file.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = node.targets[0]
                if isinstance(target, ast.Name) and target.id in ("revision", "down_revision"):
                    value = ast.literal_eval(node.value)
                    names = value if isinstance(value, tuple) else (value,)
                    chosen = revisions if target.id == "revision" else revised
                    chosen.update(str(n) for n in names if n is not None)
    heads = revisions - revised
    return next(iter(heads)) if len(heads) == 1 else None


def current_revision(conn: Connection) -> str | None:
    """The revision the database holds (Alembic's ``alembic_version`` table), None if it
    holds none; several (branches) joined by ", "."""
    if not inspect(conn).has_table("alembic_version"):
        return None
    rows = conn.execute(text("SELECT version_num FROM alembic_version")).all()
    found = sorted(str(row[0]) for row in rows)
    return ", ".join(found) if found else None


def migrate(engine: Engine) -> None:
    """Alembic ``upgrade head`` with the migrations shipped in this package. A database
    already at the head is left as it is without importing Alembic, which cost each
    ladder, worker and ``cirulla ladder`` command 0.1-0.3 s of CPU at every start."""
    with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK})
        head = head_revision()
        if head is not None and current_revision(conn) == head:
            return
        from alembic import command  # heavy (and its Mako, Pygments): only to migrate

        config = alembic_config()
        config.attributes["connection"] = conn
        command.upgrade(config, "head")


def open_database(db: str) -> Engine:
    """An engine on ``db`` with the schema migrated to the newest revision."""
    engine = create(db)
    migrate(engine)
    return engine


def open_current(db: str) -> Engine:
    """An engine on ``db`` whose schema is already this version's newest revision.

    For reads: a command that only reads must never migrate a database that a ladder or
    its workers of another version may be serving (their code would meet tables it does
    not know), nor write a schema into a file that is not a ladder's. Raises
    ``SchemaError`` with one line saying what the database holds and what to do.
    """
    engine = create(db)
    try:
        with engine.connect() as conn:
            current = current_revision(conn)
        head = head_revision()
        if head is None:  # not one head: Alembic's own reading (and its error)
            from alembic.script import ScriptDirectory

            head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    except Exception:
        engine.dispose()
        raise
    if current != head:
        engine.dispose()
        if current is None:
            raise SchemaError("it holds no ladder schema (no alembic revision)")
        raise SchemaError(
            f"its schema is at revision {current} and this cirulla reads revision {head}: "
            "start this version's ladder on it once (cirulla ladder serve) to migrate it, "
            "or read it with the version that wrote it"
        )
    return engine


def first_line(exc: BaseException) -> str:
    """An SQLAlchemy error's own line: without its "[SQL: ...]" and "(Background on this
    error at: URL)" lines, which are not a ladder operator's business."""
    text = str(exc)
    return text.splitlines()[0] if text else type(exc).__name__
