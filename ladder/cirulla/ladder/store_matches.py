"""Matches and their seats: the only writer of ``ladder_matches`` and ``ladder_seats``.

The schedule, claims, leases (extended by workers' heartbeats, ended by the reaper in
``leases.py``) and connect-in seats' deliveries (``enroll.py``). **Claiming** a
scheduled match is ``SELECT ... FOR UPDATE SKIP LOCKED`` (PostgreSQL; SQLite ignores the
clause and serialises writers instead) followed by a guarded ``UPDATE ... WHERE status =
'scheduled'``: two workers never get the same match. Its public reads are
``store_views``. Results are recorded by ``store_results``, which calls
``record_result`` and ``record_seat`` here inside its one transaction.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from sqlalchemy import Connection, Row, Select, and_, func, insert, select, update

from cirulla.ladder.schema import (
    bot_versions,
    bots,
    ladder_matches,
    ladder_seats,
    workers,
)
from cirulla.ladder.store_rows import (
    CLAIM_SCAN,
    IN_FLIGHT,
    REQUEST_PRIORITY,
    ClaimedMatch,
    ClaimedSeat,
    DeliveredSeat,
    MatchConfig,
    MatchPlan,
    UnfinishedMatch,
    new_id,
)
from cirulla.ladder.store_views import MatchViews

if TYPE_CHECKING:
    from cirulla.ladder.store import LadderStore

ACTIVE = ("claimed", "running")


#: A scheduled match as ``claim`` scans them: its id and its pair's.
Scanned = Row[str, str | None]
#: A match whose lease expired: id, status, worker_id, notes.
Expired = Row[str, str, str | None, str]


class MatchStore:
    """Scheduling, claiming, leases and reads of ladder matches."""

    def __init__(self, ladder: LadderStore) -> None:
        self.ladder = ladder

    # -- the schedule ------------------------------------------------------------------

    def in_flight(self) -> int:
        """Matches scheduled, claimed or running."""
        with self.ladder.engine.connect() as conn:
            return int(
                conn.execute(
                    select(func.count())
                    .select_from(ladder_matches)
                    .where(ladder_matches.c.status.in_(IN_FLIGHT))
                ).scalar_one()
            )

    def waiting(self) -> int:
        """Matches scheduled and not yet claimed."""
        with self.ladder.engine.connect() as conn:
            return int(
                conn.execute(
                    select(func.count())
                    .select_from(ladder_matches)
                    .where(ladder_matches.c.status == "scheduled")
                ).scalar_one()
            )

    def schedule(self, plans: Sequence[MatchPlan]) -> list[str]:
        """Insert the planned matches (all or none); returns their ids in order."""
        now = self.ladder.now()
        ids: list[str] = []
        with self.ladder.engine.begin() as conn:
            for plan in plans:
                match_id = new_id("lm")
                ids.append(match_id)
                conn.execute(
                    insert(ladder_matches).values(
                        id=match_id,
                        queue=plan.queue,
                        pair_id=plan.pair_id,
                        pair_index=plan.pair_index,
                        seed=plan.seed,
                        settings=plan.config.to_json(),
                        status="scheduled",
                        created_at=now,
                        rated=False,
                        notes="[]",
                        attempts=0,
                        request_id=plan.request_id,
                        priority=REQUEST_PRIORITY if plan.request_id else 0,
                        unrated=plan.unrated,
                    )
                )
                conn.execute(
                    insert(ladder_seats),
                    [
                        {
                            "match_id": match_id,
                            "seat": s.seat,
                            "side": s.side,
                            "version_id": s.version_id,
                            "outcome": "",
                            "fault": "",
                        }
                        for s in plan.seats
                    ],
                )
        return ids

    # -- claims and leases ------------------------------------------------------------

    def claim(
        self, worker_id: str, server_address: str, lease_seconds: float = 60.0
    ) -> ClaimedMatch | None:
        """Take the oldest scheduled match for ``worker_id``; None when there is none.

        Duplicate pairs are claimed game by game in order, so both twins start close
        together. Connect-in seats are left for their enrollment to deliver.
        """
        now = self.ladder.now()
        with self.ladder.engine.begin() as conn:
            rows = conn.execute(
                select(ladder_matches.c.id, ladder_matches.c.pair_id)
                .where(ladder_matches.c.status == "scheduled")
                # requested games first (aiarena's and lichess's challenges), then by age
                .order_by(
                    ladder_matches.c.priority.desc(),
                    ladder_matches.c.created_at,
                    ladder_matches.c.pair_index,
                )
                .limit(CLAIM_SCAN)
                .with_for_update(skip_locked=True)
            ).all()
            row = self._claimable(conn, worker_id, rows, now - lease_seconds)
            if row is None:
                return None
            done = conn.execute(
                update(ladder_matches)
                .where(ladder_matches.c.id == row, ladder_matches.c.status == "scheduled")
                .values(
                    status="claimed",
                    worker_id=worker_id,
                    claimed_at=now,
                    lease_expires_at=now + lease_seconds,
                    server_address=server_address,
                    attempts=ladder_matches.c.attempts + 1,
                )
            ).rowcount
            if done != 1:
                return None
            return self._claimed(conn, row)

    def _claimable(
        self, conn: Connection, worker_id: str, rows: Sequence[Scanned], dead_before: float
    ) -> str | None:
        """The first of ``rows`` whose bots are all below their limit of matches being
        played, and whose duplicate twin (if claimed) is on this same worker: twins
        share a match server, so its deal_group keeps the first game's record closed
        until the second is over.

        A twin that was cancelled, or whose worker has sent no heartbeat since
        ``dead_before`` (dead, its match server gone with it), binds nothing: otherwise
        the other twin would wait for that worker forever and, held in the backlog,
        stop the scheduler once enough such twins pile up."""
        if not rows:
            return None
        playing: dict[int, int] = dict(
            conn.execute(
                select(bot_versions.c.bot_id, func.count())
                .select_from(ladder_seats)
                .join(bot_versions, bot_versions.c.id == ladder_seats.c.version_id)
                .join(ladder_matches, ladder_matches.c.id == ladder_seats.c.match_id)
                .where(ladder_matches.c.status.in_(ACTIVE))
                .group_by(bot_versions.c.bot_id)
            ).all()
        )
        for row in rows:
            if row.pair_id:
                twin_workers: set[str] = set(
                    conn.execute(
                        select(ladder_matches.c.worker_id)
                        .join(workers, workers.c.id == ladder_matches.c.worker_id)
                        .where(
                            ladder_matches.c.pair_id == row.pair_id,
                            ladder_matches.c.id != row.id,
                            ladder_matches.c.status != "cancelled",
                            workers.c.heartbeat_at >= dead_before,
                        )
                    ).scalars()
                )
                if twin_workers - {worker_id}:
                    continue
            seat_bots = conn.execute(
                select(bots.c.id, bots.c.max_concurrency)
                .select_from(ladder_seats)
                .join(bot_versions, bot_versions.c.id == ladder_seats.c.version_id)
                .join(bots, bots.c.id == bot_versions.c.bot_id)
                .where(ladder_seats.c.match_id == row.id)
            ).all()
            if all(playing.get(b.id, 0) < b.max_concurrency for b in seat_bots):
                return str(row.id)
        return None

    @staticmethod
    def _claimed(conn: Connection, match_id: str) -> ClaimedMatch:
        match = conn.execute(select(ladder_matches).where(ladder_matches.c.id == match_id)).one()
        seats = conn.execute(
            select(
                ladder_seats.c.seat,
                ladder_seats.c.side,
                ladder_seats.c.version_id,
                bots.c.name,
                bot_versions.c.version,
                bot_versions.c.spec,
                bot_versions.c.limits,
            )
            .join(bot_versions, bot_versions.c.id == ladder_seats.c.version_id)
            .join(bots, bots.c.id == bot_versions.c.bot_id)
            .where(ladder_seats.c.match_id == match_id)
            .order_by(ladder_seats.c.seat)
        ).all()
        return ClaimedMatch(
            id=match.id,
            queue=match.queue,
            seed=match.seed,
            pair_id=match.pair_id,
            config=MatchConfig.from_json(match.settings),
            seats=tuple(
                ClaimedSeat(s.seat, s.side, s.version_id, s.name, s.version, s.spec, s.limits)
                for s in seats
            ),
        )

    def mark_running(
        self, match_id: str, worker_id: str, server_match_id: str, tokens: dict[int, str]
    ) -> bool:
        """The worker created the match on its server: keep its id and seat tokens."""
        now = self.ladder.now()
        with self.ladder.engine.begin() as conn:
            done = conn.execute(
                update(ladder_matches)
                .where(
                    ladder_matches.c.id == match_id,
                    ladder_matches.c.status == "claimed",
                    ladder_matches.c.worker_id == worker_id,
                )
                .values(status="running", started_at=now, server_match_id=server_match_id)
            ).rowcount
            if done != 1:
                return False
            for seat, token in tokens.items():
                conn.execute(
                    update(ladder_seats)
                    .where(ladder_seats.c.match_id == match_id, ladder_seats.c.seat == seat)
                    .values(token=token)
                )
            return True

    def requeue(self, match_id: str, note: str) -> bool:
        """A claimed match goes back to ``scheduled`` (its worker could not start it)."""
        with self.ladder.engine.begin() as conn:
            notes = [*self._notes(conn, match_id), note]
            return (
                conn.execute(
                    update(ladder_matches)
                    .where(ladder_matches.c.id == match_id, ladder_matches.c.status == "claimed")
                    .values(
                        status="scheduled",
                        worker_id=None,
                        lease_expires_at=None,
                        server_address="",
                        notes=json.dumps(notes),
                    )
                ).rowcount
                == 1
            )

    def cancel(self, match_id: str, reason: str) -> bool:
        """End a match that is not over without a result; False if it already ended."""
        now = self.ladder.now()
        with self.ladder.engine.begin() as conn:
            done = (
                conn.execute(
                    update(ladder_matches)
                    .where(ladder_matches.c.id == match_id, ladder_matches.c.status.in_(IN_FLIGHT))
                    .values(status="cancelled", cancel_reason=reason, finished_at=now)
                ).rowcount
                == 1
            )
            pair = MatchViews.pair_of(conn, match_id)
            if done and pair:
                # its twin's result may be rated now
                self.ladder.results.settle_pair(conn, pair, now)
            return done

    def unfinished_of(self, worker_ids: Sequence[str]) -> list[UnfinishedMatch]:
        """Claimed or running matches of these workers (for recovery after a crash)."""
        with self.ladder.engine.connect() as conn:
            rows = conn.execute(
                select(ladder_matches).where(
                    ladder_matches.c.worker_id.in_(list(worker_ids)),
                    ladder_matches.c.status.in_(ACTIVE),
                )
            ).mappings()
            return [
                {
                    "id": r["id"],
                    "status": r["status"],
                    "queue": r["queue"],
                    "worker_id": r["worker_id"],
                    "server_match_id": r["server_match_id"],
                }
                for r in rows
            ]

    def seat_tokens(self, match_id: str) -> dict[int, str]:
        """SECRET: the seat tokens of a running match (for the worker hosting it)."""
        with self.ladder.engine.connect() as conn:
            rows = conn.execute(
                select(ladder_seats.c.seat, ladder_seats.c.token).where(
                    ladder_seats.c.match_id == match_id
                )
            ).all()
            return {r.seat: r.token for r in rows if r.token}

    @staticmethod
    def extend_leases(conn: Connection, worker_id: str, until: float) -> None:
        """The leases of the matches ``worker_id`` holds now end at ``until`` (its
        heartbeat, in the workers' part's transaction)."""
        conn.execute(
            update(ladder_matches)
            .where(ladder_matches.c.worker_id == worker_id, ladder_matches.c.status.in_(ACTIVE))
            .values(lease_expires_at=until)
        )

    @staticmethod
    def holders() -> Select[str | None]:
        """The workers holding a claimed or running match (a subquery)."""
        return select(ladder_matches.c.worker_id).where(
            ladder_matches.c.status.in_(ACTIVE),
            ladder_matches.c.worker_id.is_not(None),
        )

    def expired(self, now: float) -> list[Expired]:
        """Claimed or running matches whose lease ended before ``now`` (id, status,
        worker_id, notes)."""
        with self.ladder.engine.connect() as conn:
            return list(
                conn.execute(
                    select(
                        ladder_matches.c.id,
                        ladder_matches.c.status,
                        ladder_matches.c.worker_id,
                        ladder_matches.c.notes,
                    ).where(
                        ladder_matches.c.status.in_(ACTIVE),
                        ladder_matches.c.lease_expires_at < now,
                    )
                ).all()
            )

    def end_expired(self, match_id: str, status: str, now: float, reason: str) -> str | None:
        """End an expired lease, guarded by the status it expired in and the lease still
        being over: a claimed match is re-queued, a running one cancelled. The action
        (``requeued``/``cancelled``), or None when something else ended it first."""
        guard = (
            ladder_matches.c.id == match_id,
            ladder_matches.c.status == status,
            ladder_matches.c.lease_expires_at < now,
        )
        with self.ladder.engine.begin() as conn:
            values: dict[str, object]
            if status == "claimed":
                values = {
                    "status": "scheduled",
                    "worker_id": None,
                    "lease_expires_at": None,
                    "server_address": "",
                    "notes": json.dumps([*self._notes(conn, match_id), reason]),
                }
                action = "requeued"
            else:
                values = {
                    "status": "cancelled",
                    "cancel_reason": reason,
                    "finished_at": now,
                    "lease_expires_at": None,
                }
                action = "cancelled"
            done = conn.execute(update(ladder_matches).where(*guard).values(**values)).rowcount
        return action if done == 1 else None

    def held_by(self, worker_id: str, match_ids: set[str]) -> set[str]:
        """Those of ``match_ids`` that ``worker_id`` still holds (claimed or running)."""
        if not match_ids:
            return set()
        with self.ladder.engine.connect() as conn:
            return set(
                conn.execute(
                    select(ladder_matches.c.id).where(
                        ladder_matches.c.id.in_(sorted(match_ids)),
                        ladder_matches.c.worker_id == worker_id,
                        ladder_matches.c.status.in_(ACTIVE),
                    )
                ).scalars()
            )

    def still_active(self, match_ids: set[str]) -> set[str]:
        """Those of ``match_ids`` still claimed or running."""
        if not match_ids:
            return set()
        with self.ladder.engine.connect() as conn:
            return set(
                conn.execute(
                    select(ladder_matches.c.id).where(
                        ladder_matches.c.id.in_(sorted(match_ids)),
                        ladder_matches.c.status.in_(ACTIVE),
                    )
                ).scalars()
            )

    # -- connect-in seats -------------------------------------------------------------

    def deliver_seats(self, bot_id: int, limit: int) -> list[DeliveredSeat]:
        """Up to ``limit`` undelivered seats of the bot's current version in running
        matches, now marked delivered."""
        if limit <= 0:
            return []
        now = self.ladder.now()
        out: list[DeliveredSeat] = []
        with self.ladder.engine.begin() as conn:
            current = (
                select(bot_versions.c.id)
                .where(bot_versions.c.bot_id == bot_id)
                .order_by(bot_versions.c.version.desc())
                .limit(1)
                .scalar_subquery()
            )
            rows = conn.execute(
                select(
                    ladder_seats.c.match_id,
                    ladder_seats.c.seat,
                    ladder_seats.c.token,
                    ladder_matches.c.server_match_id,
                    ladder_matches.c.server_address,
                    ladder_matches.c.queue,
                )
                .join(ladder_matches, ladder_matches.c.id == ladder_seats.c.match_id)
                .where(
                    ladder_seats.c.version_id == current,
                    ladder_seats.c.token.is_not(None),
                    ladder_seats.c.delivered_at.is_(None),
                    ladder_matches.c.status == "running",
                )
                .order_by(ladder_matches.c.started_at, ladder_seats.c.seat)
                .limit(limit)
            ).all()
            for row in rows:
                taken = conn.execute(
                    update(ladder_seats)
                    .where(
                        and_(
                            ladder_seats.c.match_id == row.match_id,
                            ladder_seats.c.seat == row.seat,
                            ladder_seats.c.delivered_at.is_(None),
                        )
                    )
                    .values(delivered_at=now)
                ).rowcount
                if taken == 1:
                    out.append(
                        DeliveredSeat(
                            match_id=row.match_id,
                            server_match_id=row.server_match_id or "",
                            server_address=row.server_address,
                            seat=row.seat,
                            token=row.token,
                            queue=row.queue,
                            delivered_at=now,
                        )
                    )
        return out

    def undeliver_seat(self, match_id: str, seat: int, delivered_at: float) -> bool:
        """Make a delivered seat deliverable again; False if the match is no longer
        running or the seat was delivered again since ``delivered_at``."""
        with self.ladder.engine.begin() as conn:
            running = conn.execute(
                select(ladder_matches.c.id).where(
                    ladder_matches.c.id == match_id, ladder_matches.c.status == "running"
                )
            ).first()
            if running is None:
                return False
            return (
                conn.execute(
                    update(ladder_seats)
                    .where(
                        ladder_seats.c.match_id == match_id,
                        ladder_seats.c.seat == seat,
                        ladder_seats.c.delivered_at == delivered_at,
                    )
                    .values(delivered_at=None)
                ).rowcount
                == 1
            )

    # -- inside the results' transaction ----------------------------------------------

    @staticmethod
    def record_result(conn: Connection, match_id: str, **values: object) -> bool:
        """Move a claimed or running match to ``finished`` with ``values``; False (rowcount
        0) when it is over already: a second report changes nothing."""
        done = conn.execute(
            update(ladder_matches)
            .where(ladder_matches.c.id == match_id, ladder_matches.c.status.in_(ACTIVE))
            .values(status="finished", lease_expires_at=None, **values)
        ).rowcount
        return bool(done == 1)

    @staticmethod
    def record_seat(
        conn: Connection, match_id: str, seat: int, outcome: str, fault: str, points: int | None
    ) -> None:
        conn.execute(
            update(ladder_seats)
            .where(ladder_seats.c.match_id == match_id, ladder_seats.c.seat == seat)
            .values(outcome=outcome, fault=fault, points=points)
        )

    @staticmethod
    def _notes(conn: Connection, match_id: str) -> list[str]:
        text = conn.execute(
            select(ladder_matches.c.notes).where(ladder_matches.c.id == match_id)
        ).scalar_one_or_none()
        return list(json.loads(text)) if text else []
