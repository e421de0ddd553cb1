"""What wakes the worker pool's waiting loops: PostgreSQL's LISTEN/NOTIFY.

Without it, an idle worker finds a job at its next look at ``pool_jobs`` (every 0.2 s
after work, up to ``--idle-poll`` when idle) and a runner sees a reported result at its
next poll (every 0.2 s per game): on one machine a pool tournament of fast games was
mostly waiting (``cirulla bench pool``). So every write that gives a loop something to do
also NOTIFYs, in the same transaction (PostgreSQL delivers a notification only when its
transaction commits: whoever is woken finds the row written):

* ``JOBS_CHANNEL``: a job can be claimed (queued, queued again, re-queued after its
  worker died or gave it back). Every ladder process listens and nudges its idle worker
  threads (``Stop.nudge``), which claim it at once.
* ``RESULTS_CHANNEL``: a job ended (its result reported, or cancelled). The runner
  listens and wakes the game thread waiting for that job.

The payload is the job's id and nothing else (every listener of the database receives
every notification: no hand, seed, bot or setting ever goes through a channel).

A notification only shortens a wait; it never replaces a look at the database. Every
loop keeps its poll: a notification can be lost (the listening connection dropped, a
process of an older version wrote the row, a notification sent while nobody listened),
and then the work is found at the next poll, as before. Each process has one listening
connection (a ``Listener``, its own thread), not one per game or worker thread; it reads
every notification as it comes (nothing piles up) and, after a drop, connects again with
a growing delay, saying so in one log line, and wakes every waiter once it listens again
(what was sent meanwhile was lost).
"""

from __future__ import annotations

import contextlib
import logging
import os
import selectors
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from sqlalchemy import Connection, Engine, func, select

if TYPE_CHECKING:
    import psycopg
    from psycopg.rows import TupleRow

log = logging.getLogger("cirulla.pool")

#: A job can be claimed (payload: its id): the workers' channel.
JOBS_CHANNEL = "cirulla_pool_jobs"
#: A job ended, finished or cancelled (payload: its id): the runners' channel.
RESULTS_CHANNEL = "cirulla_pool_results"
#: The listening connections' ``application_name`` (``pg_stat_activity``): the channel's,
#: with dashes, so an operator tells them from the pooled connections.
APPLICATION_NAMES = {
    JOBS_CHANNEL: "cirulla-pool-jobs",
    RESULTS_CHANNEL: "cirulla-pool-results",
}

#: The longest wait for a notification before the listener looks at its state again (a
#: ``close`` ends the wait at once, through a pipe of its own).
WAIT_SECONDS = 30.0
#: The delay before connecting again after a drop, doubled at each failure up to
#: ``RETRY_MOST``, and back to the first once a connection lasted ``RETRY_RESET``.
RETRY_FIRST = 0.5
RETRY_MOST = 30.0
RETRY_RESET = 30.0
#: libpq's settings for the listening connection unless the URL gives its own: a
#: connection silently cut (a NAT, a host gone) is found dead in about a minute by TCP
#: keepalives, since a listener only reads; a server out of reach fails in 10 s.
CONNECT_DEFAULTS: dict[str, int] = {
    "connect_timeout": 10,
    "keepalives": 1,
    "keepalives_idle": 30,
    "keepalives_interval": 10,
    "keepalives_count": 3,
}


def notify(conn: Connection, channel: str, job_id: str) -> None:
    """NOTIFY ``channel`` of ``job_id`` in ``conn``'s transaction, so it is delivered on
    its commit (and never if it rolls back). Nothing on another database (SQLite): the
    pool runs on PostgreSQL only, and the polls find the work anyway."""
    if conn.dialect.name == "postgresql":
        conn.execute(select(func.pg_notify(channel, job_id)))


