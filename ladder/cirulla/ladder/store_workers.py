"""Workers: the only writer of ``workers`` (each ``serve`` or ``cirulla ladder worker``
process registers one row and renews its heartbeat, which extends its matches' leases)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy import delete, func, insert, select, update

from cirulla.ladder.schema import workers
from cirulla.ladder.store_rows import new_id

if TYPE_CHECKING:
    from cirulla.ladder.store import LadderStore


class WorkerStore:
    """Worker rows: registration, heartbeats, the live slots the scheduler fills."""

    def __init__(self, ladder: LadderStore) -> None:
        self.ladder = ladder

    def register_worker(
        self, name: str, server_address: str, worker_id: str = "", slots: int | None = None
    ) -> str:
        """A worker row; ``slots``: the matches it plays at once (its ``--concurrency``)."""
        now = self.ladder.now()
        worker_id = worker_id or new_id("w")
        with self.ladder.engine.begin() as conn:
            conn.execute(
                insert(workers).values(
                    id=worker_id,
                    name=name,
                    server_address=server_address,
                    heartbeat_at=now,
                    started_at=now,
                    slots=slots,
                )
            )
        return worker_id

    def live_slots(self, within: float) -> int:
        """Matches the workers that sent a heartbeat in the last ``within`` seconds play
        at once, together (the scheduler's backlog)."""
        with self.ladder.engine.connect() as conn:
            total: int | None = conn.execute(
                select(func.coalesce(func.sum(workers.c.slots), 0)).where(
                    workers.c.heartbeat_at >= self.ladder.now() - within
                )
            ).scalar_one()
        return int(total or 0)

    def heartbeat(self, worker_id: str, lease_seconds: float) -> None:
        """The worker is alive: extend the leases of the matches it holds."""
        now = self.ladder.now()
        with self.ladder.engine.begin() as conn:
            conn.execute(update(workers).where(workers.c.id == worker_id).values(heartbeat_at=now))
            self.ladder.matches.extend_leases(conn, worker_id, now + lease_seconds)

    def workers_named(self, name: str) -> list[str]:
        """Ids of the workers registered under ``name`` (earlier incarnations of one)."""
        with self.ladder.engine.connect() as conn:
            return list(conn.execute(select(workers.c.id).where(workers.c.name == name)).scalars())

    def stale_workers(self, older_than: float) -> list[str]:
        """Workers whose last heartbeat is older than ``older_than`` seconds ago."""
        limit = self.ladder.now() - older_than
        with self.ladder.engine.connect() as conn:
            return list(
                conn.execute(select(workers.c.id).where(workers.c.heartbeat_at < limit)).scalars()
            )

    def remove_worker(self, worker_id: str) -> None:
        with self.ladder.engine.begin() as conn:
            conn.execute(workers.delete().where(workers.c.id == worker_id))

    def forget_silent(self, before: float) -> None:
        """Delete the rows of workers silent since ``before`` that hold no match."""
        with self.ladder.engine.begin() as conn:
            conn.execute(
                delete(workers).where(
                    workers.c.heartbeat_at < before,
                    workers.c.id.not_in(self.ladder.matches.holders()),
                )
            )
