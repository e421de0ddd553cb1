"""Alembic revision files (Alembic skips this ``__init__``)."""
