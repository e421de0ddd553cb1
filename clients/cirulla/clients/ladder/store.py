"""Every read and write of ladder state, one short transaction each.

The scheduler, the workers (embedded or ``cirulla ladder worker``), the LadderService and
the command line all go through ``LadderStore``; nothing else writes the tables. The two
rules that make the ladder durable live here:

* **Claiming** a scheduled match is ``SELECT ... FOR UPDATE SKIP LOCKED`` (PostgreSQL;
  SQLite ignores the clause and serialises writers instead) followed by a guarded
  ``UPDATE ... WHERE status = 'scheduled'``: two workers never get the same match.
* **Recording a result** is one transaction that moves the match from ``claimed`` or
  ``running`` to ``finished`` with a guarded UPDATE (rowcount 1), stores the seats'
  outcomes, applies the openskill update with its history rows and the failure counts.
  A second report of the same match changes nothing (``finish`` returns False).
"""

from __future__ import annotations

import hashlib
import json
import secrets
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from sqlalchemy import Connection, Engine, and_, delete, func, insert, or_, select, update

from cirulla.clients.ladder import rating
from cirulla.clients.ladder.fields import (
    MAX_CONCURRENCY,
    MAX_REASON,
    MAX_SPEC,
    FieldError,
    check_count,
    check_name,
    check_text,
    shown,
)
from cirulla.clients.ladder.schema import (
    bot_versions,
    bots,
    enrollments,
    ladder_matches,
    ladder_seats,
    match_requests,
    rating_history,
    ratings,
    workers,
)

QUEUES = ("2p", "3p", "4p")
QUEUE_PLAYERS = {"2p": 2, "3p": 3, "4p": 4}
CONNECT_SPEC = "connect"
#: Matches a bot may play at once unless registered otherwise.
DEFAULT_CONCURRENCY = 4
#: Unrated games a new version plays before its games count (docs/ladder.md).
VALIDATION_GAMES = 2
#: Failures (crash, timeout, never joined, illegal moves) in a row that deactivate a bot.
FAILURES_TO_DEACTIVATE = 3
#: Characters of a failed bot's output kept as ``last_log``.
LOG_TAIL_CHARS = 4000
#: An enrollment without a heartbeat for this long no longer counts as connected.
ENROLLMENT_TIMEOUT = 30.0
IN_FLIGHT = ("scheduled", "claimed", "running")
#: Scheduled matches a claim looks at (oldest first) for one it may start.
CLAIM_SCAN = 50
#: Games one request may ask for (an operator's series).
MAX_REQUEST_GAMES = 100
#: Games a bot's owner may have requested and not yet played, all requests together.
OWNER_REQUEST_GAMES = 10
#: Claim priority of requested games (scheduled matches have 0).
REQUEST_PRIORITY = 1
#: Seat outcomes that count as a failure of the bot.
FAULTS = ("crash", "timeout", "illegal", "disconnect", "no-join", "forfeit")


class LadderError(ValueError):
    """A request the ladder refuses; the message names the field or rule."""


class NotFound(LadderError):
    """An unknown bot or match."""


class Refused(LadderError):
    """A request this caller may not make (e.g. an anonymous one touching an existing bot)."""


def new_id(prefix: str) -> str:
    return f"{prefix}-{secrets.token_hex(6)}"


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def parse_queues(queues: Iterable[str]) -> tuple[str, ...]:
    out: list[str] = []
    for queue in queues:
        for q in str(queue).split(","):
            q = q.strip()
            if not q:
                continue
            if q not in QUEUES:
                raise LadderError(f"queue {q!r}: queues are {', '.join(QUEUES)}")
            if q not in out:
                out.append(q)
    return tuple(sorted(out)) or ("2p",)


# ---------------------------------------------------------------------------- data


@dataclass(frozen=True, slots=True)
class MatchConfig:
    """How a ladder match is played (stored as JSON with the match)."""

    preset: str = "standard"
    rules: dict[str, Any] = field(default_factory=dict)
    move_limit_ms: int = 10_000
    disconnect_grace_ms: int = 1_000
    game_timeout: float = 600.0

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> MatchConfig:
        data = json.loads(text)
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        return cls(**known)


@dataclass(frozen=True, slots=True)
class SeatPlan:
    seat: int
    side: int
    version_id: int


@dataclass(frozen=True, slots=True)
class MatchPlan:
    """A match the scheduler wants played."""

    queue: str
    seats: tuple[SeatPlan, ...]
    seed: int
    config: MatchConfig
    pair_id: str | None = None
    pair_index: int = 0
    #: the match request it plays (``request_matches``), claimed before scheduled play
    request_id: str | None = None
    #: requested unrated: never changes a rating
    unrated: bool = False


@dataclass(frozen=True, slots=True)
class Candidate:
    """A bot version the matchmaker may seat in a queue right now."""

    bot_id: int
    bot_name: str
    version_id: int
    version: int
    spec: str
    mu: float
    sigma: float
    games: int
    last_played_at: float | None
    validation_games_left: int
    free_slots: int

    @property
    def score(self) -> float:
        return rating.score(self.mu, self.sigma)


@dataclass(frozen=True, slots=True)
class ClaimedSeat:
    seat: int
    side: int
    version_id: int
    bot_name: str
    version: int
    spec: str

    @property
    def connect_in(self) -> bool:
        return self.spec == CONNECT_SPEC


@dataclass(frozen=True, slots=True)
class ClaimedMatch:
    """A match a worker has claimed and now plays."""

    id: str
    queue: str
    seed: int
    pair_id: str | None
    config: MatchConfig
    seats: tuple[ClaimedSeat, ...]

    @property
    def players(self) -> int:
        return QUEUE_PLAYERS[self.queue]

    @property
    def deal_group(self) -> str:
        """The match server's deal_group: the pair's id (twins share deck orders)."""
        return self.pair_id or ""


@dataclass(frozen=True, slots=True)
class SeatOutcome:
    seat: int
    outcome: str = "ok"
    fault: str = ""
    log_tail: str = ""


@dataclass(frozen=True, slots=True)
class MatchOutcome:
    """What a worker reports for a match it played.

    ``void``: nobody is to blame and nothing was decided (e.g. the wall-clock limit with
    every seat playing); the match is recorded unrated.
    """

    winner: int | None
    totals: tuple[int, ...]
    seats: tuple[SeatOutcome, ...]
    deals: int = 0
    forfeit_sides: tuple[int, ...] = ()
    void: bool = False
    notes: tuple[str, ...] = ()

    def result_json(self) -> str:
        return json.dumps(
            {
                "winner": self.winner,
                "totals": list(self.totals),
                "deals": self.deals,
                "forfeit_sides": list(self.forfeit_sides),
                "void": self.void,
            },
            sort_keys=True,
        )


