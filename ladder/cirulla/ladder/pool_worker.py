"""The worker's side of the tournament pool: claim a tournament job, play it with the
tournament's own ``Referee`` on this worker's match server, report the result.

Every ladder process (``cirulla ladder worker``, and ``cirulla ladder serve`` on
PostgreSQL) plays pool jobs beside its ladder matches: its worker threads take whichever
kind is waiting (``play_loop``), so ``--concurrency`` bounds both together. One
``Referee`` per tournament is kept while its jobs come (its kept-alive bots serve the
next game), under ``DATA/pool/<tournament id>/`` (bot logs, records), and closed once
the tournament has had no job here for ``IDLE_CLOSE`` seconds.

The game is created with the tournament's ``deal_group`` and ``deal_group_size`` by the
referee, as in a local run. A worker hosts only some games of a deal group, so its match
server never sees the group complete and keeps their records withheld from everyone
without its admin token (stricter than a local run, never looser); the worker fetches
the record with that token and stores it with the result for the runner.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from cirulla.clients.matches.bot_pool import BotPool
from cirulla.clients.matches.files import log_tail, safe_name
from cirulla.clients.matches.journal import GameResult, Settings
from cirulla.clients.matches.log_budget import DEFAULT_BOT_LOGS, LogBudget
from cirulla.clients.matches.referee import Referee
from cirulla.clients.matches.sandbox import Confinement
from cirulla.ladder.idle import MOST_SECONDS, Backoff, nudges, wait_idle
from cirulla.ladder.pool_store import ClaimedJob, PoolStore

log = logging.getLogger("cirulla.pool")

#: A tournament's referee (and its kept-alive bots) is closed after this long without jobs.
IDLE_CLOSE = 30.0
#: A kept-alive bot process quarantined by an open deal group (``BotPool``) is stopped
#: after this long idle: the group's other games may be another worker's.
QUARANTINE_IDLE = 60.0
#: Characters of each seat's log sent to the runner.
LOG_TAIL_CHARS = 8000


@dataclass
class PoolRunner:
    """Plays claimed tournament jobs on one match server (shared by worker threads)."""

    store: PoolStore
    server_address: str
    data: Path
    worker_id: str
    admin_token: str | None = None
    stop: threading.Event = field(default_factory=threading.Event)
    lease_seconds: float = 30.0
    #: how the tournament's bots run: sandboxed (the ladder's default) or not (None)
    confinement: Confinement | None = None
    #: the address the referees dial (default ``server_address``; see ``MatchRunner``)
    dial: str | None = None
    #: ``--bot-logs``: what each bot's logs may hold in all, per tournament's folder
    bot_logs: int = DEFAULT_BOT_LOGS
    _referees: dict[str, tuple[Referee, float, int]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def run_one(self) -> str | None:
        """Claim and play one job; its id, or None when none was waiting."""
        job = self.store.claim(self.worker_id, self.lease_seconds)
        if job is None:
            self.close_idle()
            return None
        log.info(
            "pool_job_claimed job=%s tournament=%s game=%d",
            job.id,
            job.tournament_id,
            job.game.index,
        )
        try:
            referee = self._take(job)
        except Exception as exc:  # settings this worker cannot read (older version?)
            self.store.give_back(job.id, self.worker_id, f"worker {self.worker_id}: {exc}")
            log.warning("pool_job_refused job=%s %s", job.id, exc)
            return job.id
        try:
            self._play(job, referee)
        except Exception as exc:
            log.exception("pool_job_failed job=%s", job.id)
            self.store.give_back(job.id, self.worker_id, f"worker {self.worker_id} failed: {exc}")
        finally:
            self._give(job.tournament_id)
            # a process whose deal group has games on other workers never sees it end
            # here: quarantined (BotPool), it would only wait; stop it in time instead
            referee.pool.stop_idle(QUARANTINE_IDLE, quarantined_only=True)
        return job.id

    def _play(self, job: ClaimedJob, referee: Referee) -> None:
        if not self.store.mark_running(job.id, self.worker_id):
            log.warning("pool_job_lost job=%s (taken back before it started)", job.id)
            return
        referee.group_sizes[job.game.seed] = job.group_size
        result = referee.play(job.game)
        if result is None:  # this worker stops: another one plays it
            self.store.give_back(job.id, self.worker_id, f"worker {self.worker_id} stopped")
            return
        record, text = self._record(referee, result)
        logs = [log_tail(referee.out / p, LOG_TAIL_CHARS) if p else "" for p in result.logs]
        if self.store.finish(job.id, self.worker_id, result.to_dict(), record, text, logs):
            log.info(
                "pool_job_finished job=%s game=%d match=%s winner=%s totals=%s",
                job.id,
                job.game.index,
                result.match_id,
                result.winner,
                result.totals,
            )
        else:
            log.warning("pool_job_result_ignored job=%s (no longer this worker's)", job.id)

    @staticmethod
    def _record(referee: Referee, result: GameResult) -> tuple[str | None, str | None]:
        """The record files the referee saves in the background, once they are written."""
        referee.records.submit(lambda: None).result()  # one thread: earlier saves are done
        path = referee.out / "records" / f"{safe_name(result.match_id)}.json"
        try:
            return path.read_text(encoding="utf-8"), path.with_suffix(".txt").read_text(
                encoding="utf-8"
            )
        except OSError:
            return None, None

    def _take(self, job: ClaimedJob) -> Referee:
        with self._lock:
            entry = self._referees.get(job.tournament_id)
            if entry is None:
                settings = Settings.from_dict(job.settings)
                out = self.data / "pool" / job.tournament_id
                # a pool of our own, tied: its processes are started by the long-lived
                # worker threads, so they die with the ladder process even by SIGKILL
                bots = BotPool(
                    settings.bots,
                    out / "logs",
                    True,
                    self.confinement,
                    log_budget=LogBudget(self.bot_logs),
                )
                referee = Referee(
                    settings,
                    self.dial or self.server_address,
                    out,
                    self.admin_token,
                    self.stop,
                    bot_pool=bots,
                    confinement=self.confinement,
                )
                # the logs this tournament's games left here before: a ladder restarted,
                # or this referee's predecessor closed while idle
                referee.count_logs(self._finished(job.tournament_id))
                entry = (referee, time.monotonic(), 0)
            referee, _, users = entry
            self._referees[job.tournament_id] = (referee, time.monotonic(), users + 1)
            return referee

    def _finished(self, tournament_id: str) -> list[GameResult]:
        """The tournament's finished games (those this worker cannot read skipped: a
        newer version's results count nothing rather than stop the job)."""
        results = []
        for text in self.store.finished_results(tournament_id):
            try:
                results.append(GameResult.from_dict(json.loads(text)))
            except (ValueError, TypeError, KeyError) as exc:
                log.warning("pool_result_unreadable tournament=%s %s", tournament_id, exc)
        return results

    def _give(self, tournament_id: str) -> None:
        with self._lock:
            referee, _, users = self._referees[tournament_id]
            self._referees[tournament_id] = (referee, time.monotonic(), users - 1)

    def close_idle(self, idle: float = IDLE_CLOSE) -> None:
        """Close the referees (and their bots) of tournaments without jobs here lately."""
        now = time.monotonic()
        with self._lock:
            done = [
                tid
                for tid, (_, used, users) in self._referees.items()
                if users == 0 and now - used >= idle
            ]
            closing = [self._referees.pop(tid)[0] for tid in done]
        for referee in closing:
            referee.close()
            referee.pool.close()  # its bot_pool: the referee leaves it to its owner

    def close(self) -> None:
        self.close_idle(idle=-1.0)


