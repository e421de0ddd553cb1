"""The ladder's gRPC health, checked with real ``grpc.health.v1.Health/Check`` calls on a
real ``cirulla ladder serve``: the LadderService is SERVING beside the match server once
the ladder runs (SQLite and PostgreSQL), NOT_SERVING while its PostgreSQL database
refuses connections, SERVING again when it is back."""

from __future__ import annotations

from pathlib import Path

import grpc
import psycopg
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from sqlalchemy.engine import make_url

from cirulla.ladder.pgtemp import libpq_url
from tests.ladder_harness import LadderProcess, wait_for

LADDER_SERVICE = "cirulla.v1.LadderService"
SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


def status(address: str, service: str) -> int:
    with grpc.insecure_channel(address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        reply = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=10)
        return int(reply.status)


def test_the_ladder_service_is_serving(tmp_path: Path, db_url: str) -> None:
    ladder = LadderProcess(tmp_path / "ladder", db_url)
    address = ladder.start()
    try:
        wait_for(lambda: status(address, LADDER_SERVICE) == SERVING, 30, "SERVING")
        assert status(address, "") == SERVING
        assert status(address, "cirulla.v1.MatchService") == SERVING
        with grpc.insecure_channel(address) as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            try:
                stub.Check(health_pb2.HealthCheckRequest(service="no.such.Service"), timeout=10)
                raise AssertionError("an unknown service must be NOT_FOUND")
            except grpc.RpcError as exc:
                assert exc.code() == grpc.StatusCode.NOT_FOUND
    finally:
        ladder.stop()
    assert "ladder_health service=cirulla.v1.LadderService status=SERVING" in ladder.log.read_text()


@pytest.mark.slow
def test_not_serving_while_the_database_is_down(tmp_path: Path, postgres_url: str) -> None:
    ladder = LadderProcess(tmp_path / "ladder", postgres_url)
    address = ladder.start()
    name = make_url(postgres_url).database
    admin_url = libpq_url(str(make_url(postgres_url).set(database="postgres")))

    def block(allowed: bool) -> None:
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS {str(allowed).lower()}')
            if not allowed:  # and cut the ladder's open connections
                conn.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE datname = %s AND pid <> pg_backend_pid()",
                    (name,),
                )

    try:
        wait_for(lambda: status(address, LADDER_SERVICE) == SERVING, 30, "SERVING")
        block(allowed=False)
        try:
            wait_for(lambda: status(address, LADDER_SERVICE) == NOT_SERVING, 30, "NOT_SERVING")
            assert status(address, "cirulla.v1.MatchService") == SERVING  # its own database
        finally:
            block(allowed=True)
        wait_for(lambda: status(address, LADDER_SERVICE) == SERVING, 30, "SERVING again")
    finally:
        ladder.stop()
