"""Bots and their versions: the only writer of ``bots`` and ``bot_versions``.

A version's first ratings (``store_results``) and a connect-in bot's enrollments
(``store_enrollments``) are written by their own parts, inside this part's transactions
when they belong to the same change (a new version and its ratings are one commit).
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from typing import TYPE_CHECKING

from sqlalchemy import Connection, RowMapping, and_, func, insert, select, update

from cirulla.bots.botspec import BotSpec
from cirulla.bots.cgroups import parse_limits
from cirulla.ladder import rating
from cirulla.ladder.fields import (
    MAX_CONCURRENCY,
    MAX_REASON,
    MAX_SPEC,
    FieldError,
    check_count,
    check_name,
    check_text,
    shown,
)
from cirulla.ladder.metrics import DEACTIVATIONS
from cirulla.ladder.schema import (
    bot_events,
    bot_versions,
    bots,
    enrollments,
    ladder_matches,
    ladder_seats,
    ratings,
)
from cirulla.ladder.store_rows import (
    CONNECT_SPEC,
    DEFAULT_CONCURRENCY,
    ENROLLMENT_TIMEOUT,
    FAILURES_TO_DEACTIVATE,
    FAULTS,
    IN_FLIGHT,
    LOG_TAIL_CHARS,
    VALIDATION_GAMES,
    BotInfo,
    Candidate,
    LadderError,
    NotFound,
    Refused,
    SeatOutcome,
    hash_key,
    new_key,
    parse_queues,
)

if TYPE_CHECKING:
    from cirulla.ladder.store import LadderStore


class BotStore:
    """Registering, pausing and reading bots; their failure counts and validation games."""

    def __init__(self, ladder: LadderStore) -> None:
        self.ladder = ladder

    def add_bot(
        self,
        name: str,
        spec: str,
        queues: Sequence[str] = ("2p",),
        max_concurrency: int = 0,
        *,
        only_new: bool = False,
        limits: str = "",
    ) -> tuple[BotInfo, bool, str]:
        """Register ``name`` or give it a new version; returns (bot, new_version, key).

        ``key`` is the bot's key, generated when the bot is first registered (only its
        hash is stored), else empty: its author's key (``author_key_hash``: reading its
        logs, records and state changes) and, for a connect-in bot, its Enroll key too.
        The same spec and queues again change nothing; a removed bot registered again
        comes back active.
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
            try:  # parsed where it enters; stored as the parsed spec's canonical text
                spec = str(BotSpec.parse(spec))
            except ValueError as exc:
                raise LadderError(f"spec: {exc}") from None
        queue_text = ",".join(parse_queues(queues))
        limits = check_limits(limits, spec)
        if max_concurrency < 0:
            raise LadderError(
                f"max_concurrency: must be 0 (default) or more, not {max_concurrency}"
            )
        now = self.ladder.now()
        key = ""
        with self.ladder.engine.begin() as conn:
            bot = conn.execute(select(bots).where(bots.c.name == name)).mappings().first()
            if bot is None:
                key = new_key()
                bot_id: int = conn.execute(
                    insert(bots).values(
                        name=name,
                        created_at=now,
                        state="active",
                        state_reason="",
                        bot_key_hash=hash_key(key) if spec == CONNECT_SPEC else None,
                        author_key_hash=hash_key(key),
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
                previous = self.current_version(conn, bot_id)
                changes: dict[str, object] = {}
                if max_concurrency and max_concurrency != bot["max_concurrency"]:
                    changes["max_concurrency"] = max_concurrency
                if bot["state"] == "removed":
                    changes.update(state="active", state_reason="")
                if spec == CONNECT_SPEC and bot["bot_key_hash"] is None:
                    key = new_key()
                    changes["bot_key_hash"] = hash_key(key)
                    if bot["author_key_hash"] is None:
                        changes["author_key_hash"] = hash_key(key)
                if bot["state"] == "removed":
                    self.record_event(conn, bot_id, 0, "active", "registered again", now)
                if changes:
                    conn.execute(update(bots).where(bots.c.id == bot_id).values(**changes))
                if (
                    previous is not None
                    and previous["spec"] == spec
                    and previous["queues"] == queue_text
                    and previous["limits"] == limits
                ):
                    return self.info(conn, bot_id), False, key
            version = 1 if previous is None else previous["version"] + 1
            version_id: int = conn.execute(
                insert(bot_versions).values(
                    bot_id=bot_id,
                    version=version,
                    spec=spec,
                    limits=limits,
                    queues=queue_text,
                    created_at=now,
                    validation_games_left=VALIDATION_GAMES,
                    consecutive_failures=0,
                    last_failure="",
                    last_log="",
                )
            ).inserted_primary_key[0]  # type: ignore[index]
            self.ladder.results.start_version(
                conn, version_id, previous["id"] if previous is not None else None, queue_text
            )
            if bot is not None and bot["state"] == "deactivated":
                # a new version is a new chance
                conn.execute(
                    update(bots).where(bots.c.id == bot_id).values(state="active", state_reason="")
                )
            what = "registered" if previous is None else "new-version"
            self.record_event(conn, bot_id, version, what, spec, now)
            return self.info(conn, bot_id), True, key

    def set_state(self, name: str, state: str, reason: str = "") -> BotInfo:
        """Pause, resume (``active``), remove or deactivate a bot."""
        try:
            check_text("reason", reason, MAX_REASON)
        except FieldError as exc:
            raise LadderError(str(exc)) from None
        with self.ladder.engine.begin() as conn:
            bot = self.row(conn, name)
            if bot["state"] == "removed" and state != "removed":
                raise LadderError(
                    f"bot {shown(name)} was removed; register it again with `cirulla ladder add`"
                )
            conn.execute(
                update(bots)
                .where(bots.c.id == bot["id"])
                .values(state=state, state_reason="" if state == "active" else reason)
            )
            if state != bot["state"]:
                self.record_event(conn, bot["id"], 0, state, reason, self.ladder.now())
            if state == "active":
                conn.execute(
                    update(bot_versions)
                    .where(bot_versions.c.bot_id == bot["id"])
                    .values(consecutive_failures=0)
                )
            return self.info(conn, bot["id"])

    def check_bot_key(self, name: str, key: str) -> BotInfo | None:
        """The bot if ``key`` is its connect-in key, else None (for Enroll)."""
        with self.ladder.engine.connect() as conn:
            bot = conn.execute(select(bots).where(bots.c.name == name)).mappings().first()
            if bot is None or not key_matches(bot, key):
                return None
            return self.info(conn, bot["id"])

    def get_bot(self, name: str) -> BotInfo:
        with self.ladder.engine.connect() as conn:
            return self.info(conn, self.row(conn, name)["id"])

    def list_bots(self) -> list[BotInfo]:
        with self.ladder.engine.connect() as conn:
            ids: list[int] = list(
                conn.execute(select(bots.c.id).order_by(bots.c.id)).scalars().all()
            )
            return [self.info(conn, i) for i in ids]

    def bot_state(self, bot_id: int) -> tuple[str, int]:
        """(state, current version number) of the bot (an enrolled bot's stream)."""
        with self.ladder.engine.connect() as conn:
            state: str = conn.execute(select(bots.c.state).where(bots.c.id == bot_id)).scalar_one()
            version = conn.execute(
                select(bot_versions.c.version)
                .where(bot_versions.c.bot_id == bot_id)
                .order_by(bot_versions.c.version.desc())
                .limit(1)
            ).scalar_one_or_none()
        return str(state), int(version or 0)

    def rotate_author_key(self, name: str) -> str:
        """A new author key for ``name`` (the admin's ``rotate-key``): the old one stops
        working at once. A connect-in bot enrolls with the same key, so its Enroll key is
        replaced too (its open stream goes on; it enrolls next time with the new key)."""
        key = new_key()
        with self.ladder.engine.begin() as conn:
            bot = self.row(conn, name)
            changes = {"author_key_hash": hash_key(key)}
            if bot["bot_key_hash"] is not None:
                changes["bot_key_hash"] = hash_key(key)
            conn.execute(update(bots).where(bots.c.id == bot["id"]).values(**changes))
            self.record_event(conn, bot["id"], 0, "key-rotated", "", self.ladder.now())
        return key

    # -- inside other parts' transactions ---------------------------------------------

    @staticmethod
    def record_event(
        conn: Connection, bot_id: int, version: int, state: str, reason: str, at: float
    ) -> None:
        """One state change of a bot (``bot_events``), in the transaction that makes it:
        its author reads them, and ``ladder serve --webhook`` follows the deactivations."""
        if not version:
            version = (
                conn.execute(
                    select(func.max(bot_versions.c.version)).where(bot_versions.c.bot_id == bot_id)
                ).scalar_one_or_none()
                or 0
            )
        conn.execute(
            insert(bot_events).values(
                bot_id=bot_id, version=version, at=at, state=state, reason=reason[:MAX_REASON]
            )
        )

    @staticmethod
    def row(conn: Connection, name: str) -> RowMapping:
        """The ``bots`` row named ``name``; NotFound otherwise."""
        bot = conn.execute(select(bots).where(bots.c.name == name)).mappings().first()
        if bot is None:
            raise NotFound(f"no bot named {shown(name)} on this ladder")
        return bot

    @staticmethod
    def current_version(conn: Connection, bot_id: int) -> RowMapping | None:
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

    def info(self, conn: Connection, bot_id: int) -> BotInfo:
        """A bot with its current version, as the rpcs and the CLI show it."""
        bot = conn.execute(select(bots).where(bots.c.id == bot_id)).mappings().one()
        version = self.current_version(conn, bot_id)
        last_log = version["last_log"] if version is not None else ""
        if (
            version is not None
            and last_log
            and version["last_log_match_id"]
            and self.ladder.views.pair_in_play(conn, version["last_log_match_id"])
        ):
            last_log = "(withheld until the other game of its duplicate pair is over)"
        connect_in = bot["bot_key_hash"] is not None
        offline = connect_in and (
            conn.execute(
                select(func.count())
                .select_from(enrollments)
                .where(
                    enrollments.c.bot_id == bot_id,
                    enrollments.c.heartbeat_at >= self.ladder.now() - ENROLLMENT_TIMEOUT,
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
            "offline": offline,
            "version_id": version["id"] if version is not None else None,
            "version": version["version"] if version is not None else 0,
            "spec": version["spec"] if version is not None else "",
            "limits": version["limits"] if version is not None else "",
            "queues": version["queues"].split(",") if version is not None else [],
            "validation_games_left": version["validation_games_left"] if version else 0,
            "consecutive_failures": version["consecutive_failures"] if version else 0,
            "last_failure": version["last_failure"] if version else "",
            "last_log": last_log,
        }

    @staticmethod
    def lock_versions(conn: Connection, version_ids: set[int]) -> None:
        """Lock bot versions in id order before writing their failure counts and ratings:
        two results touching the same bots at once (two workers on PostgreSQL) then run
        one after the other, always locking in the same order, so they neither deadlock
        nor rate from the same old rating. (SQLite has a single writer anyway.)"""
        conn.execute(
            select(bot_versions.c.id)
            .where(bot_versions.c.id.in_(sorted(version_ids)))
            .order_by(bot_versions.c.id)
            .with_for_update()
        )

    def count_failure(
        self,
        conn: Connection,
        seat: RowMapping,
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
                self.ladder.enrollments.drop_bot(conn, seat["bot_id"])
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
                    DEACTIVATIONS.inc()
                    self.record_event(
                        conn,
                        seat["bot_id"],
                        version["version"],
                        "deactivated",
                        f"{failures} failures in a row; last: {what}",
                        self.ladder.now(),
                    )
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

    # -- matchmaking inputs ----------------------------------------------------------

    def candidates(self, queue: str, need: int = 1) -> list[Candidate]:
        """Active bots whose current version plays ``queue`` and has room for ``need``
        more scheduled games: fewer than ``max(limit, need)`` games scheduled, claimed
        or running (``claim`` enforces the limit itself on the games being played)."""
        now = self.ladder.now()
        with self.ladder.engine.connect() as conn:
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


def check_limits(text: str, spec: str) -> str:
    """A version's own limits, checked (``parse_limits``) and normalized; empty: the
    defaults. A connect-in bot runs elsewhere: limits are refused for it."""
    text = (text or "").strip()
    if not text:
        return ""
    if spec == CONNECT_SPEC:
        raise LadderError("limits: a connect-in bot runs on its own machine, not in a sandbox")
    try:
        return parse_limits(text).text(all_keys=True)
    except ValueError as exc:
        raise LadderError(f"limits: {exc}") from None


def key_matches(bot: RowMapping | None, key: str | None) -> bool:
    """Whether ``key`` is the connect-in key of the ``bots`` row ``bot``."""
    if bot is None or not bot["bot_key_hash"] or not key:
        return False
    return secrets.compare_digest(bot["bot_key_hash"], hash_key(key))