def play_loop(
    stop: threading.Event,
    *run_ones: Callable[[], str | None],
    tick: Callable[[], object] | None = None,
    idle_poll: float = MOST_SECONDS,
) -> None:
    """One worker thread: play whatever kind of work is waiting (ladder matches, pool
    jobs), taking turns so neither starves the other; when none is, wait a little longer
    each time, up to ``idle_poll`` seconds (``cirulla.ladder.idle``). ``tick`` runs after
    each round (the ladder stops its idle kept-alive bots there)."""
    backoff = Backoff(most=idle_poll)
    turn = 0
    while not stop.is_set():
        seen = nudges(stop)
        played = False
        for k in range(len(run_ones)):
            run_one = run_ones[(turn + k) % len(run_ones)]
            try:
                played = run_one() is not None
            except Exception:
                log.exception("worker_error")
            if played:
                break
        turn += 1
        if tick is not None:
            tick()
        if played:
            backoff.reset()
        else:
            wait_idle(stop, backoff, seen)


def pool_heartbeat_loop(
    store: PoolStore, worker_id: str, stop: threading.Event, lease_seconds: float
) -> None:
    """Renew this worker's job leases and re-queue dead workers' jobs, every third of a
    lease, until ``stop``."""
    while not stop.wait(lease_seconds / 3):
        try:
            store.heartbeat(worker_id, lease_seconds)
            store.reap()
        except Exception:
            log.exception("pool_heartbeat_failed worker=%s", worker_id)
