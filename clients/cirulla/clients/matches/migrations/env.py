"""Alembic environment: always driven programmatically with an open connection.

``cirulla.clients.ladder.db.migrate`` puts the connection in ``config.attributes``; no
``alembic.ini`` is needed by users.
"""

from __future__ import annotations

from alembic import context

from cirulla.clients.ladder.schema import metadata

connection = context.config.attributes.get("connection")
if connection is None:  # pragma: no cover - only reachable from a misconfigured caller
    raise RuntimeError("run ladder migrations through cirulla.clients.ladder.db.migrate")

context.configure(
    connection=connection,
    target_metadata=metadata,
    render_as_batch=connection.dialect.name == "sqlite",
)
with context.begin_transaction():
    context.run_migrations()
