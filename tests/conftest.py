"""Shared fixtures. Tests use the real parts: real rules core, real servers, real processes."""

from __future__ import annotations

from pathlib import Path

import pytest

from cirulla.logs import quiet_grpc

# The tests run runners in this process too: the same gRPC settings as the cirulla
# command's (before any test module imports grpc).
quiet_grpc()


DATA = Path(__file__).parent / "data"


@pytest.fixture
def data_dir() -> Path:
    return DATA


# PostgreSQL fixtures (a real server; one fresh database per test): see tests/postgres.py.
# The sdist and the wheel, built once per session: see tests/dists.py.
from .dists import built_dists  # noqa: E402, F401
from .postgres import db_url, postgres_server, postgres_url  # noqa: E402, F401
