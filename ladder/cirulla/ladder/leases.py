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

import logging
import threading
from dataclasses import dataclass

from cirulla.ladder.store import ENROLLMENT_TIMEOUT, LadderStore

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
    for row in store.matches.expired(now):
        worker = row.worker_id or "?"
        if row.status == "claimed":
            reason = f"worker {worker} lost its lease before starting the match; re-queued"
        else:
            reason = (
                f"worker {worker} stopped renewing its lease mid-match (dead or cut off); "
                "its match server is gone with it"
            )
        action = store.matches.end_expired(row.id, row.status, now, reason)
        if action is not None:
            if action == "cancelled":
                store.results.settle_pair_of(row.id)  # its twin, if over, is rated now
            log.warning("lease_expired match=%s worker=%s %s", row.id, worker, action)
            out.append(Reaped(row.id, worker, action, reason))
    forget_gone(store, now)
    return out


def forget_gone(store: LadderStore, now: float) -> None:
    """Delete worker rows long silent and holding nothing, and enrollments whose ladder
    process died without closing them (their heartbeat stopped)."""
    store.workers.forget_silent(now - WORKER_GONE_SECONDS)
    store.enrollments.forget_stale(now - 2 * ENROLLMENT_TIMEOUT)


def lost(store: LadderStore, worker_id: str, match_ids: set[str]) -> set[str]:
    """Those of a worker's matches it no longer holds (reaped after a stall): the worker
    stops playing them (their result would change nothing)."""
    if not match_ids:
        return set()
    return match_ids - store.matches.held_by(worker_id, match_ids)


def reaper_loop(store: LadderStore, stop: threading.Event, every: float) -> None:
    """``reap`` every ``every`` seconds until ``stop`` (any ladder process may run one)."""
    while not stop.wait(every):
        try:
            reap(store)
        except Exception:
            log.exception("ladder_reaper_failed")