# ---------------------------------------------------------------------------- the store


class LadderStore:
    """Ladder state on one engine (SQLite or PostgreSQL)."""

    def __init__(self, engine: Engine, *, clock: Any = time.time) -> None:
        self.engine = engine
        self.clock = clock

    def now(self) -> float:
        return float(self.clock())

    # -- bots ------------------------------------------------------------------------

    def add_bot(
        self,
        name: str,
        spec: str,
        queues: Sequence[str] = ("2p",),
        max_concurrency: int = 0,
        *,
        only_new: bool = False,
    ) -> tuple[dict[str, Any], bool, str]:
        """Register ``name`` or give it a new version; returns (bot, new_version, key).

        ``key`` is the connect-in bot key, generated when a connect-in bot is first
        registered (only its hash is stored), else empty. The same spec and queues again
        change nothing; a removed bot registered again comes back active.
        """
        try:
            check_name("bot_name", name or "")
            check_text("spec", spec or "", MAX_SPEC)
            check_count("max_concurrency", max_concurrency, 0, MAX_CONCURRENCY)
        except FieldError as exc:
            raise LadderError(str(exc)) from None
        spec = (spec or "").strip()
        if not spec:
            raise LadderError("spec: give a bot spec (e.g. greedy) or 'connect'")
        if spec != CONNECT_SPEC:
            from cirulla.clients.matches.supervise import validate_spec

            try:
                validate_spec(spec)
            except ValueError as exc:
                raise LadderError(f"spec: {exc}") from None
        queue_text = ",".join(parse_queues(queues))
        if max_concurrency < 0:
            raise LadderError(
                f"max_concurrency: must be 0 (default) or more, not {max_concurrency}"
            )
        now = self.now()
        key = ""
        with self.engine.begin() as conn:
            bot = conn.execute(select(bots).where(bots.c.name == name)).mappings().first()
            if bot is None:
                if spec == CONNECT_SPEC:
                    key = secrets.token_urlsafe(24)
                bot_id: int = conn.execute(
                    insert(bots).values(
                        name=name,
                        created_at=now,
                        state="active",
                        state_reason="",
                        bot_key_hash=hash_key(key) if key else None,
                        max_concurrency=max_concurrency or DEFAULT_CONCURRENCY,
                    )
                ).inserted_primary_key[0]  # type: ignore[index]
                previous = None
            elif only_new:
                raise Refused(
                    "bot_name: already registered; only the admin token changes an existing bot"
                )
            else:
                bot_id = bot["id"]
                previous = self._current_version(conn, bot_id)
                changes: dict[str, Any] = {}
                if max_concurrency and max_concurrency != bot["max_concurrency"]:
                    changes["max_concurrency"] = max_concurrency
                if bot["state"] == "removed":
                    changes.update(state="active", state_reason="")
                if spec == CONNECT_SPEC and bot["bot_key_hash"] is None:
                    key = secrets.token_urlsafe(24)
                    changes["bot_key_hash"] = hash_key(key)
                if changes:
                    conn.execute(update(bots).where(bots.c.id == bot_id).values(**changes))
                if (
                    previous is not None
                    and previous["spec"] == spec
                    and previous["queues"] == queue_text
                ):
                    return self._bot_info(conn, bot_id), False, key
            version = 1 if previous is None else previous["version"] + 1
            version_id: int = conn.execute(
                insert(bot_versions).values(
                    bot_id=bot_id,
                    version=version,
                    spec=spec,
                    queues=queue_text,
                    created_at=now,
                    validation_games_left=VALIDATION_GAMES,
                    consecutive_failures=0,
                    last_failure="",
                    last_log="",
                )
            ).inserted_primary_key[0]  # type: ignore[index]
            for queue in queue_text.split(","):
                old = None
                if previous is not None:
                    old_row = conn.execute(
                        select(ratings.c.mu, ratings.c.sigma).where(
                            ratings.c.version_id == previous["id"], ratings.c.queue == queue
                        )
                    ).first()
                    if old_row is not None:
                        old = rating.Skill(old_row.mu, old_row.sigma)
                start = rating.new_version_skill(old)
                conn.execute(
                    insert(ratings).values(
                        version_id=version_id,
                        queue=queue,
                        mu=start.mu,
                        sigma=start.sigma,
                        games=0,
                        wins=0,
                        draws=0,
                        last_played_at=None,
                    )
                )
            if bot is not None and bot["state"] == "deactivated":
                # a new version is a new chance
                conn.execute(
                    update(bots).where(bots.c.id == bot_id).values(state="active", state_reason="")
                )
            return self._bot_info(conn, bot_id), True, key

    def set_state(self, name: str, state: str, reason: str = "") -> dict[str, Any]:
        """Pause, resume (``active``), remove or deactivate a bot."""
        try:
            check_text("reason", reason, MAX_REASON)
        except FieldError as exc:
            raise LadderError(str(exc)) from None
        with self.engine.begin() as conn:
            bot = self._bot_row(conn, name)
            if bot["state"] == "removed" and state != "removed":
                raise LadderError(
                    f"bot {shown(name)} was removed; register it again with `cirulla ladder add`"
                )
            conn.execute(
                update(bots)
                .where(bots.c.id == bot["id"])
                .values(state=state, state_reason="" if state == "active" else reason)
            )
            if state == "active":
                conn.execute(
                    update(bot_versions)
                    .where(bot_versions.c.bot_id == bot["id"])
                    .values(consecutive_failures=0)
                )
            return self._bot_info(conn, bot["id"])

    def check_bot_key(self, name: str, key: str) -> dict[str, Any] | None:
        """The bot if ``key`` is its connect-in key, else None (for Enroll)."""
        with self.engine.connect() as conn:
            bot = conn.execute(select(bots).where(bots.c.name == name)).mappings().first()
            if bot is None or not bot["bot_key_hash"] or not key:
                return None
            if not secrets.compare_digest(bot["bot_key_hash"], hash_key(key)):
                return None
            return self._bot_info(conn, bot["id"])

    def get_bot(self, name: str) -> dict[str, Any]:
        with self.engine.connect() as conn:
            return self._bot_info(conn, self._bot_row(conn, name)["id"])

    def list_bots(self) -> list[dict[str, Any]]:
        with self.engine.connect() as conn:
            ids: list[int] = list(
                conn.execute(select(bots.c.id).order_by(bots.c.id)).scalars().all()
            )
            return [self._bot_info(conn, i) for i in ids]

    def _bot_row(self, conn: Connection, name: str) -> Any:
        bot = conn.execute(select(bots).where(bots.c.name == name)).mappings().first()
        if bot is None:
            raise NotFound(f"no bot named {shown(name)} on this ladder")
        return bot

    @staticmethod
    def _current_version(conn: Connection, bot_id: int) -> Any:
        return (
            conn.execute(
                select(bot_versions)
                .where(bot_versions.c.bot_id == bot_id)
                .order_by(bot_versions.c.version.desc())
                .limit(1)
            )
            .mappings()
            .first()
        )

    def _bot_info(self, conn: Connection, bot_id: int) -> dict[str, Any]:
        """A bot with its current version, as the rpcs and the CLI show it."""
        bot = conn.execute(select(bots).where(bots.c.id == bot_id)).mappings().one()
        version = self._current_version(conn, bot_id)
        last_log = version["last_log"] if version is not None else ""
        if (
            last_log
            and version["last_log_match_id"]
            and self._pair_in_play(conn, version["last_log_match_id"])
        ):
            last_log = "(withheld until the other game of its duplicate pair is over)"
        connect_in = bot["bot_key_hash"] is not None
        offline = connect_in and (
            conn.execute(
                select(func.count())
                .select_from(enrollments)
                .where(
                    enrollments.c.bot_id == bot_id,
                    enrollments.c.heartbeat_at >= self.now() - ENROLLMENT_TIMEOUT,
                )
            ).scalar_one()
            == 0
        )
        return {
            "id": bot["id"],
            "name": bot["name"],
            "state": bot["state"],
            "state_reason": bot["state_reason"],
            "max_concurrency": bot["max_concurrency"],
            "created_at": bot["created_at"],
            "connect_in": connect_in,
            # a connect-in bot without a live enrollment: not scheduled until it enrolls
            "offline": offline,
            "version_id": version["id"] if version is not None else None,
            "version": version["version"] if version is not None else 0,
            "spec": version["spec"] if version is not None else "",
            "queues": version["queues"].split(",") if version is not None else [],
            "validation_games_left": version["validation_games_left"] if version else 0,
            "consecutive_failures": version["consecutive_failures"] if version else 0,
            "last_failure": version["last_failure"] if version else "",
            "last_log": last_log,
        }

    # -- matchmaking inputs ----------------------------------------------------------

    def candidates(self, queue: str, need: int = 1) -> list[Candidate]:
        """Active bots whose current version plays ``queue`` and has room for ``need``
        more scheduled games: fewer than ``max(limit, need)`` games scheduled, claimed
        or running (``claim`` enforces the limit itself on the games being played)."""
        now = self.now()
        with self.engine.connect() as conn:
            rows = (
                conn.execute(
                    select(
                        bots.c.id.label("bot_id"),
                        bots.c.name,
                        bots.c.max_concurrency,
                        bot_versions.c.id.label("version_id"),
                        bot_versions.c.version,
                        bot_versions.c.spec,
                        bot_versions.c.queues,
                        bot_versions.c.validation_games_left,
                        ratings.c.mu,
                        ratings.c.sigma,
                        ratings.c.games,
                        ratings.c.last_played_at,
                    )
                    .join(bot_versions, bot_versions.c.bot_id == bots.c.id)
                    .join(
                        ratings,
                        and_(
                            ratings.c.version_id == bot_versions.c.id,
                            ratings.c.queue == queue,
                        ),
                    )
                    .where(bots.c.state == "active")
                    .order_by(bots.c.id, bot_versions.c.version.desc())
                )
                .mappings()
                .all()
            )
            busy: dict[int, int] = dict(
                conn.execute(
                    select(bot_versions.c.bot_id, func.count())
                    .select_from(ladder_seats)
                    .join(bot_versions, bot_versions.c.id == ladder_seats.c.version_id)
                    .join(ladder_matches, ladder_matches.c.id == ladder_seats.c.match_id)
                    .where(ladder_matches.c.status.in_(IN_FLIGHT))
                    .group_by(bot_versions.c.bot_id)
                ).all()
            )
            enrolled: dict[int, int] = dict(
                conn.execute(
                    select(enrollments.c.bot_id, func.sum(enrollments.c.capacity))
                    .where(enrollments.c.heartbeat_at >= now - ENROLLMENT_TIMEOUT)
                    .group_by(enrollments.c.bot_id)
                ).all()
            )
        out: list[Candidate] = []
        seen: set[int] = set()
        for row in rows:
            if row["bot_id"] in seen:
                continue
            seen.add(row["bot_id"])  # the first row of a bot is its newest version
            limit = row["max_concurrency"]
            if row["spec"] == CONNECT_SPEC:
                limit = min(limit, int(enrolled.get(row["bot_id"]) or 0))
            if limit <= 0:
                continue
            free = max(limit, need) - int(busy.get(row["bot_id"], 0))
            if free < need:
                continue
            out.append(
                Candidate(
                    bot_id=row["bot_id"],
                    bot_name=row["name"],
                    version_id=row["version_id"],
                    version=row["version"],
                    spec=row["spec"],
                    mu=row["mu"],
                    sigma=rating.inflate(row["sigma"], row["last_played_at"], now),
                    games=row["games"],
                    last_played_at=row["last_played_at"],
                    validation_games_left=row["validation_games_left"],
                    free_slots=free,
                )
            )
        return out

    def in_flight(self) -> int:
        """Matches scheduled, claimed or running."""
        with self.engine.connect() as conn:
            return int(
                conn.execute(
                    select(func.count())
                    .select_from(ladder_matches)
                    .where(ladder_matches.c.status.in_(IN_FLIGHT))
                ).scalar_one()
            )

    def waiting(self) -> int:
        """Matches scheduled and not yet claimed."""
        with self.engine.connect() as conn:
            return int(
                conn.execute(
                    select(func.count())
                    .select_from(ladder_matches)
                    .where(ladder_matches.c.status == "scheduled")
                ).scalar_one()
            )

    def schedule(self, plans: Sequence[MatchPlan]) -> list[str]:
        """Insert the planned matches (all or none); returns their ids in order."""
        now = self.now()
        ids: list[str] = []
        with self.engine.begin() as conn:
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

    # -- workers ---------------------------------------------------------------------

    def register_worker(
        self, name: str, server_address: str, worker_id: str = "", slots: int | None = None
    ) -> str:
        """A worker row; ``slots``: the matches it plays at once (its ``--concurrency``)."""
        now = self.now()
        worker_id = worker_id or new_id("w")
        with self.engine.begin() as conn:
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
        with self.engine.connect() as conn:
            total: int | None = conn.execute(
                select(func.coalesce(func.sum(workers.c.slots), 0)).where(
                    workers.c.heartbeat_at >= self.now() - within
                )
            ).scalar_one()
        return int(total or 0)

    def heartbeat(self, worker_id: str, lease_seconds: float) -> None:
        """The worker is alive: extend the leases of the matches it holds."""
        now = self.now()
        with self.engine.begin() as conn:
            conn.execute(update(workers).where(workers.c.id == worker_id).values(heartbeat_at=now))
            conn.execute(
                update(ladder_matches)
                .where(
                    ladder_matches.c.worker_id == worker_id,
                    ladder_matches.c.status.in_(("claimed", "running")),
                )
                .values(lease_expires_at=now + lease_seconds)
            )

    def claim(
        self, worker_id: str, server_address: str, lease_seconds: float = 60.0
    ) -> ClaimedMatch | None:
        """Take the oldest scheduled match for ``worker_id``; None when there is none.

        Duplicate pairs are claimed game by game in order, so both twins start close
        together. Connect-in seats are left for their enrollment to deliver.
        """
        now = self.now()
        with self.engine.begin() as conn:
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
        self, conn: Connection, worker_id: str, rows: Sequence[Any], dead_before: float
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
                .where(ladder_matches.c.status.in_(("claimed", "running")))
                .group_by(bot_versions.c.bot_id)
            ).all()
        )
        for row in rows:
            if row.pair_id:
                twin_workers: set[Any] = set(
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

    def _claimed(self, conn: Connection, match_id: str) -> ClaimedMatch:
        match = conn.execute(select(ladder_matches).where(ladder_matches.c.id == match_id)).one()
        seats = conn.execute(
            select(
                ladder_seats.c.seat,
                ladder_seats.c.side,
                ladder_seats.c.version_id,
                bots.c.name,
                bot_versions.c.version,
                bot_versions.c.spec,
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
                ClaimedSeat(s.seat, s.side, s.version_id, s.name, s.version, s.spec) for s in seats
            ),
        )

    def mark_running(
        self, match_id: str, worker_id: str, server_match_id: str, tokens: dict[int, str]
    ) -> bool:
        """The worker created the match on its server: keep its id and seat tokens."""
        now = self.now()
        with self.engine.begin() as conn:
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
        with self.engine.begin() as conn:
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
        now = self.now()
        with self.engine.begin() as conn:
            done = (
                conn.execute(
                    update(ladder_matches)
                    .where(ladder_matches.c.id == match_id, ladder_matches.c.status.in_(IN_FLIGHT))
                    .values(status="cancelled", cancel_reason=reason, finished_at=now)
                ).rowcount
                == 1
            )
            pair = conn.execute(
                select(ladder_matches.c.pair_id).where(ladder_matches.c.id == match_id)
            ).scalar_one_or_none()
            if done and pair:
                self._settle_pair(conn, pair, now)  # its twin's result may be rated now
            return done

    def unfinished_of(self, worker_ids: Sequence[str]) -> list[dict[str, Any]]:
        """Claimed or running matches of these workers (for recovery after a crash)."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(ladder_matches).where(
                    ladder_matches.c.worker_id.in_(list(worker_ids)),
                    ladder_matches.c.status.in_(("claimed", "running")),
                )
            ).mappings()
            return [dict(r) for r in rows]

    def workers_named(self, name: str) -> list[str]:
        """Ids of the workers registered under ``name`` (earlier incarnations of one)."""
        with self.engine.connect() as conn:
            return list(conn.execute(select(workers.c.id).where(workers.c.name == name)).scalars())

    def stale_workers(self, older_than: float) -> list[str]:
        """Workers whose last heartbeat is older than ``older_than`` seconds ago."""
        limit = self.now() - older_than
        with self.engine.connect() as conn:
            return list(
                conn.execute(select(workers.c.id).where(workers.c.heartbeat_at < limit)).scalars()
            )

    def remove_worker(self, worker_id: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(workers.delete().where(workers.c.id == worker_id))

    def seat_tokens(self, match_id: str) -> dict[int, str]:
        """SECRET: the seat tokens of a running match (for the worker hosting it)."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(ladder_seats.c.seat, ladder_seats.c.token).where(
                    ladder_seats.c.match_id == match_id
                )
            ).all()
            return {r.seat: r.token for r in rows if r.token}

    @staticmethod
    def _notes(conn: Connection, match_id: str) -> list[str]:
        text = conn.execute(
            select(ladder_matches.c.notes).where(ladder_matches.c.id == match_id)
        ).scalar_one_or_none()
        return list(json.loads(text)) if text else []

    # -- results ---------------------------------------------------------------------

    def finish(self, match_id: str, outcome: MatchOutcome) -> bool:
        """Record a result and its rating update, exactly once (see the module docstring).

        Returns False, changing nothing, when the match is not claimed or running any more
        (already finished or cancelled: a second report).
        """
        now = self.now()
        with self.engine.begin() as conn:
            match = (
                conn.execute(select(ladder_matches).where(ladder_matches.c.id == match_id))
                .mappings()
                .first()
            )
            if match is None:
                raise NotFound(f"no ladder match {shown(match_id)}")
            seats = (
                conn.execute(
                    select(
                        ladder_seats, bot_versions.c.bot_id, bot_versions.c.validation_games_left
                    )
                    .join(bot_versions, bot_versions.c.id == ladder_seats.c.version_id)
                    .where(ladder_seats.c.match_id == match_id)
                    .order_by(ladder_seats.c.seat)
                )
                .mappings()
                .all()
            )
            validating = any(s["validation_games_left"] > 0 for s in seats)
            unrated = bool(match["unrated"])
            rated = not outcome.void and not validating and not unrated
            notes = json.loads(match["notes"] or "[]") + list(outcome.notes)
            if unrated and not outcome.void:
                notes.append("unrated: requested as an unrated game")
            elif validating and not outcome.void:
                notes.append("unrated: validation game of a new bot version")
            done = conn.execute(
                update(ladder_matches)
                .where(
                    ladder_matches.c.id == match_id,
                    ladder_matches.c.status.in_(("claimed", "running")),
                )
                .values(
                    status="finished",
                    finished_at=now,
                    result=outcome.result_json(),
                    rated=rated,
                    notes=json.dumps(notes),
                    lease_expires_at=None,
                )
            ).rowcount
            if done != 1:
                return False
            # Lock the seats' bot versions in id order before writing failure counts and
            # ratings: two results touching the same bots at once (two workers on
            # PostgreSQL) then run one after the other, always locking in the same order,
            # so they neither deadlock nor rate from the same old rating. (SQLite has a
            # single writer anyway.)
            conn.execute(
                select(bot_versions.c.id)
                .where(bot_versions.c.id.in_(sorted({s["version_id"] for s in seats})))
                .order_by(bot_versions.c.id)
                .with_for_update()
            )
            by_seat = {s.seat: s for s in outcome.seats}
            sides = 2 if match["queue"] == "4p" else len(seats)
            for seat in seats:
                result = by_seat.get(seat["seat"], SeatOutcome(seat["seat"]))
                side = seat["side"]
                points = outcome.totals[side] if side < len(outcome.totals) else None
                conn.execute(
                    update(ladder_seats)
                    .where(ladder_seats.c.match_id == match_id, ladder_seats.c.seat == seat["seat"])
                    .values(outcome=result.outcome, fault=result.fault, points=points)
                )
                self._count_failure(conn, seat, result, match_id, outcome.void, unrated)
            if rated and not match["pair_id"]:
                self._rate(conn, match["queue"], match_id, seats, sides, outcome, now)
            elif match["pair_id"]:
                # A duplicate twin is rated only once both games are over: until then its
                # result must not show through the standings (withheld means withheld).
                self._settle_pair(conn, match["pair_id"], now)
            return True

    def _settle_pair(self, conn: Connection, pair_id: str, now: float) -> None:
        """Rate the finished games of a duplicate pair once none of it is in flight.

        A game counts as rated already when it has rating history rows (each rating
        update writes them), so calling this again never rates a game twice.
        """
        left = conn.execute(
            select(func.count())
            .select_from(ladder_matches)
            .where(ladder_matches.c.pair_id == pair_id, ladder_matches.c.status.in_(IN_FLIGHT))
        ).scalar_one()
        if left:
            return
        games = conn.execute(
            select(ladder_matches)
            .where(
                ladder_matches.c.pair_id == pair_id,
                ladder_matches.c.status == "finished",
                ladder_matches.c.rated.is_(True),
            )
            .order_by(ladder_matches.c.finished_at, ladder_matches.c.id)
        ).mappings()
        for game in list(games):
            done = conn.execute(
                select(func.count())
                .select_from(rating_history)
                .where(rating_history.c.match_id == game["id"])
            ).scalar_one()
            if done:
                continue
            seats = (
                conn.execute(
                    select(ladder_seats)
                    .where(ladder_seats.c.match_id == game["id"])
                    .order_by(ladder_seats.c.seat)
                )
                .mappings()
                .all()
            )
            result = json.loads(game["result"] or "{}")
            outcome = MatchOutcome(
                winner=result.get("winner"),
                totals=tuple(result.get("totals") or ()),
                forfeit_sides=tuple(result.get("forfeit_sides") or ()),
                seats=(),
            )
            sides = 2 if game["queue"] == "4p" else len(seats)
            self._rate(conn, game["queue"], game["id"], seats, sides, outcome, now)

    def settle_pair_of(self, match_id: str) -> None:
        """After a game of a pair ended without a result (cancelled): rate its twin."""
        with self.engine.begin() as conn:
            pair = conn.execute(
                select(ladder_matches.c.pair_id).where(ladder_matches.c.id == match_id)
            ).scalar_one_or_none()
            if pair:
                self._settle_pair(conn, pair, self.now())

    def _count_failure(
        self,
        conn: Connection,
        seat: Any,
        result: SeatOutcome,
        match_id: str,
        void: bool,
        unrated: bool = False,
    ) -> None:
        """A fault counts in any game (an unrated one too: a crash is a crash); a clean
        game resets the count and, unless requested unrated, is a validation game."""
        version_id = seat["version_id"]
        if result.outcome in FAULTS:
            version = (
                conn.execute(select(bot_versions).where(bot_versions.c.id == version_id))
                .mappings()
                .one()
            )
            failures = version["consecutive_failures"] + 1
            what = f"{result.outcome} in match {match_id}" + (
                f": {result.fault}" if result.fault else ""
            )
            conn.execute(
                update(bot_versions)
                .where(bot_versions.c.id == version_id)
                .values(
                    consecutive_failures=failures,
                    last_failure=what,
                    last_log=result.log_tail[-LOG_TAIL_CHARS:],
                    last_log_match_id=match_id,
                )
            )
            if result.outcome == "no-join":
                # A connect-in bot that enrolled and does not join gives up its slots now
                # (the enrollment is gone until it enrolls again), not after every match
                # scheduled on its word has waited out its join timeout.
                conn.execute(delete(enrollments).where(enrollments.c.bot_id == seat["bot_id"]))
            if failures >= FAILURES_TO_DEACTIVATE:
                deactivated = conn.execute(
                    update(bots)
                    .where(bots.c.id == seat["bot_id"], bots.c.state == "active")
                    .values(
                        state="deactivated",
                        state_reason=f"{failures} failures in a row; last: {what}",
                    )
                )
                if deactivated.rowcount:
                    from cirulla.clients.ladder.metrics import DEACTIVATIONS

                    DEACTIVATIONS.inc()
        elif not void and unrated:
            conn.execute(
                update(bot_versions)
                .where(bot_versions.c.id == version_id)
                .values(consecutive_failures=0)
            )
        elif not void:
            conn.execute(
                update(bot_versions)
                .where(bot_versions.c.id == version_id)
                .values(
                    consecutive_failures=0,
                    validation_games_left=func.max(bot_versions.c.validation_games_left - 1, 0)
                    if conn.dialect.name == "sqlite"
                    else func.greatest(bot_versions.c.validation_games_left - 1, 0),
                )
            )

    def _rate(
        self,
        conn: Connection,
        queue: str,
        match_id: str,
        seats: Sequence[Any],
        sides: int,
        outcome: MatchOutcome,
        now: float,
    ) -> None:
        ranks = rating.ranks_of(sides, outcome.winner, outcome.totals, outcome.forfeit_sides)
        versions_by_side: list[list[int]] = [[] for _ in range(sides)]
        for seat in seats:
            if seat["version_id"] not in versions_by_side[seat["side"]]:
                versions_by_side[seat["side"]].append(seat["version_id"])
        current: dict[int, Any] = {}
        for vid in {v for side in versions_by_side for v in side}:
            row = (
                conn.execute(
                    select(ratings).where(ratings.c.version_id == vid, ratings.c.queue == queue)
                )
                .mappings()
                .first()
            )
            if row is None:
                row = {  # type: ignore[assignment]
                    "mu": rating.MU0,
                    "sigma": rating.SIGMA0,
                    "last_played_at": None,
                    "games": 0,
                }
                conn.execute(
                    insert(ratings).values(
                        version_id=vid, queue=queue, mu=rating.MU0, sigma=rating.SIGMA0
                    )
                )
            current[vid] = row
        teams = [
            [
                rating.Skill(
                    current[v]["mu"],
                    rating.inflate(current[v]["sigma"], current[v]["last_played_at"], now),
                )
                for v in side
            ]
            for side in versions_by_side
        ]
        new = rating.rate(teams, ranks)
        best = min(ranks)
        sole_winner = ranks.count(best) == 1
        for side, team in enumerate(versions_by_side):
            won = ranks[side] == best and sole_winner
            drew = ranks[side] == best and not sole_winner
            for vid, skill in zip(team, new[side], strict=True):
                conn.execute(
                    update(ratings)
                    .where(ratings.c.version_id == vid, ratings.c.queue == queue)
                    .values(
                        mu=skill.mu,
                        sigma=skill.sigma,
                        games=ratings.c.games + 1,
                        wins=ratings.c.wins + (1 if won else 0),
                        draws=ratings.c.draws + (1 if drew else 0),
                        last_played_at=now,
                    )
                )
                conn.execute(
                    insert(rating_history).values(
                        version_id=vid,
                        queue=queue,
                        match_id=match_id,
                        mu=skill.mu,
                        sigma=skill.sigma,
                        at=now,
                    )
                )

    # -- requested matches -----------------------------------------------------------

    def request_matches(
        self,
        names: Sequence[str],
        games: int = 1,
        *,
        unrated: bool = False,
        config: MatchConfig | None = None,
        queues: Sequence[str] = QUEUES,
        owner_key: str | None = None,
    ) -> dict[str, Any]:
        """Queue a match or series between ``names`` (2-4 bots; their number is the
        queue), claimed before any scheduled match; the request as ``match_requests``
        shows it.

        ``owner_key``: the caller is not the operator but holds the bot key of one of the
        bots: only unrated games, against active bots, at most ``OWNER_REQUEST_GAMES``
        of its requests unplayed at once. Series of managed bots in ``2p``/``4p`` are
        duplicate pairs (an odd last game alone); with a connect-in bot, or in ``3p``,
        single games whose seats rotate.
        """
        from cirulla.clients.ladder.matchmaking import SEED_BITS

        names = [str(n) for n in names]
        for name in names:
            try:
                check_name("bot_names", name)
            except FieldError as exc:
                raise LadderError(str(exc)) from None
        if not 2 <= len(names) <= 4:
            raise LadderError(f"bot_names: name 2 to 4 bots, not {len(names)}")
        if len(set(names)) != len(names):
            raise LadderError("bot_names: a bot may take only one seat")
        games = games or 1
        if not 1 <= games <= MAX_REQUEST_GAMES:
            raise LadderError(f"games: 1 to {MAX_REQUEST_GAMES}, not {games}")
        queue = {2: "2p", 3: "3p", 4: "4p"}[len(names)]
        if queue not in queues:
            raise LadderError(f"bot_names: this ladder does not play the {queue} queue")
        now = self.now()
        with self.engine.begin() as conn:
            infos = [self._bot_info(conn, self._bot_row(conn, n)["id"]) for n in names]
            requested_by = "admin"
            if owner_key is not None:
                owner = next(
                    (
                        b
                        for b in infos
                        if (row := self._bot_row(conn, b["name"]))["bot_key_hash"]
                        and secrets.compare_digest(row["bot_key_hash"], hash_key(owner_key))
                    ),
                    None,
                )
                if owner is None:
                    raise Refused("bot_key: not the key of any of the bots named")
                if not unrated:
                    raise Refused("unrated: a bot's owner may request only unrated games")
                for bot in infos:
                    if bot is not owner and bot["state"] != "active":
                        raise Refused(f"bot {shown(bot['name'])} is {bot['state']}")
                requested_by = f"owner of {owner['name']}"
                open_games = conn.execute(
                    select(func.count())
                    .select_from(ladder_matches)
                    .join(match_requests, match_requests.c.id == ladder_matches.c.request_id)
                    .where(
                        match_requests.c.requested_by == requested_by,
                        ladder_matches.c.status.in_(IN_FLIGHT),
                    )
                ).scalar_one()
                if open_games + games > OWNER_REQUEST_GAMES:
                    raise Refused(
                        f"games: an owner may have {OWNER_REQUEST_GAMES} requested games "
                        f"waiting or playing; {open_games} are"
                    )
            for bot in infos:
                if bot["state"] == "removed":
                    raise LadderError(f"bot {shown(bot['name'])} was removed from the ladder")
                if bot["connect_in"] and bot["offline"]:
                    raise LadderError(
                        f"bot {shown(bot['name'])} is offline (a connect-in bot with no live "
                        "enrollment): its games could not be played"
                    )
                if not unrated and queue not in bot["queues"]:
                    raise LadderError(
                        f"bot {shown(bot['name'])} does not play the {queue} queue: request "
                        "it unrated, or register the bot for that queue"
                    )
            request_id = new_id("rq")
            conn.execute(
                insert(match_requests).values(
                    id=request_id,
                    queue=queue,
                    bots=json.dumps(names),
                    games=games,
                    unrated=unrated,
                    requested_by=requested_by,
                    created_at=now,
                )
            )
        versions = [b["version_id"] for b in infos]
        paired = queue != "3p" and not any(b["connect_in"] for b in infos)
        plans: list[MatchPlan] = []
        index = 0
        while index < games:
            seed = secrets.randbits(SEED_BITS)
            if paired and games - index >= 2:
                order = versions[:]
                swapped = (
                    [order[1], order[0]]
                    if queue == "2p"
                    else [order[1], order[0], order[3], order[2]]
                )
                pair = new_id("lp")
                for offset, seats in enumerate((order, swapped)):
                    # pair_index: the game's place in the series (claims go in that order)
                    plans.append(
                        self._request_plan(
                            queue, seats, seed, config, request_id, unrated, pair, index + offset
                        )
                    )
                index += 2
            else:
                turn = index % len(versions)
                seats = versions[turn:] + versions[:turn]
                plans.append(
                    self._request_plan(
                        queue, seats, seed, config, request_id, unrated, pair_index=index
                    )
                )
                index += 1
        self.schedule(plans)
        return self.match_request(request_id)

    @staticmethod
    def _request_plan(
        queue: str,
        versions: Sequence[int],
        seed: int,
        config: MatchConfig | None,
        request_id: str,
        unrated: bool,
        pair_id: str | None = None,
        pair_index: int = 0,
    ) -> MatchPlan:
        seats = tuple(SeatPlan(i, i % 2 if queue == "4p" else i, v) for i, v in enumerate(versions))
        return MatchPlan(
            queue,
            seats,
            seed,
            config or MatchConfig(),
            pair_id=pair_id,
            pair_index=pair_index,
            request_id=request_id,
            unrated=unrated,
        )

    def match_request(self, request_id: str) -> dict[str, Any]:
        """One request with its games (public views: withheld twins stay withheld)."""
        with self.engine.connect() as conn:
            row = (
                conn.execute(select(match_requests).where(match_requests.c.id == request_id))
                .mappings()
                .first()
            )
            if row is None:
                raise NotFound(f"no match request {shown(request_id)}")
            return self._public_request(conn, row)

    def match_requests(self, bot: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
        """Requests, newest first; with ``bot``, only those naming it."""
        with self.engine.connect() as conn:
            if bot is not None:
                self._bot_row(conn, bot)  # NotFound for an unknown name
            rows = (
                conn.execute(
                    select(match_requests).order_by(
                        match_requests.c.created_at.desc(), match_requests.c.id
                    )
                )
                .mappings()
                .all()
            )
            out = []
            for row in rows:
                if bot is not None and bot not in json.loads(row["bots"]):
                    continue
                out.append(self._public_request(conn, row))
                if len(out) >= limit:
                    break
            return out

    def _public_request(self, conn: Connection, row: Any) -> dict[str, Any]:
        matches = [
            self._public_match(conn, m)
            for m in conn.execute(
                select(ladder_matches)
                .where(ladder_matches.c.request_id == row["id"])
                .order_by(ladder_matches.c.pair_index, ladder_matches.c.id)
            ).mappings()
        ]
        return {
            "id": row["id"],
            "queue": row["queue"],
            "bots": json.loads(row["bots"]),
            "games": row["games"],
            "unrated": bool(row["unrated"]),
            "requested_by": row["requested_by"],
            "created_at": row["created_at"],
            "matches": matches,
            "finished": sum(1 for m in matches if m["status"] == "finished"),
            "cancelled": sum(1 for m in matches if m["status"] == "cancelled"),
        }

    # -- reads -----------------------------------------------------------------------

    @staticmethod
    def _pair_in_play(conn: Connection, match_id: str) -> bool:
        """Whether a game of ``match_id``'s duplicate pair is not over yet."""
        pair = conn.execute(
            select(ladder_matches.c.pair_id).where(ladder_matches.c.id == match_id)
        ).scalar_one_or_none()
        if not pair:
            return False
        left = conn.execute(
            select(func.count())
            .select_from(ladder_matches)
            .where(ladder_matches.c.pair_id == pair, ladder_matches.c.status.in_(IN_FLIGHT))
        ).scalar_one()
        return bool(left)

    def standings(self, queue: str, include_inactive: bool = False) -> list[dict[str, Any]]:
        """Bots of ``queue`` (current versions), best ``mu - 3 sigma`` first."""
        now = self.now()
        out: list[dict[str, Any]] = []
        for bot in self.list_bots():
            if bot["state"] == "removed" or queue not in bot["queues"]:
                continue
            if not include_inactive and bot["state"] != "active":
                continue
            with self.engine.connect() as conn:
                row = (
                    conn.execute(
                        select(ratings).where(
                            ratings.c.version_id == bot["version_id"], ratings.c.queue == queue
                        )
                    )
                    .mappings()
                    .first()
                )
            if row is None:
                continue
            sigma = rating.inflate(row["sigma"], row["last_played_at"], now)
            out.append(
                {
                    "bot": bot,
                    "queue": queue,
                    "mu": row["mu"],
                    "sigma": sigma,
                    "score": rating.score(row["mu"], sigma),
                    "games": row["games"],
                    "wins": row["wins"],
                    "draws": row["draws"],
                    "provisional": row["games"] < rating.PROVISIONAL_GAMES,
                    "last_played_at": row["last_played_at"],
                }
            )
        out.sort(key=lambda e: (e["bot"]["state"] != "active", -e["score"], e["bot"]["name"]))
        for rank, entry in enumerate(out, 1):
            entry["rank"] = rank
        return out

    def rated_games(self, queue: str) -> int:
        """Rated games of ``queue`` whose rating is applied (no twin of a pair in play)."""
        with self.engine.connect() as conn:
            return int(
                conn.execute(
                    select(func.count(func.distinct(rating_history.c.match_id))).where(
                        rating_history.c.queue == queue
                    )
                ).scalar_one()
            )

    def match(self, match_id: str) -> dict[str, Any]:
        """One match as anyone may read it: no token, no seed; a finished game of a pair
        still in play has its result withheld."""
        with self.engine.connect() as conn:
            row = (
                conn.execute(
                    select(ladder_matches).where(
                        or_(
                            ladder_matches.c.id == match_id,
                            ladder_matches.c.server_match_id == match_id,
                        )
                    )
                )
                .mappings()
                .first()
            )
            if row is None:
                raise NotFound(f"no ladder match {shown(match_id)}")
            return self._public_match(conn, row)

    def _public_match(self, conn: Connection, row: Any) -> dict[str, Any]:
        withheld = row["status"] == "finished" and self._pair_in_play(conn, row["id"])
        seats = conn.execute(
            select(
                ladder_seats.c.seat,
                ladder_seats.c.side,
                ladder_seats.c.version_id,
                ladder_seats.c.outcome,
                ladder_seats.c.points,
                ladder_seats.c.fault,
                bots.c.name,
                bot_versions.c.version,
                rating_history.c.mu,
                rating_history.c.sigma,
            )
            .join(bot_versions, bot_versions.c.id == ladder_seats.c.version_id)
            .join(bots, bots.c.id == bot_versions.c.bot_id)
            .outerjoin(
                rating_history,
                and_(
                    rating_history.c.match_id == ladder_seats.c.match_id,
                    rating_history.c.version_id == ladder_seats.c.version_id,
                ),
            )
            .where(ladder_seats.c.match_id == row["id"])
            .order_by(ladder_seats.c.seat)
        ).mappings()
        result = json.loads(row["result"]) if row["result"] and not withheld else None
        return {
            "id": row["id"],
            "server_match_id": row["server_match_id"] or "",
            "server_address": row["server_address"],
            "queue": row["queue"],
            "pair_id": row["pair_id"] or "",
            "status": row["status"],
            "rated": bool(row["rated"]) and not withheld,
            "cancel_reason": row["cancel_reason"],
            "withheld": withheld,
            "created_at": row["created_at"],
            "started_at": row["started_at"],
            "finished_at": row["finished_at"],
            "winner": result["winner"] if result else None,
            "notes": [] if withheld else json.loads(row["notes"] or "[]"),
            "request_id": row["request_id"] or "",
            "seats": [
                {
                    "seat": s["seat"],
                    "side": s["side"],
                    "bot": s["name"],
                    "version": s["version"],
                    "version_id": s["version_id"],
                    "outcome": "" if withheld else s["outcome"],
                    "points": None if withheld else s["points"],
                    "fault": "" if withheld else s["fault"],
                    "mu_after": None if withheld else s["mu"],
                    "sigma_after": None if withheld else s["sigma"],
                }
                for s in seats
            ],
        }

    def bot_matches(
        self, name: str, queue: str | None = None, limit: int = 50, versus: str | None = None
    ) -> list[dict[str, Any]]:
        """Matches of a bot (optionally against ``versus``), newest first."""
        with self.engine.connect() as conn:
            bot = self._bot_row(conn, name)
            ids = select(ladder_seats.c.match_id).join(
                bot_versions, bot_versions.c.id == ladder_seats.c.version_id
            )
            query = select(ladder_matches).where(
                ladder_matches.c.id.in_(ids.where(bot_versions.c.bot_id == bot["id"]))
            )
            if versus is not None:
                other = self._bot_row(conn, versus)
                query = query.where(
                    ladder_matches.c.id.in_(ids.where(bot_versions.c.bot_id == other["id"]))
                )
            if queue:
                query = query.where(ladder_matches.c.queue == queue)
            query = query.order_by(ladder_matches.c.created_at.desc(), ladder_matches.c.id).limit(
                limit
            )
            return [self._public_match(conn, r) for r in conn.execute(query).mappings().all()]

    def bot_history(self, name: str, queue: str | None = None, limit: int = 50) -> dict[str, Any]:
        """A bot's versions, ratings, rating history and matches.

        Rating points of a game whose duplicate pair is still in play are left out: they
        would tell the result of the withheld game.
        """
        now = self.now()
        with self.engine.connect() as conn:
            bot = self._bot_row(conn, name)
            versions = (
                conn.execute(
                    select(bot_versions)
                    .where(bot_versions.c.bot_id == bot["id"])
                    .order_by(bot_versions.c.version)
                )
                .mappings()
                .all()
            )
            vids = [v["id"] for v in versions]
            by_id = {v["id"]: v["version"] for v in versions}
            rating_rows = conn.execute(
                select(ratings).where(ratings.c.version_id == vids[-1])
            ).mappings()
            current = [
                {
                    "queue": r["queue"],
                    "mu": r["mu"],
                    "sigma": rating.inflate(r["sigma"], r["last_played_at"], now),
                    "games": r["games"],
                    "wins": r["wins"],
                    "draws": r["draws"],
                    "last_played_at": r["last_played_at"],
                    "provisional": r["games"] < rating.PROVISIONAL_GAMES,
                }
                for r in rating_rows
                if queue in (None, r["queue"])
            ]
            points_query = (
                select(rating_history)
                .where(rating_history.c.version_id.in_(vids))
                .order_by(rating_history.c.at, rating_history.c.id)
            )
            points = [
                {
                    "queue": p["queue"],
                    "version": by_id[p["version_id"]],
                    "match_id": p["match_id"],
                    "mu": p["mu"],
                    "sigma": p["sigma"],
                    "at": p["at"],
                }
                for p in conn.execute(points_query).mappings()
                if queue in (None, p["queue"]) and not self._pair_in_play(conn, p["match_id"])
            ]
            info = self._bot_info(conn, bot["id"])
        return {
            "bot": info,
            "versions": [
                {
                    "version": v["version"],
                    "spec": v["spec"],
                    "queues": v["queues"].split(","),
                    "created_at": v["created_at"],
                }
                for v in versions
            ],
            "ratings": current,
            "rating_history": points,
            "matches": self.bot_matches(name, queue, limit),
        }

    def head_to_head(
        self, a: str, b: str, queue: str | None = None, limit: int = 50
    ) -> dict[str, Any]:
        """Finished, not withheld games where ``a`` and ``b`` sat on opposite sides."""
        games = a_wins = b_wins = draws = a_points = b_points = 0
        matches = self.bot_matches(a, queue, 10_000, versus=b)
        for m in matches:
            if m["status"] != "finished" or m["withheld"]:
                continue
            sides_a = {s["side"] for s in m["seats"] if s["bot"] == a}
            sides_b = {s["side"] for s in m["seats"] if s["bot"] == b}
            if len(sides_a) != 1 or len(sides_b) != 1 or sides_a == sides_b:
                continue
            side_a, side_b = sides_a.pop(), sides_b.pop()
            points = {s["side"]: s["points"] or 0 for s in m["seats"]}
            games += 1
            a_points += points.get(side_a, 0)
            b_points += points.get(side_b, 0)
            if m["winner"] == side_a:
                a_wins += 1
            elif m["winner"] == side_b:
                b_wins += 1
            else:
                draws += 1
        return {
            "bot_a": a,
            "bot_b": b,
            "games": games,
            "a_wins": a_wins,
            "b_wins": b_wins,
            "draws": draws,
            "a_points": a_points,
            "b_points": b_points,
            "matches": matches[:limit],
        }
