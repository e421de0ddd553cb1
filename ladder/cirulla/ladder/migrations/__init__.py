"""Alembic migrations of the clients' database (the ladder's tables and the worker pool's),
run by ``cirulla.ladder.database.migrate``."""
