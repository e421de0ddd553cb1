"""Alembic migrations of the ladder database, run by ``cirulla.clients.ladder.db.migrate``."""
