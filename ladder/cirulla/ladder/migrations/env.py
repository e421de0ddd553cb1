"""Alembic environment: always driven programmatically with an open connection.

``cirulla.ladder.database.migrate`` puts the connection in ``config.attributes``;
no ``alembic.ini`` is needed by users. The target metadata (for ``alembic revision
--autogenerate`` only) is the database's one ``MetaData``, with the ladder's tables when
the ladder's schema was imported (give ``target_metadata`` in ``config.attributes``
otherwise); the shared layer imports nothing of the ladder.
"""

from __future__ import annotations

from alembic import context

from cirulla.ladder.database import metadata

connection = context.config.attributes.get("connection")
if connection is None:  # pragma: no cover - only reachable from a misconfigured caller
    raise RuntimeError("run the migrations through cirulla.ladder.database.migrate")

context.configure(
    connection=connection,
    target_metadata=context.config.attributes.get("target_metadata", metadata),
    render_as_batch=connection.dialect.name == "sqlite",
)
with context.begin_transaction():
    context.run_migrations()
