"""How a ladder process's loops wait when there is nothing to do.

The scheduler and every worker thread look at the database when they wake. A ladder
with work in flight keeps the short wait (``FIRST_SECONDS``): matches are planned and
claimed as fast as before, and so for ``GRACE_SECONDS`` after the last work (the short
gaps between a pool tournament's games, a pair's twins). An idle ladder (nothing
scheduled, claimed or running, no job to claim) then waits longer each time, up to
``--idle-poll`` seconds (``MOST_SECONDS`` by default), so a ladder left alone overnight
costs next to nothing; and whatever this
process learns of new work wakes its loops at once (``Stop.nudge``): the scheduler
wakes the workers when it planned, the ladder's service the scheduler and the workers
when a bot is added or resumed or a match is requested. Work made elsewhere (another
process writing the shared database: a worker of a PostgreSQL ladder, a bot that
enrolls on another ladder process) is seen at the next look, within ``--idle-poll``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

#: The wait while the ladder has work in flight (and the first wait once it has none).
FIRST_SECONDS = 0.2
#: How long after its last work a loop keeps the short wait before it waits longer.
GRACE_SECONDS = 2.0
#: The longest wait of an idle loop (``--idle-poll``'s default).
MOST_SECONDS = 1.0
#: ``--idle-poll``'s ceiling: a worker of a shared database must still see new work.
MOST_IDLE_POLL = 3600.0


def check_idle_poll(seconds: float) -> float:
    """``--idle-poll`` as given, or a one-line error naming it."""
    if not FIRST_SECONDS <= seconds <= MOST_IDLE_POLL:
        raise ValueError(
            f"--idle-poll must be {FIRST_SECONDS} to {MOST_IDLE_POLL:g} seconds, not {seconds}"
        )
    return seconds


class Stop(threading.Event):
    """A ladder process's stop, which can also end its loops' idle waits early.

    ``nudge`` ends every ``idle`` wait under way and never a ``wait``: the heartbeat and
    reaper loops wait with ``wait`` for their period and end only when the event is set.
    ``set`` nudges too, so a stopping ladder's idle loops see it at once."""

    def __init__(self) -> None:
        super().__init__()
        self._idle = threading.Condition()
        self._nudges = 0

    def set(self) -> None:
        super().set()
        self.nudge()

    def nudge(self) -> None:
        """Wake every loop waiting in ``idle``: there may be work."""
        with self._idle:
            self._nudges += 1
            self._idle.notify_all()

    def nudges(self) -> int:
        """The nudges so far: a loop reads it before it looks for work, and its ``idle``
        ends at once if one came while it looked (a wake-up is never lost)."""
        with self._idle:
            return self._nudges

    def idle(self, seconds: float, seen: int) -> None:
        """Wait ``seconds``, or less if the stop is set or a nudge comes (or came since
        ``nudges()`` was ``seen``)."""
        with self._idle:
            self._idle.wait_for(lambda: self.is_set() or self._nudges != seen, seconds)


class Backoff:
    """An idle loop's waits: ``first`` until ``grace`` seconds have passed since the last
    work (or the start), then doubled each idle round up to ``most``."""

    def __init__(
        self,
        first: float = FIRST_SECONDS,
        most: float = MOST_SECONDS,
        grace: float = GRACE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.first = first
        self.most = max(first, most)
        self.grace = grace
        self.clock = clock
        self._worked_at = clock()
        self._next = first

    def reset(self) -> None:
        """There was work: the waits are the shortest again, for ``grace`` seconds."""
        self._worked_at = self.clock()
        self._next = self.first

    def next(self) -> float:
        """This wait's length (each after the grace doubles, up to ``most``)."""
        if self.clock() - self._worked_at < self.grace:
            return self.first
        seconds = self._next
        self._next = min(self.most, seconds * 2)
        return seconds


def nudges(stop: threading.Event) -> int:
    """``Stop.nudges`` (0 for a plain event): read it before looking for work."""
    return stop.nudges() if isinstance(stop, Stop) else 0


def wait_idle(stop: threading.Event, backoff: Backoff, seen: int) -> None:
    """One idle round's wait: ``backoff``'s next length, ended early by a nudge (one since
    ``nudges()`` read ``seen`` included) when ``stop`` is the ladder's ``Stop`` (a plain
    event waits the whole length or until set)."""
    seconds = backoff.next()
    if isinstance(stop, Stop):
        stop.idle(seconds, seen)
    else:
        stop.wait(seconds)


def nudge(stop: threading.Event) -> None:
    """Wake the idle loops of ``stop``'s process (nothing for a plain event)."""
    if isinstance(stop, Stop):
        stop.nudge()
