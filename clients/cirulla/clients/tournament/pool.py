"""``cirulla tournament --db postgresql://...``: the tournament's games on the worker pool.

``PoolReferee`` has the ``play``/``close`` of the local ``Referee`` (contract H), so
``Tournament.run`` is unchanged around it: the same schedule, journal, standings, SPRT
and ``--resume``. Instead of hosting a game, ``play`` queues it as a job in the clients'
database (``pool_store.py``) and waits for the ``GameResult`` a ``cirulla ladder worker``
reports; the worker plays it with the same ``Referee`` a local run uses, so a game's
result depends only on its seed and its bots, not on where it was played.

What a local run leaves in the output folder, a pool run leaves too: the journal, the
results, ``records/<match>.json`` and ``.txt`` (fetched by the worker from its own match
server) and, per seat, the tail of the bot's log as ``logs/<match>-<seat>.log``.

The pool tournament's id is kept in ``OUT/pool.json``; ``--resume`` finds its jobs again:
finished ones are journaled without being played again, queued or running ones are
waited for, cancelled ones are queued again. At most ``--concurrency`` jobs are queued or
being played at any time, so once an SPRT decides no new deck set starts and ``close``
cancels what no worker has claimed yet.

A game thread does not wait its whole poll for a result: the runner LISTENs (one
connection, ``pool_notify.Listener``) on the channel a worker NOTIFYs when it reports a
job (or the job is cancelled), and the notification ends that game's wait at once. The
poll stays as the fallback (a notification lost, the connection down, a worker of an
older version): a notification only shortens a wait, the job's row is always read.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import threading
from pathlib import Path
from typing import Any

from sqlalchemy.exc import SQLAlchemyError

from cirulla.clients.matches.files import safe_name
from cirulla.clients.matches.journal import GameResult, Settings, write_json_atomic
from cirulla.clients.matches.schedule import ScheduledGame
from cirulla.ladder.database import database_url, display_url, open_database
from cirulla.ladder.pool_notify import RESULTS_CHANNEL, Listener, Wakeups
from cirulla.ladder.pool_store import PoolStore

log = logging.getLogger("cirulla.pool")

POOL_FILE = "pool.json"
#: How often a waiting game looks at its job when no notification ends its wait sooner.
POLL_SECONDS = 0.2
#: How often the runner re-queues jobs of dead workers and says it is alive.
REAP_SECONDS = 2.0


class PoolError(RuntimeError):
    """A job the pool gave up on (its workers kept dying or failing on it)."""


def check_pool_db(db: str) -> str:
    """``--db`` of a tournament as an SQLAlchemy URL; a ValueError (one line) otherwise.

    Only PostgreSQL: the point of the pool is workers on other machines, which cannot
    share an SQLite file; on one machine, ``--concurrency`` already plays games at once.
    """
    url = database_url(db)
    if not url.startswith("postgresql"):
        raise ValueError(
            f"--db {db!r}: the worker pool needs PostgreSQL (postgresql://USER@HOST:PORT/NAME); "
            "on one machine, leave out --db and use --concurrency"
        )
    return url


def open_pool(db: str) -> PoolStore:
    """The pool's store on ``db``, schema migrated; a ValueError in one line when the
    database cannot be reached."""
    url = check_pool_db(db)
    try:
        return PoolStore(open_database(db))
    except SQLAlchemyError as exc:
        cause = str(getattr(exc, "orig", None) or exc).strip().splitlines()
        raise ValueError(
            f"--db {display_url(url)}: cannot use the database ({cause[0] if cause else exc})"
        ) from None


class PoolReferee:
    """Plays each game by queuing it for the workers and waiting for its result."""

    def __init__(
        self,
        settings: Settings,
        db: str,
        out: Path,
        stop: threading.Event | None = None,
        group_sizes: dict[int, int] | None = None,
        poll_seconds: float = POLL_SECONDS,
    ) -> None:
        self.settings = settings
        self.poll_seconds = poll_seconds
        self.out = out
        self.stop = stop or threading.Event()
        self.group_sizes = group_sizes or {}
        #: What ``Tournament.run`` prints after the games (the worker saves the records).
        self.record_errors: list[str] = []
        self.store = open_pool(db)
        (out / "logs").mkdir(parents=True, exist_ok=True)
        (out / "records").mkdir(parents=True, exist_ok=True)
        self.tournament_id = self.store.open_tournament(
            _saved_id(out), settings.to_dict(), str(out.resolve())
        )
        write_json_atomic(out / POOL_FILE, {"tournament_id": self.tournament_id})
        self._closed = threading.Event()
        self._reaper = threading.Thread(target=self._reap_loop, name="pool-reaper", daemon=True)
        self._reaper.start()
        self.wakeups = Wakeups()
        self.listener = Listener(self.store.engine, RESULTS_CHANNEL, self.wakeups.wake).start()

    def play(self, game: ScheduledGame) -> GameResult | None:
        """Queue ``game`` (or find its job) and wait for its result; None if the
        tournament is stopped meanwhile (the job stays queued for a resume).

        Each round reads the job's row, then waits up to ``poll_seconds`` on the job's
        event, which the listener sets when the job is reported (the event is watched
        before the row is read, so a report is either in the row or ends the wait)."""
        self.store.submit(self.tournament_id, game, self.group_sizes.get(game.seed, 0))
        watched: str | None = None
        woken = threading.Event()
        try:
            while not self.stop.is_set():
                job = self.store.job(self.tournament_id, game.index)
                if job is None:  # the row was deleted by hand: queue it again
                    self.store.submit(self.tournament_id, game, self.group_sizes.get(game.seed, 0))
                elif job.status == "finished" and job.result is not None:
                    result = GameResult.from_dict(job.result)
                    return self._save_files(result, job.record, job.record_text, job.logs)
                elif job.status == "cancelled":
                    raise PoolError(
                        f"game {game.index} ({' vs '.join(game.seats)}) was cancelled in "
                        f"the pool: {job.cancel_reason}"
                    )
                elif job.id != watched:  # watch it, then read it again before waiting
                    if watched is not None:
                        self.wakeups.forget(watched)
                    watched = job.id
                    woken = self.wakeups.watch(job.id)
                    continue
                woken.wait(self.poll_seconds)
                woken.clear()
        finally:
            if watched is not None:
                self.wakeups.forget(watched)
        return None

    def close(self) -> None:
        """Cancel the jobs no worker has claimed (a resume queues them again)."""
        self._closed.set()
        self._reaper.join()
        self.listener.close()
        self.store.cancel_waiting(
            self.tournament_id, "the tournament runner stopped before a worker claimed it"
        )
        self.store.engine.dispose()

    def _reap_loop(self) -> None:
        while not self._closed.wait(REAP_SECONDS):
            try:
                self.store.reap()
                self.store.touch(self.tournament_id)
            except Exception as exc:  # the database is back at the next round
                log.warning("pool_reap_failed %s", exc)

    def _save_files(
        self, result: GameResult, record: str | None, text: str | None, logs: list[str]
    ) -> GameResult:
        """The game's record and its bots' log tails into the output folder."""
        safe = safe_name(result.match_id)
        if record:
            (self.out / "records" / f"{safe}.json").write_text(record, encoding="utf-8")
            (self.out / "records" / f"{safe}.txt").write_text(text or "", encoding="utf-8")
        paths: list[str] = []
        for seat, tail in enumerate(logs):
            path = Path("logs") / f"{safe}-{seat}.log"
            (self.out / path).write_text(tail, encoding="utf-8")
            paths.append(str(path))
        return dataclasses.replace(result, logs=tuple(paths))


def _saved_id(out: Path) -> str | None:
    try:
        data: dict[str, Any] = json.loads((out / POOL_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    value = data.get("tournament_id")
    return value if isinstance(value, str) else None
