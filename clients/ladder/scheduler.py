"""The scheduler: keeps a short backlog of scheduled matches for the workers.

Each tick looks at one queue in turn and, while fewer than ``backlog`` matches wait to be
claimed, plans the next match (or duplicate pair) with ``matchmaking.plan`` from the
bots free right now. A short backlog means each match is planned from fresh ratings.
"""

from __future__ import annotations

import itertools
import logging
import random
import threading

from cirulla.clients.ladder import matchmaking
from cirulla.clients.ladder.store import QUEUES, LadderStore, MatchConfig

log = logging.getLogger("cirulla.ladder")
TICK_SECONDS = 0.2


class Scheduler:
    def __init__(
        self,
        store: LadderStore,
        config: MatchConfig,
        *,
        backlog: int = 2,
        queues: tuple[str, ...] = QUEUES,
        rng: random.Random | None = None,
    ) -> None:
        self.store = store
        self.config = config
        self.backlog = backlog
        self.queues = queues
        self.rng = rng or random.Random()
        self._turn = itertools.cycle(queues)

    def tick(self) -> list[str]:
        """Plan at most one match (or pair) per queue while the backlog has room."""
        scheduled: list[str] = []
        for _ in self.queues:
            if self.store.waiting() >= self.backlog:
                break
            queue = next(self._turn)
            need = matchmaking.games_per_plan(queue)
            plans = matchmaking.plan(
                queue, self.store.candidates(queue, need), self.config, self.rng
            )
            if plans:
                ids = self.store.schedule(plans)
                log.info("ladder_scheduled queue=%s matches=%s", queue, ",".join(ids))
                scheduled += ids
        return scheduled

    def loop(self, stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                planned = self.tick()
            except Exception:
                log.exception("ladder_scheduler_error")
                planned = []
            if not planned:
                stop.wait(TICK_SECONDS)
