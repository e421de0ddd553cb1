"""The scheduler: keeps a short backlog of scheduled matches for the workers.

Each tick looks at one queue in turn and, while fewer matches wait to be claimed than
the backlog, plans the next match (or duplicate pair) with ``matchmaking.plan`` from the
bots free right now. The backlog is the live workers' capacity: the sum of the slots
(``--concurrency``) of every worker row with a heartbeat within a lease, ``serve``'s own
included, and at least ``backlog`` (2), re-read every ``CAPACITY_SECONDS``. So each free
slot finds a match waiting, and no more: a short backlog means each match is planned
from fresh ratings.
"""

from __future__ import annotations

import itertools
import logging
import random
import threading
import time

from cirulla.ladder import matchmaking
from cirulla.ladder.defaults import LEASE_SECONDS
from cirulla.ladder.store import QUEUES, LadderStore, MatchConfig

log = logging.getLogger("cirulla.ladder")
TICK_SECONDS = 0.2
#: How often the live workers' capacity is read again.
CAPACITY_SECONDS = 2.0


class Scheduler:
    def __init__(
        self,
        store: LadderStore,
        config: MatchConfig,
        *,
        backlog: int = 2,
        queues: tuple[str, ...] = QUEUES,
        rng: random.Random | None = None,
        live_within: float = LEASE_SECONDS,
    ) -> None:
        self.store = store
        self.config = config
        #: the smallest backlog, whatever the workers' capacity
        self.backlog = backlog
        self.live_within = live_within
        self._capacity = 0
        self._capacity_at = -CAPACITY_SECONDS
        self.queues = queues
        self.rng = rng or random.Random()
        self._turn = itertools.cycle(queues)

    def tick(self) -> list[str]:
        """Plan at most one match (or pair) per queue while the backlog has room."""
        scheduled: list[str] = []
        target = self.target()
        for _ in self.queues:
            if self.store.matches.waiting() >= target:
                break
            queue = next(self._turn)
            need = matchmaking.games_per_plan(queue)
            plans = matchmaking.plan(
                queue, self.store.bots.candidates(queue, need), self.config, self.rng
            )
            if plans:
                ids = self.store.matches.schedule(plans)
                log.info("ladder_scheduled queue=%s matches=%s", queue, ",".join(ids))
                scheduled += ids
        return scheduled

    def target(self) -> int:
        """Matches to keep waiting: the live workers' slots, at least ``backlog``."""
        now = time.monotonic()
        if now - self._capacity_at >= CAPACITY_SECONDS:
            self._capacity = self.store.workers.live_slots(self.live_within)
            self._capacity_at = now
        return max(self.backlog, self._capacity)

    def loop(self, stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                planned = self.tick()
            except Exception:
                log.exception("ladder_scheduler_error")
                planned = []
            if not planned:
                stop.wait(TICK_SECONDS)
