"""Prometheus metrics of the ladder, beside the match server's (``cirulla.server.metrics``).

Two kinds:

* **Counters** of what this process saw happen (matches it finished, seat faults, bot
  processes it started or restarted, deactivations it wrote), incremented by the runner,
  the bot pool and the store where it happens.
* **Gauges read from the database at scrape time** (``LadderCollector``): the queue
  depth per queue, matches per status, live workers, their leases and slots, bots per
  state, live enrollments. They are the whole ladder's (every ``serve`` and ``worker``
  shares the database), so any ladder process answers for all of them; a scrape costs a
  handful of ``COUNT`` queries, on the scraper's thread, never on the event loop.

Nothing here carries a bot name, a seed or a token: counts and labels of fixed sets only.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, TypedDict

from prometheus_client import REGISTRY, Counter
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector
from sqlalchemy import func, select

from cirulla.clients.matches.outcome import Outcome
from cirulla.ladder.defaults import QUEUES
from cirulla.ladder.schema import (
    BOT_STATES,
    MATCH_STATES,
    bots,
    enrollments,
    ladder_matches,
    workers,
)

if TYPE_CHECKING:
    from cirulla.ladder.store import LadderStore

log = logging.getLogger("cirulla.ladder")

MATCHES_FINISHED = Counter(
    "cirulla_ladder_matches_finished",
    "Ladder matches this process played to a result (rated or not), by queue.",
    ["queue"],
)
SEAT_FAULTS = Counter(
    "cirulla_ladder_seat_faults",
    "Seats of ladder matches this process played that failed, by kind (timeout covers "
    "forfeits on the clock, illegal moves until the clock ran out; crash, hung, no-join).",
    ["kind"],
)
BOT_STARTS = Counter(
    "cirulla_ladder_bot_processes_started",
    "Kept-alive bot processes this process started.",
)
BOT_RESTARTS = Counter(
    "cirulla_ladder_bot_restarts",
    "Bot processes started in place of one that could not play, by reason: crash (a "
    "seat's process died; its next match starts a new one) or duplicate_twin (every idle "
    "process had played the other game of the pair, which a process never plays twice, "
    "or a game of a pair still open, after which it plays nothing until the pair ends).",
    ["reason"],
)
for _reason in ("crash", "duplicate_twin"):  # both series exist from the start (0)
    BOT_RESTARTS.labels(_reason)
DEACTIVATIONS = Counter(
    "cirulla_ladder_bot_deactivations",
    "Bots this process deactivated after failures in a row.",
)


def match_played(queue: str, seat_kinds: Iterable[str]) -> None:
    """After a match's result was recorded: one finished match, one fault per bad seat."""
    MATCHES_FINISHED.labels(queue).inc()
    for kind in seat_kinds:
        if kind != Outcome.OK:
            SEAT_FAULTS.labels(kind).inc()
        if kind == Outcome.CRASH:
            BOT_RESTARTS.labels("crash").inc()


class Counts(TypedDict):
    """What a scrape reads from the database: matches scheduled per queue, matches per
    status, bots per state, and the live leases, workers, slots and enrollments."""

    depth: dict[str, int]
    status: dict[str, int]
    state: dict[str, int]
    leases: int
    workers: int
    slots: int
    enrollments: int


class LadderCollector(Collector):
    """The ladder's gauges, counted in its database when scraped."""

    def __init__(self) -> None:
        self.store: LadderStore | None = None
        self.lease_seconds = 60.0

    def collect(self) -> Iterator[GaugeMetricFamily]:
        store = self.store
        if store is None:
            return
        try:
            rows = self._read(store)
        except Exception:  # the database is away: the scrape shows the rest
            log.exception("ladder_metrics_failed")
            return
        depth = GaugeMetricFamily(
            "cirulla_ladder_queue_depth",
            "Ladder matches scheduled and not yet claimed by a worker, by queue.",
            labels=["queue"],
        )
        for queue, n in sorted(rows["depth"].items()):
            depth.add_metric([queue], n)
        yield depth
        matches = GaugeMetricFamily(
            "cirulla_ladder_matches",
            "Ladder matches in the database by status (running: being played now).",
            labels=["status"],
        )
        for status in MATCH_STATES:
            matches.add_metric([status], rows["status"].get(status, 0))
        yield matches
        states = GaugeMetricFamily(
            "cirulla_ladder_bots", "Registered ladder bots by state.", labels=["state"]
        )
        for state in BOT_STATES:
            states.add_metric([state], rows["state"].get(state, 0))
        yield states
        yield GaugeMetricFamily(
            "cirulla_ladder_worker_leases",
            "Matches claimed or running under a lease that has not expired (every worker).",
            value=rows["leases"],
        )
        yield GaugeMetricFamily(
            "cirulla_ladder_workers_live",
            "Ladder processes (serve and workers) with a heartbeat within a lease.",
            value=rows["workers"],
        )
        yield GaugeMetricFamily(
            "cirulla_ladder_worker_slots",
            "Matches the live ladder processes play at once, together (their --concurrency).",
            value=rows["slots"],
        )
        yield GaugeMetricFamily(
            "cirulla_ladder_enrollments",
            "Open Enroll streams of connect-in bots (rows of the enrollments table).",
            value=rows["enrollments"],
        )

    def _read(self, store: LadderStore) -> Counts:
        now = store.now()
        with store.engine.connect() as conn:
            m = ladder_matches.c
            counted = (
                conn.execute(select(m.queue, m.status, func.count()).group_by(m.queue, m.status))
                .tuples()
                .all()
            )
            leases = conn.execute(
                select(func.count())
                .select_from(ladder_matches)
                .where(m.status.in_(("claimed", "running")), m.lease_expires_at >= now)
            ).scalar_one()
            state_rows = conn.execute(
                select(bots.c.state, func.count()).group_by(bots.c.state)
            ).tuples()
            live = workers.c.heartbeat_at >= now - self.lease_seconds
            n_workers, slots = (
                conn.execute(
                    select(func.count(), func.coalesce(func.sum(workers.c.slots), 0)).where(live)
                )
                .tuples()
                .one()
            )
            n_enrolled = conn.execute(select(func.count()).select_from(enrollments)).scalar_one()
            state = {str(s): int(n) for s, n in state_rows}
        depth: dict[str, int] = {}
        status: dict[str, int] = {}
        for queue, st, n in counted:
            status[st] = status.get(st, 0) + int(n)
            if st == "scheduled":
                depth[queue] = depth.get(queue, 0) + int(n)
        for queue in QUEUES:
            depth.setdefault(queue, 0)
        return {
            "depth": depth,
            "status": status,
            "state": state,
            "leases": int(leases),
            "workers": int(n_workers),
            "slots": int(slots or 0),
            "enrollments": int(n_enrolled),
        }


COLLECTOR = LadderCollector()
_registered = threading.Lock()
_done = False


def watch(store: LadderStore, lease_seconds: float) -> None:
    """Count ``store``'s ladder in the gauges from now on (the last ladder of the process)."""
    global _done
    with _registered:
        COLLECTOR.store = store
        COLLECTOR.lease_seconds = lease_seconds
        if not _done:
            REGISTRY.register(COLLECTOR)
            _done = True


def unwatch(store: LadderStore) -> None:
    """Stop reading ``store`` (it is being closed)."""
    with _registered:
        if COLLECTOR.store is store:
            COLLECTOR.store = None
