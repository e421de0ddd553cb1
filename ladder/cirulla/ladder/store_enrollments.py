"""Enrollments of connect-in bots: the only writer of ``enrollments``.

An enrollment is a connect-in bot's open ``Enroll`` stream on one ladder process, with
the capacity it offers and a heartbeat; the matchmaker counts the live ones
(``store_bots.candidates``). The seats delivered on a stream are the matches' part's
(``MatchStore.deliver_seats``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy import Connection, delete, insert, update

from cirulla.ladder.schema import enrollments
from cirulla.ladder.store_rows import new_id

if TYPE_CHECKING:
    from cirulla.ladder.store import LadderStore


class EnrollmentStore:
    """Opening, renewing and closing enrollments (one short transaction each)."""

    def __init__(self, ladder: LadderStore) -> None:
        self.ladder = ladder

    def open(self, bot_id: int, served_by: str, capacity: int) -> str:
        now = self.ladder.now()
        enrollment_id = new_id("en")
        with self.ladder.engine.begin() as conn:
            conn.execute(
                insert(enrollments).values(
                    id=enrollment_id,
                    bot_id=bot_id,
                    served_by=served_by,
                    capacity=capacity,
                    connected_at=now,
                    heartbeat_at=now,
                )
            )
        return enrollment_id

    def beat(self, enrollment_id: str) -> None:
        with self.ladder.engine.begin() as conn:
            conn.execute(
                update(enrollments)
                .where(enrollments.c.id == enrollment_id)
                .values(heartbeat_at=self.ladder.now())
            )

    def close(self, enrollment_id: str) -> None:
        with self.ladder.engine.begin() as conn:
            conn.execute(delete(enrollments).where(enrollments.c.id == enrollment_id))

    def close_served_by(self, served_by: str) -> None:
        """Forget the enrollments a ladder process held (at its start: left by a crash)."""
        with self.ladder.engine.begin() as conn:
            conn.execute(delete(enrollments).where(enrollments.c.served_by == served_by))

    def forget_stale(self, before: float) -> None:
        """Delete enrollments whose heartbeat stopped before ``before`` (their ladder
        process died without closing them)."""
        with self.ladder.engine.begin() as conn:
            conn.execute(delete(enrollments).where(enrollments.c.heartbeat_at < before))

    @staticmethod
    def drop_bot(conn: Connection, bot_id: int) -> None:
        """Every enrollment of the bot (it did not join a match delivered to it), in the
        results' transaction."""
        conn.execute(delete(enrollments).where(enrollments.c.bot_id == bot_id))
