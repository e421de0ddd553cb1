"""The scheduler: keeps a short backlog of scheduled matches for the workers.

Each tick looks at one queue in turn and, while fewer matches wait to be claimed than
the backlog, plans the next match (or duplicate pair) with ``matchmaking.plan`` from the
bots free right now. The backlog is the live workers' capacity: the sum of the slots
(``--concurrency``) of every worker row with a heartbeat within a lease, ``serve``'s own
included, and at least ``backlog`` (2), re-read every ``CAPACITY_SECONDS``. So each free
slot finds a match waiting, and no more: a short backlog means each match is planned
from fresh ratings.

**Pace** (``--pace``, ``--idle-pace``: games per minute). By default the ladder plays
flat out, as fast as its workers can. With a pace, a plan of ``g`` games (a pair: 2)
is made only ``g * 60 / pace`` seconds after the previous plan, across all queues, so
the games scheduled in any minute stay within the pace (plus the first plan's games).
A queue is *settled* when none of its bots has validation games left and every
rating's ``sigma`` is under ``SETTLED_SIGMA``: nothing new to learn, so its games are
planned at the idle pace; a new version (validation games to play) brings the queue
back to ``pace`` at the next tick, and the matchmaker seeds it first. Requested matches
(``ladder request``) are not paced.
"""

from __future__ import annotations

import itertools
import logging
import random
import threading
import time
from collections.abc import Callable, Sequence

from cirulla.ladder import matchmaking
from cirulla.ladder.defaults import LEASE_SECONDS
from cirulla.ladder.idle import MOST_SECONDS, Backoff, nudge, nudges, wait_idle
from cirulla.ladder.store import QUEUES, Candidate, LadderStore, MatchConfig

log = logging.getLogger("cirulla.ladder")
#: A rating's ``sigma`` under this is settled (it starts at 8.33; random bots of equal
#: strength reach 2 after about 145 rating updates each in 2p, 1.5 after about 480).
SETTLED_SIGMA = 2.0
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
        pace: float = 0.0,
        idle_pace: float = 0.0,
        clock: Callable[[], float] = time.monotonic,
        idle_poll: float = MOST_SECONDS,
    ) -> None:
        self.store = store
        #: the longest wait between looks at an idle ladder (``cirulla.ladder.idle``)
        self.idle_poll = idle_poll
        self.config = config
        #: the smallest backlog, whatever the workers' capacity
        self.backlog = backlog
        self.live_within = live_within
        self._capacity = 0
        self._capacity_at = -CAPACITY_SECONDS
        self.queues = queues
        self.rng = rng or random.Random()
        self._turn = itertools.cycle(queues)
        #: games per minute at most (0: unlimited), and once a queue is settled
        self.pace = pace
        self.idle_pace = idle_pace
        self.clock = clock
        #: when the last plan was made and its games (the pace's debt)
        self._planned_at = -1e18
        self._planned_games = 0

    def tick(self) -> list[str]:
        """Plan at most one match (or pair) per queue while the backlog has room."""
        scheduled: list[str] = []
        target = self.target()
        for _ in self.queues:
            if self.store.matches.waiting() >= target:
                break
            queue = next(self._turn)
            need = matchmaking.games_per_plan(queue)
            candidates = self.store.bots.candidates(queue, need)
            pace = self.pace_of(candidates)
            now = self.clock()
            if pace and now < self._planned_at + self._planned_games * 60.0 / pace:
                continue  # within the pace's debt: this queue waits
            plans = matchmaking.plan(queue, candidates, self.config, self.rng)
            if plans:
                self._planned_at, self._planned_games = now, len(plans)
                ids = self.store.matches.schedule(plans)
                log.info("ladder_scheduled queue=%s matches=%s", queue, ",".join(ids))
                scheduled += ids
        return scheduled

    def pace_of(self, candidates: Sequence[Candidate]) -> float:
        """Games per minute for a queue with these candidates (0: unlimited): the idle
        pace once all are settled, else ``pace``."""
        settled = all(c.validation_games_left == 0 and c.sigma < SETTLED_SIGMA for c in candidates)
        if settled and self.idle_pace:
            return self.idle_pace
        return self.pace

    def target(self) -> int:
        """Matches to keep waiting: the live workers' slots, at least ``backlog``."""
        now = time.monotonic()
        if now - self._capacity_at >= CAPACITY_SECONDS:
            self._capacity = self.store.workers.live_slots(self.live_within)
            self._capacity_at = now
        return max(self.backlog, self._capacity)

    def loop(self, stop: threading.Event) -> None:
        """Plan until ``stop``: at once again after a plan, every ``FIRST_SECONDS`` while
        matches are in flight, less and less often while the ladder is idle (a nudge
        wakes it: ``cirulla.ladder.idle``)."""
        backoff = Backoff(most=self.idle_poll)
        while not stop.is_set():
            seen = nudges(stop)
            try:
                planned = self.tick()
                busy = bool(planned) or self.store.matches.in_flight() > 0
            except Exception:
                log.exception("ladder_scheduler_error")
                planned, busy = [], False
            if planned:
                nudge(stop)  # the idle workers claim them now
                backoff.reset()
                continue
            if busy:
                backoff.reset()
            wait_idle(stop, backoff, seen)
