"""Leases of the ladder's workers: what happens to the matches of a worker that dies.

A worker (embedded in ``cirulla ladder serve`` or a ``cirulla ladder worker`` on any
machine) holds a lease on each match it claimed and renews all of them with every
heartbeat (``LadderStore.heartbeat``). A worker that is SIGKILLed, loses its network or
hangs stops renewing; once a lease has expired, any ladder process's reaper ends it:

* a match still ``claimed`` never started on a match server: it goes back to
  ``scheduled`` (re-queued, with a note) and another worker plays it;
* a match ``running`` was being played on the dead worker's match server, which is gone
  with it: it is ``cancelled`` with the reason, and is never rated.

Each step is one guarded UPDATE (``... WHERE status = X AND lease_expires_at < now``), so
a reaper racing a heartbeat, a result report or another reaper changes a match at most
once, and a late result of a reaped match changes nothing (``finish`` requires the match
to be claimed or running).
"""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, select, update

from cirulla.clients.ladder.schema import enrollments, ladder_matches, workers
from cirulla.clients.ladder.store import ENROLLMENT_TIMEOUT, LadderStore

log = logging.getLogger("cirulla.ladder.leases")

#: A worker row silent for this long, holding no match, is deleted.
WORKER_GONE_SECONDS = 600.0


@dataclass(frozen=True, slots=True)
class Reaped:
    match_id: str
    worker_id: str
    action: str  # "requeued" | "cancelled"
    reason: str


def reap(store: LadderStore) -> list[Reaped]:
    """End the leases that expired: re-queue claimed matches, cancel running ones."""
    now = store.now()
    out: list[Reaped] = []
    with store.engine.connect() as conn:
        expired = conn.execute(
            select(
                ladder_matches.c.id,
                ladder_matches.c.status,
                ladder_matches.c.worker_id,
                ladder_matches.c.notes,
            ).where(
                ladder_matches.c.status.in_(("claimed", "running")),
                ladder_matches.c.lease_expires_at < now,
            )
        ).all()
    for row in expired:
        worker = row.worker_id or "?"
        guard = (
            ladder_matches.c.id == row.id,
            ladder_matches.c.status == row.status,
            ladder_matches.c.lease_expires_at < now,
        )
        if row.status == "claimed":
            reason = f"worker {worker} lost its lease before starting the match; re-queued"
            notes = [*json.loads(row.notes or "[]"), reason]
            values: dict[str, Any] = {
                "status": "scheduled",
                "worker_id": None,
                "lease_expires_at": None,
                "server_address": "",
                "notes": json.dumps(notes),
            }
            action = "requeued"
        else:
            reason = (
                f"worker {worker} stopped renewing its lease mid-match (dead or cut off); "
                "its match server is gone with it"
            )
            values = {
                "status": "cancelled",
                "cancel_reason": reason,
                "finished_at": now,
                "lease_expires_at": None,
            }
            action = "cancelled"
        with store.engine.begin() as conn:
            done = conn.execute(update(ladder_matches).where(*guard).values(**values)).rowcount
        if done == 1:
            if action == "cancelled":
                store.settle_pair_of(row.id)  # its twin, if over, is rated now
            log.warning("lease_expired match=%s worker=%s %s", row.id, worker, action)
            out.append(Reaped(row.id, worker, action, reason))
    forget_gone(store, now)
    return out


def forget_gone(store: LadderStore, now: float) -> None:
    """Delete worker rows long silent and holding nothing, and enrollments whose ladder
    process died without closing them (their heartbeat stopped)."""
    with store.engine.begin() as conn:
        holding = select(ladder_matches.c.worker_id).where(
            ladder_matches.c.status.in_(("claimed", "running")),
            ladder_matches.c.worker_id.is_not(None),
        )
        conn.execute(
            delete(workers).where(
                workers.c.heartbeat_at < now - WORKER_GONE_SECONDS,
                workers.c.id.not_in(holding),
            )
        )
        conn.execute(
            delete(enrollments).where(enrollments.c.heartbeat_at < now - 2 * ENROLLMENT_TIMEOUT)
        )


def lost(store: LadderStore, worker_id: str, match_ids: set[str]) -> set[str]:
    """Those of a worker's matches it no longer holds (reaped after a stall): the worker
    stops playing them (their result would change nothing)."""
    if not match_ids:
        return set()
    with store.engine.connect() as conn:
        held: set[Any] = set(
            conn.execute(
                select(ladder_matches.c.id).where(
                    ladder_matches.c.id.in_(sorted(match_ids)),
                    ladder_matches.c.worker_id == worker_id,
                    ladder_matches.c.status.in_(("claimed", "running")),
                )
            ).scalars()
        )
    return match_ids - held


def reaper_loop(store: LadderStore, stop: threading.Event, every: float) -> None:
    """``reap`` every ``every`` seconds until ``stop`` (any ladder process may run one)."""
    while not stop.wait(every):
        try:
            reap(store)
        except Exception:
            log.exception("ladder_reaper_failed")
