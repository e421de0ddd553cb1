"""Tournament games as jobs in the clients' database: the pool's tables and every read and
write of them.

``cirulla tournament --db`` (the runner, ``cirulla.clients.tournament.pool``) submits one job
per scheduled game; ``cirulla ladder worker`` processes (the ladder's ``pool_worker``)
claim them, play them with the tournament's referee and report the ``GameResult``. The
rules are the ladder's (its store and leases):

* **Claiming** is ``SELECT ... FOR UPDATE SKIP LOCKED`` followed by a guarded
  ``UPDATE ... WHERE status = 'scheduled'``: two workers never get the same job.
* **Leases**: a worker renews the leases of its jobs with every heartbeat. A job whose
  lease expired (the worker died, hung or lost the network) goes back to ``scheduled``,
  whether it was claimed or already running: a tournament game is only a function of its
  seed and its bots, so playing it again from the start on another worker gives the game
  the dead worker would have played. After ``MAX_ATTEMPTS`` claims it is cancelled.
* **Exactly once**: ``finish`` moves a job from ``claimed``/``running`` to ``finished``
  only for the worker that holds it (rowcount 1); a late report of a re-queued job
  changes nothing. The runner journals a game once, by its schedule index.
* **Wake-ups**: each write that makes a job claimable NOTIFYs ``JOBS_CHANNEL``, each that
  ends one ``RESULTS_CHANNEL``, with the job's id only, in the write's own transaction
  (``pool_notify``): the idle workers and the waiting runner look at once instead of at
  their next poll, which stays as the fallback.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from sqlalchemy import (
    Column,
    Connection,
    Engine,
    Float,
    ForeignKey,
    Index,
    Integer,
    Row,
    String,
    Table,
    Text,
    UniqueConstraint,
    insert,
    select,
    update,
)

from cirulla.clients.matches.schedule import ScheduledGame
from cirulla.ladder.database import metadata
from cirulla.ladder.pool_notify import JOBS_CHANNEL, RESULTS_CHANNEL, notify

#: Life cycle of a tournament game on the worker pool (this module).
JOB_STATES = ("scheduled", "claimed", "running", "finished", "cancelled")

# A tournament whose games the workers play (``cirulla tournament --db``); its id is
# kept in the tournament's output folder (pool.json), so --resume finds its jobs again.
pool_tournaments = Table(
    "pool_tournaments",
    metadata,
    Column("id", String(64), primary_key=True),
    # the output folder's path on the runner's machine, for people reading the table
    Column("label", Text, nullable=False, server_default=""),
    # JSON: the tournament's Settings (bots, rules, time control, ...)
    Column("settings", Text, nullable=False),
    Column("created_at", Float, nullable=False),
    # last time the runner polled its jobs
    Column("runner_seen_at", Float, nullable=False),
)

pool_jobs = Table(
    "pool_jobs",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("tournament_id", String(64), ForeignKey("pool_tournaments.id"), nullable=False),
    # the game's index in the tournament schedule (its key in games.jsonl)
    Column("game_index", Integer, nullable=False),
    # JSON: the ScheduledGame (seats, seed, deal set, group)
    Column("game", Text, nullable=False),
    # games of the schedule dealt from this seed: the deal_group_size of the match
    Column("group_size", Integer, nullable=False, server_default="0"),
    Column("status", String(16), nullable=False, server_default="scheduled"),
    Column("worker_id", String(64), nullable=True),
    Column("lease_expires_at", Float, nullable=True),
    Column("created_at", Float, nullable=False),
    Column("claimed_at", Float, nullable=True),
    Column("finished_at", Float, nullable=True),
    # times it was claimed (a job whose worker died is claimed again)
    Column("attempts", Integer, nullable=False, server_default="0"),
    Column("cancel_reason", Text, nullable=False, server_default=""),
    # JSON list of notes in words (re-queued because ..., ...)
    Column("notes", Text, nullable=False, server_default="[]"),
    # JSON: the GameResult, as the referee on the worker returned it
    Column("result", Text, nullable=True),
    # the game's record file (JSON) and its text form, as a local run saves them
    Column("record", Text, nullable=True),
    Column("record_text", Text, nullable=True),
    # JSON list: per seat, the tail of the bot's log on the worker
    Column("logs", Text, nullable=True),
    UniqueConstraint("tournament_id", "game_index", name="uq_pool_jobs_game"),
)
Index("ix_pool_jobs_status", pool_jobs.c.status, pool_jobs.c.created_at)

#: Claims of one job after which it is cancelled instead of re-queued (its worker kept
#: dying or failing on it: the runner stops with the reason rather than loop forever).
MAX_ATTEMPTS = 5
ACTIVE = ("claimed", "running")


#: A row of ``pool_jobs``, read by column name.
JobRow = Row[*tuple[object, ...]]


def game_to_json(game: ScheduledGame) -> str:
    return json.dumps(asdict(game), separators=(",", ":"))


def game_from_json(text: str) -> ScheduledGame:
    data = json.loads(text)
    return ScheduledGame(
        index=int(data["index"]),
        group=tuple(data["group"]),
        deal_set=int(data["deal_set"]),
        seed=int(data["seed"]),
        seats=tuple(data["seats"]),
    )


@dataclass(frozen=True, slots=True)
class ClaimedJob:
    """What a worker needs to play a job."""

    id: str
    tournament_id: str
    settings: dict[str, Any]
    game: ScheduledGame
    group_size: int


@dataclass(frozen=True, slots=True)
class JobState:
    """A job as the runner sees it."""

    id: str
    status: str
    result: dict[str, Any] | None
    record: str | None
    record_text: str | None
    logs: list[str]
    cancel_reason: str
    attempts: int


class PoolStore:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    @staticmethod
    def now() -> float:
        return time.time()

    # -- the runner's side ------------------------------------------------------------

    def open_tournament(
        self, tournament_id: str | None, settings: Mapping[str, object], label: str
    ) -> str:
        """The pool tournament of an output folder: ``tournament_id`` when the database
        has it with the same settings (a resume), a new one otherwise (the jobs the old
        one still had waiting are then cancelled: they were played with other settings)."""
        now = self.now()
        encoded = json.dumps(settings, sort_keys=True)
        with self.engine.begin() as conn:
            if tournament_id is not None:
                row = conn.execute(
                    select(pool_tournaments.c.settings).where(
                        pool_tournaments.c.id == tournament_id
                    )
                ).first()
                if row is not None and json.loads(row.settings) == json.loads(encoded):
                    conn.execute(
                        update(pool_tournaments)
                        .where(pool_tournaments.c.id == tournament_id)
                        .values(runner_seen_at=now)
                    )
                    return tournament_id
                reason = "the tournament was resumed with other settings"
                self._cancel_scheduled(conn, tournament_id, reason)
            new_id = "pt-" + secrets.token_hex(8)
            conn.execute(
                insert(pool_tournaments).values(
                    id=new_id, label=label, settings=encoded, created_at=now, runner_seen_at=now
                )
            )
            return new_id

    def submit(self, tournament_id: str, game: ScheduledGame, group_size: int) -> str:
        """Queue ``game`` unless it already has a job; a cancelled job is queued again.
        Returns the job's status after the call (``finished`` means: reuse its result)."""
        now = self.now()
        with self.engine.begin() as conn:
            row = self._job_row(conn, tournament_id, game.index)
            if row is None:
                job_id = "pj-" + secrets.token_hex(8)
                conn.execute(
                    insert(pool_jobs).values(
                        id=job_id,
                        tournament_id=tournament_id,
                        game_index=game.index,
                        game=game_to_json(game),
                        group_size=group_size,
                        status="scheduled",
                        created_at=now,
                    )
                )
                notify(conn, JOBS_CHANNEL, job_id)
                return "scheduled"
            if row.status == "cancelled":
                conn.execute(
                    update(pool_jobs)
                    .where(pool_jobs.c.id == row.id, pool_jobs.c.status == "cancelled")
                    .values(
                        status="scheduled",
                        cancel_reason="",
                        attempts=0,
                        worker_id=None,
                        lease_expires_at=None,
                        created_at=now,
                        notes=_noted(row.notes, f"queued again: {row.cancel_reason}"),
                    )
                )
                notify(conn, JOBS_CHANNEL, row.id)
                return "scheduled"
            return str(row.status)

    def job(self, tournament_id: str, index: int) -> JobState | None:
        with self.engine.connect() as conn:
            row = self._job_row(conn, tournament_id, index)
        if row is None:
            return None
        return JobState(
            id=row.id,
            status=row.status,
            result=json.loads(row.result) if row.result else None,
            record=row.record,
            record_text=row.record_text,
            logs=json.loads(row.logs) if row.logs else [],
            cancel_reason=row.cancel_reason,
            attempts=row.attempts,
        )

    def touch(self, tournament_id: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(
                update(pool_tournaments)
                .where(pool_tournaments.c.id == tournament_id)
                .values(runner_seen_at=self.now())
            )

    def cancel_waiting(self, tournament_id: str, reason: str) -> int:
        """Cancel the tournament's jobs no worker has claimed yet (the runner stopped or
        no longer needs them); jobs being played finish and wait for a resume."""
        with self.engine.begin() as conn:
            return self._cancel_scheduled(conn, tournament_id, reason)

    def _cancel_scheduled(self, conn: Connection, tournament_id: str, reason: str) -> int:
        """Cancel the tournament's scheduled jobs, each NOTIFYing whoever waits for it."""
        cancelled = conn.execute(
            update(pool_jobs)
            .where(pool_jobs.c.tournament_id == tournament_id, pool_jobs.c.status == "scheduled")
            .values(status="cancelled", cancel_reason=reason, finished_at=self.now())
            .returning(pool_jobs.c.id)
        ).all()
        for row in cancelled:
            notify(conn, RESULTS_CHANNEL, row.id)
        return len(cancelled)

    @staticmethod
    def _job_row(conn: Connection, tournament_id: str, index: int) -> JobRow | None:
        return conn.execute(
            select(pool_jobs).where(
                pool_jobs.c.tournament_id == tournament_id, pool_jobs.c.game_index == index
            )
        ).first()

    # -- the workers' side ------------------------------------------------------------

    def claim(self, worker_id: str, lease_seconds: float) -> ClaimedJob | None:
        """Take the oldest scheduled job for ``worker_id``; None when there is none."""
        now = self.now()
        with self.engine.begin() as conn:
            row = conn.execute(
                select(pool_jobs.c.id)
                .where(pool_jobs.c.status == "scheduled")
                .order_by(pool_jobs.c.created_at, pool_jobs.c.game_index)
                .limit(1)
                .with_for_update(skip_locked=True)
            ).first()
            if row is None:
                return None
            done = conn.execute(
                update(pool_jobs)
                .where(pool_jobs.c.id == row.id, pool_jobs.c.status == "scheduled")
                .values(
                    status="claimed",
                    worker_id=worker_id,
                    claimed_at=now,
                    lease_expires_at=now + lease_seconds,
                    attempts=pool_jobs.c.attempts + 1,
                )
            ).rowcount
            if done != 1:
                return None
            job = conn.execute(
                select(pool_jobs, pool_tournaments.c.settings)
                .join(pool_tournaments, pool_tournaments.c.id == pool_jobs.c.tournament_id)
                .where(pool_jobs.c.id == row.id)
            ).one()
        return ClaimedJob(
            id=job.id,
            tournament_id=job.tournament_id,
            settings=json.loads(job.settings),
            game=game_from_json(job.game),
            group_size=job.group_size,
        )

    def finished_results(self, tournament_id: str) -> list[str]:
        """The results (JSON, as ``finish`` stored them) of a tournament's finished jobs,
        by schedule index: what a worker making the tournament's referee again needs to
        count the logs its games left."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(pool_jobs.c.result)
                .where(
                    pool_jobs.c.tournament_id == tournament_id,
                    pool_jobs.c.status == "finished",
                    pool_jobs.c.result.is_not(None),
                )
                .order_by(pool_jobs.c.game_index)
            ).all()
        return [str(row.result) for row in rows]

    def mark_running(self, job_id: str, worker_id: str) -> bool:
        return self._update_held(job_id, worker_id, ("claimed",), None, status="running")

    def heartbeat(self, worker_id: str, lease_seconds: float) -> None:
        """Renew the leases of every job ``worker_id`` holds."""
        with self.engine.begin() as conn:
            conn.execute(
                update(pool_jobs)
                .where(pool_jobs.c.worker_id == worker_id, pool_jobs.c.status.in_(ACTIVE))
                .values(lease_expires_at=self.now() + lease_seconds)
            )

    def finish(
        self,
        job_id: str,
        worker_id: str,
        result: Mapping[str, object],
        record: str | None,
        record_text: str | None,
        logs: list[str],
    ) -> bool:
        """Store the result of a job this worker holds; False (nothing changed) when the
        job was taken from it meanwhile."""
        return self._update_held(
            job_id,
            worker_id,
            ACTIVE,
            RESULTS_CHANNEL,
            status="finished",
            finished_at=self.now(),
            lease_expires_at=None,
            result=json.dumps(result, separators=(",", ":")),
            record=record,
            record_text=record_text,
            logs=json.dumps(logs),
        )

    def _update_held(
        self,
        job_id: str,
        worker_id: str,
        statuses: tuple[str, ...],
        channel: str | None,
        **values: object,
    ) -> bool:
        """One guarded UPDATE of a job ``worker_id`` holds in one of ``statuses``,
        NOTIFYing ``channel`` (if any) when it changed the job."""
        with self.engine.begin() as conn:
            done = conn.execute(
                update(pool_jobs)
                .where(
                    pool_jobs.c.id == job_id,
                    pool_jobs.c.worker_id == worker_id,
                    pool_jobs.c.status.in_(statuses),
                )
                .values(**values)
            ).rowcount
            if done == 1 and channel is not None:
                notify(conn, channel, job_id)
        return bool(done == 1)

    def give_back(self, job_id: str, worker_id: str, reason: str) -> bool:
        """Re-queue a job this worker holds (it stops, or failed to play it); cancelled
        with the reason once it was claimed ``MAX_ATTEMPTS`` times."""
        with self.engine.begin() as conn:
            row = conn.execute(select(pool_jobs).where(pool_jobs.c.id == job_id)).first()
            if row is None or row.worker_id != worker_id or row.status not in ACTIVE:
                return False
            return self._release(conn, row, reason, guard_lease=None)

    def reap(self) -> int:
        """Re-queue (or cancel, after MAX_ATTEMPTS) the jobs whose lease expired."""
        now = self.now()
        changed = 0
        with self.engine.connect() as conn:
            expired = conn.execute(
                select(pool_jobs).where(
                    pool_jobs.c.status.in_(ACTIVE), pool_jobs.c.lease_expires_at < now
                )
            ).all()
        for row in expired:
            reason = (
                f"worker {row.worker_id} stopped renewing its lease (dead or cut off) "
                f"while the job was {row.status}"
            )
            with self.engine.begin() as conn:
                changed += self._release(conn, row, reason, guard_lease=now)
        return changed

    def _release(
        self, conn: Connection, row: JobRow, reason: str, guard_lease: float | None
    ) -> bool:
        guard = [
            pool_jobs.c.id == row.id,
            pool_jobs.c.status == row.status,
            pool_jobs.c.worker_id == row.worker_id,
        ]
        if guard_lease is not None:
            guard.append(pool_jobs.c.lease_expires_at < guard_lease)
        values: dict[str, object]
        channel = JOBS_CHANNEL  # claimable again
        if row.attempts >= MAX_ATTEMPTS:
            channel = RESULTS_CHANNEL  # ended: the runner stops with the reason
            values = {
                "status": "cancelled",
                "cancel_reason": f"{reason}; given up after {row.attempts} attempts",
                "finished_at": self.now(),
            }
        else:
            values = {"status": "scheduled", "notes": _noted(row.notes, f"re-queued: {reason}")}
        values.update(worker_id=None, lease_expires_at=None)
        if conn.execute(update(pool_jobs).where(*guard).values(**values)).rowcount != 1:
            return False
        notify(conn, channel, row.id)
        return True


def _noted(notes: str | None, note: str) -> str:
    return json.dumps([*json.loads(notes or "[]"), note])
