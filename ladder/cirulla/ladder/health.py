"""The ladder's gRPC health (``grpc.health.v1.Health``), beside the match server's.

The port of ``cirulla ladder serve`` (and ``ladder worker``) already answers the match
server's health: ``""`` and ``cirulla.v1.MatchService`` are SERVING once it listens. The
ladder adds ``cirulla.v1.LadderService``: NOT_SERVING while it recovers what a previous
incarnation left, SERVING once its workers run, and NOT_SERVING again whenever its
database does not answer (checked every ``CHECK_SECONDS``; everything the ladder does goes
through it) or it shuts down. A load balancer or ``grpc_health_probe -service
cirulla.v1.LadderService`` then sees a ladder that cannot schedule or record anything.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from grpc_health.v1 import health, health_pb2
from sqlalchemy import text

from cirulla.ladder.service import SERVICE_NAME
from cirulla.ladder.store import LadderStore

log = logging.getLogger("cirulla.ladder")

#: Seconds between two checks of the database.
CHECK_SECONDS = 2.0
SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


def database_answers(store: LadderStore) -> bool:
    """One ``SELECT 1`` on a fresh or pooled connection (blocking)."""
    try:
        with store.engine.connect() as conn:
            conn.execute(text("SELECT 1"))
        return True
    except Exception as exc:  # any failure: the database is not usable now
        log.warning("ladder_database_unreachable error=%s", str(exc).splitlines()[0][:200])
        return False


async def starting(servicer: health.aio.HealthServicer) -> None:
    """The LadderService is known, and not yet serving (the ladder recovers first)."""
    await servicer.set(SERVICE_NAME, NOT_SERVING)


async def watch(
    servicer: health.aio.HealthServicer,
    store: LadderStore,
    stop: asyncio.Event,
    every: float = CHECK_SECONDS,
) -> None:
    """SERVING while the database answers, NOT_SERVING while it does not, until ``stop``
    (the graceful shutdown then sets every service NOT_SERVING)."""
    status = None
    while not stop.is_set():
        now = SERVING if await asyncio.to_thread(database_answers, store) else NOT_SERVING
        if now != status:
            status = now
            await servicer.set(SERVICE_NAME, now)
            name = "SERVING" if now == SERVING else "NOT_SERVING"
            log.info("ladder_health service=%s status=%s", SERVICE_NAME, name)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), every)
