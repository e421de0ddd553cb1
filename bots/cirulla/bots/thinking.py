"""How long a bot thinks and where: the time a decision may take from the clock the server
reported (``time_budget``), and the thread that runs the policy decision after decision
(``Thinker``), for the kit (``cirulla.bots.kit.BotClient``).
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections.abc import Callable

MOVE_SAFETY = 0.15  # keep this share of the per-move time for the network
MIN_MARGIN = 0.1  # ... and at least this many seconds
BANK_SHARE = 30  # spend at most 1/30 of the game bank on one decision
OVERRUN_GRACE = 0.05  # how long past its budget a policy may answer (inside MIN_MARGIN)


def time_budget(
    move_left: float | None, bank_left: float | None, increment: float = 0.0
) -> float | None:
    """Seconds a decision may take, from the clock the server reported (None: no limit).

    With an increment the bank gets it back after every decision, so a decision may spend
    it on top of its share of the bank (never more than the bank holds).
    """
    budgets = []
    if move_left is not None:
        budgets.append(move_left - max(MIN_MARGIN, MOVE_SAFETY * move_left))
    if bank_left is not None:
        share = min(bank_left / BANK_SHARE + increment, bank_left)
        budgets.append(share - MIN_MARGIN / 2)
    if not budgets:
        return None
    return max(0.0, min(budgets))


class Thinker:
    """One thread that runs the policy decision after decision (starting a thread per
    decision costs more than a cheap policy's whole decision). A decision the kit stopped
    waiting for keeps it busy: the next decision then gets a fresh thread."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[Callable[[], None] | None] = queue.SimpleQueue()
        self._last: threading.Event | None = None  # set once the last job has returned

    async def run(self, job: Callable[[], None], timeout: float) -> bool:
        """Run ``job`` on the thread; False if it is still running after ``timeout``."""
        if self._last is None or not self._last.is_set():
            self._jobs = queue.SimpleQueue()  # the busy thread keeps its own queue
            threading.Thread(
                target=self._loop, args=(self._jobs,), name="bot-decision", daemon=True
            ).start()
        done = self._last = threading.Event()
        loop = asyncio.get_running_loop()
        finished: asyncio.Future[None] = loop.create_future()

        def settle() -> None:
            if not finished.done():
                finished.set_result(None)

        def wrapped() -> None:
            try:
                job()
            finally:
                done.set()
                # (RuntimeError: the loop has closed, nobody waits any more)
                with contextlib.suppress(RuntimeError):
                    loop.call_soon_threadsafe(settle)

        self._jobs.put(wrapped)
        try:
            await asyncio.wait_for(asyncio.shield(finished), timeout)
        except TimeoutError:
            return False
        return True

    @staticmethod
    def _loop(jobs: queue.SimpleQueue[Callable[[], None] | None]) -> None:
        while (job := jobs.get()) is not None:
            job()

    def close(self) -> None:
        """Let the thread end (a busy one ends after its job)."""
        self._jobs.put(None)
        self._last = None