class Listener:
    """One process's LISTEN on one channel, in a thread of its own.

    ``wake`` is called with the payloads of each batch of notifications as they arrive,
    and with None whenever the connection starts listening (the first time and after a
    drop: anything may have happened meanwhile, so every waiter looks again). It runs in
    the listener's thread: it must only set events."""

    def __init__(
        self, engine: Engine, channel: str, wake: Callable[[frozenset[str] | None], None]
    ) -> None:
        self.engine = engine
        self.channel = channel
        self.wake = wake
        #: Set while the connection listens (tests wait for it).
        self.listening = threading.Event()
        self._closed = threading.Event()
        self._closing = threading.Lock()
        # ``close`` writes here: the thread waits on it beside the connection's socket
        self._wake_read, self._wake_write = os.pipe()
        os.set_blocking(self._wake_write, False)
        self._thread = threading.Thread(
            target=self._run, name=f"pool-listen-{channel}", daemon=True
        )

    def start(self) -> Listener:
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop listening and close the connection, at once (a connection attempt under
        way ends first: up to its ``connect_timeout``). A second call does nothing."""
        with self._closing:
            if self._closed.is_set():
                return  # its pipe's descriptors may be another file's by now
            self._closed.set()
        with contextlib.suppress(BlockingIOError):  # full: a byte is already there
            os.write(self._wake_write, b"x")
        if self._thread.is_alive():
            self._thread.join(timeout=60)
        if not self._thread.is_alive():
            os.close(self._wake_read)
            os.close(self._wake_write)

    def _connect(self) -> psycopg.Connection[TupleRow]:
        """A connection of its own (not the pool's: it is held for good), with the
        engine's URL and credentials, in autocommit (a LISTEN takes effect at commit).
        psycopg is the ladder extra's: imported here, a tournament without it still says
        in one line that ``--db`` needs PostgreSQL (``check_pool_db``)."""
        import psycopg
        from psycopg import sql

        _, params = self.engine.dialect.create_connect_args(self.engine.url)
        params.pop("context", None)  # SQLAlchemy's adapters: this connection reads none
        params.setdefault("application_name", APPLICATION_NAMES.get(self.channel, "cirulla"))
        for key, value in CONNECT_DEFAULTS.items():
            params.setdefault(key, value)
        conn = psycopg.connect(autocommit=True, **params)
        try:
            conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self.channel)))
        except BaseException:
            conn.close()
            raise
        return conn

    def _run(self) -> None:
        """Listen until closed; after a failure, one log line and a growing delay (never
        a busy loop: the delay grows while connections keep failing or dropping)."""
        delay = RETRY_FIRST
        said = False  # the failure is logged once, until the listener listens again
        while not self._closed.is_set():
            started = time.monotonic()
            try:
                conn = self._connect()
            except Exception as exc:
                if not said:
                    log.warning("pool_listen_failed %s", self._line(exc))
                    said = True
                self._closed.wait(delay)
                delay = min(delay * 2, RETRY_MOST)
                continue
            said = False
            try:
                self.listening.set()
                self.wake(None)
                self._listen(conn)
            except Exception as exc:
                log.warning("pool_listen_lost %s", self._line(exc))
                said = True
            finally:
                self.listening.clear()
                conn.close()
            if time.monotonic() - started >= RETRY_RESET:
                delay = RETRY_FIRST
            self._closed.wait(delay)
            delay = min(delay * 2, RETRY_MOST)

    def _listen(self, conn: psycopg.Connection[TupleRow]) -> None:
        """Hand each batch of notifications to ``wake`` as it arrives (what came
        together, one call), until closed; a dropped connection raises.

        It waits for the socket (or ``close``'s pipe) itself, then reads what came
        without blocking (``notifies(timeout=0)``): a close ends the wait at once, where
        ``notifies(timeout=...)`` would keep the process up to its timeout."""
        with selectors.DefaultSelector() as selector:  # any fd number, unlike select()
            selector.register(conn.fileno(), selectors.EVENT_READ)
            selector.register(self._wake_read, selectors.EVENT_READ)
            got = list(conn.notifies(timeout=0))  # any that came with LISTEN's answer
            while not self._closed.is_set():
                if got:
                    self.wake(frozenset(n.payload for n in got))
                ready = selector.select(WAIT_SECONDS)
                got = list(conn.notifies(timeout=0)) if ready else []
                if conn.broken or conn.closed:  # never a busy loop on a dead socket
                    raise ConnectionError("the listening connection is lost")

    def _line(self, exc: Exception) -> str:
        first = str(exc).strip().splitlines()
        return (
            f"channel={self.channel} ({first[0] if first else type(exc).__name__}): "
            f"woken by the polls meanwhile; listening again in {RETRY_FIRST:g} s or more"
        )


class Wakeups:
    """The events of the jobs a runner's game threads wait for, set by its listener.

    A game thread ``watch``es its job, then looks at it, then waits on the event for at
    most its poll: a result reported after the look sets the event (the wait ends at
    once), one reported before it was found by the look. ``forget`` when done: at most
    one event per game being waited for."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._events: dict[str, threading.Event] = {}

    def watch(self, job_id: str) -> threading.Event:
        with self._lock:
            return self._events.setdefault(job_id, threading.Event())

    def forget(self, job_id: str) -> None:
        with self._lock:
            self._events.pop(job_id, None)

    def wake(self, job_ids: frozenset[str] | None) -> None:
        """Set the events of ``job_ids`` (other runners' jobs are ignored); every event
        for None."""
        with self._lock:
            events = [e for j, e in self._events.items() if job_ids is None or j in job_ids]
        for event in events:
            event.set()
