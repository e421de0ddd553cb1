"""The public reads of ladder matches: what anyone may see of a match, its seats and its
duplicate pair; no writes (``store_matches`` writes ``ladder_matches`` and
``ladder_seats``).

A finished game whose duplicate twin is still in play is **withheld**: its result,
seats' outcomes, points and rating changes read as empty until the pair is over, in
every view (a match, a bot's matches, a request's games, every match's pages, a bot's
rating history): each of them builds its matches with ``public_match``.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy import Connection, RowMapping, and_, func, or_, select

from cirulla.ladder import endings
from cirulla.ladder.defaults import QUEUES
from cirulla.ladder.fields import shown
from cirulla.ladder.schema import (
    MATCH_STATES,
    bot_versions,
    bots,
    ladder_matches,
    ladder_seats,
    match_requests,
    rating_history,
)
from cirulla.ladder.store_bots import BotStore
from cirulla.ladder.store_rows import (
    IN_FLIGHT,
    LadderError,
    MatchTimes,
    MatchView,
    NotFound,
)

if TYPE_CHECKING:
    from cirulla.ladder.store import LadderStore

#: The page token's format: a token of another format is refused, never misread.
_TOKEN_FORMAT = 1


@dataclass(frozen=True)
class MatchPage:
    """One page of every match, newest first; ``next_token`` reads the page after it
    ("" when this page is the last)."""

    matches: list[MatchView]
    next_token: str


def _filters(queue: str | None, status: str | None, bot: str | None) -> list[str]:
    return [queue or "", status or "", bot or ""]


def page_token(created_at: float, match_id: str, filters: list[str]) -> str:
    """The cursor after the match (``created_at``, ``match_id``), for these filters:
    keyset paging, so a match scheduled later never shifts the pages after the first."""
    raw = json.dumps([_TOKEN_FORMAT, created_at, match_id, filters], separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def read_page_token(token: str, filters: list[str]) -> tuple[float, str]:
    """The (created_at, id) a page token continues after; LadderError naming the field
    for anything this ladder did not hand out with the same filters."""
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        kind, created_at, match_id, given = json.loads(raw)
        if kind != _TOKEN_FORMAT or not isinstance(match_id, str) or not match_id:
            raise ValueError
        at = float(created_at)
    except (ValueError, TypeError, binascii.Error, UnicodeDecodeError):
        raise LadderError(
            "page_token: not a token this ladder returned (pass next_page_token as it "
            "came, or nothing for the first page)"
        ) from None
    if given != filters:
        raise LadderError(
            "page_token: it was returned for other filters (queue, status, bot_name); "
            "pass the same filters with it, or start again without a token"
        )
    return at, match_id


class MatchViews:
    """Matches as the rpcs, the CLI and the other parts read them."""

    def __init__(self, ladder: LadderStore) -> None:
        self.ladder = ladder

    @staticmethod
    def pair_of(conn: Connection, match_id: str) -> str | None:
        pair: str | None = conn.execute(
            select(ladder_matches.c.pair_id).where(ladder_matches.c.id == match_id)
        ).scalar_one_or_none()
        return pair

    @staticmethod
    def pair_left(conn: Connection, pair_id: str) -> int:
        """Games of the duplicate pair ``pair_id`` not over yet."""
        return int(
            conn.execute(
                select(func.count())
                .select_from(ladder_matches)
                .where(ladder_matches.c.pair_id == pair_id, ladder_matches.c.status.in_(IN_FLIGHT))
            ).scalar_one()
        )

    def pair_in_play(self, conn: Connection, match_id: str) -> bool:
        """Whether a game of ``match_id``'s duplicate pair is not over yet."""
        pair = self.pair_of(conn, match_id)
        if not pair:
            return False
        return bool(self.pair_left(conn, pair))

    def match(self, match_id: str) -> MatchView:
        """One match as anyone may read it: no token, no seed; a finished game of a pair
        still in play has its result withheld."""
        with self.ladder.engine.connect() as conn:
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
            return self.public_match(conn, row)

    def of_request(self, conn: Connection, request_id: str) -> list[MatchView]:
        """The games of a match request, in series order (public views)."""
        return [
            self.public_match(conn, m)
            for m in conn.execute(
                select(ladder_matches)
                .where(ladder_matches.c.request_id == request_id)
                .order_by(ladder_matches.c.pair_index, ladder_matches.c.id)
            ).mappings()
        ]

    @staticmethod
    def open_games_requested_by(conn: Connection, requested_by: str) -> int:
        """Requested games of ``requested_by`` waiting or playing."""
        return int(
            conn.execute(
                select(func.count())
                .select_from(ladder_matches)
                .join(match_requests, match_requests.c.id == ladder_matches.c.request_id)
                .where(
                    match_requests.c.requested_by == requested_by,
                    ladder_matches.c.status.in_(IN_FLIGHT),
                )
            ).scalar_one()
        )

    def public_match(self, conn: Connection, row: RowMapping) -> MatchView:
        withheld = row["status"] == "finished" and self.pair_in_play(conn, row["id"])
        seats = (
            conn.execute(
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
            )
            .mappings()
            .all()
        )
        result = json.loads(row["result"]) if row["result"] and not withheld else None
        end, forfeit_kind = ("", "")
        if result is not None and row["status"] == "finished":
            end, forfeit_kind = endings.ending_of(result, seats, endings.target_of(row["settings"]))
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
            "end": end,
            "forfeit_kind": forfeit_kind,
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
    ) -> list[MatchView]:
        """Matches of a bot (optionally against ``versus``), newest first."""
        with self.ladder.engine.connect() as conn:
            bot = BotStore.row(conn, name)
            ids = select(ladder_seats.c.match_id).join(
                bot_versions, bot_versions.c.id == ladder_seats.c.version_id
            )
            query = select(ladder_matches).where(
                ladder_matches.c.id.in_(ids.where(bot_versions.c.bot_id == bot["id"]))
            )
            if versus is not None:
                other = BotStore.row(conn, versus)
                query = query.where(
                    ladder_matches.c.id.in_(ids.where(bot_versions.c.bot_id == other["id"]))
                )
            if queue:
                query = query.where(ladder_matches.c.queue == queue)
            query = query.order_by(ladder_matches.c.created_at.desc(), ladder_matches.c.id).limit(
                limit
            )
            return [self.public_match(conn, r) for r in conn.execute(query).mappings().all()]

    def every_match(
        self,
        queue: str | None = None,
        status: str | None = None,
        bot: str | None = None,
        limit: int = 50,
        token: str = "",
    ) -> MatchPage:
        """Every ladder match, newest first (scheduling time, then id), one page of at
        most ``limit``; only those of ``queue``, ``status`` and ``bot`` when given.
        ``token`` is a previous page's ``next_token``. Withheld twins as everywhere."""
        if queue and queue not in QUEUES:
            raise LadderError(f"queue: {shown(queue)} is not one of {', '.join(QUEUES)}")
        if status and status not in MATCH_STATES:
            raise LadderError(f"status: {shown(status)} is not one of {', '.join(MATCH_STATES)}")
        filters = _filters(queue, status, bot)
        after = read_page_token(token, filters) if token else None
        limit = max(1, limit)
        with self.ladder.engine.connect() as conn:
            query = select(ladder_matches)
            if bot:
                try:
                    bot_id = BotStore.row(conn, bot)["id"]
                except NotFound as exc:
                    raise LadderError(f"bot_name: {exc}") from None
                ids = (
                    select(ladder_seats.c.match_id)
                    .join(bot_versions, bot_versions.c.id == ladder_seats.c.version_id)
                    .where(bot_versions.c.bot_id == bot_id)
                )
                query = query.where(ladder_matches.c.id.in_(ids))
            if queue:
                query = query.where(ladder_matches.c.queue == queue)
            if status:
                query = query.where(ladder_matches.c.status == status)
            if after is not None:
                at, match_id = after
                query = query.where(
                    or_(
                        ladder_matches.c.created_at < at,
                        and_(ladder_matches.c.created_at == at, ladder_matches.c.id < match_id),
                    )
                )
            query = query.order_by(
                ladder_matches.c.created_at.desc(), ladder_matches.c.id.desc()
            ).limit(limit + 1)
            rows = conn.execute(query).mappings().all()
            page = [self.public_match(conn, r) for r in rows[:limit]]
        more = len(rows) > limit
        last = rows[limit - 1] if more else None
        return MatchPage(
            page,
            page_token(float(last["created_at"]), str(last["id"]), filters) if last else "",
        )

    def times(self) -> list[MatchTimes]:
        """Every match's status and times (``cirulla bench ladder``)."""
        with self.ladder.engine.connect() as conn:
            rows = conn.execute(
                select(
                    ladder_matches.c.status,
                    ladder_matches.c.rated,
                    ladder_matches.c.created_at,
                    ladder_matches.c.claimed_at,
                    ladder_matches.c.started_at,
                    ladder_matches.c.finished_at,
                )
            ).all()
        return [
            {
                "status": r.status,
                "rated": bool(r.rated),
                "created_at": r.created_at,
                "claimed_at": r.claimed_at,
                "started_at": r.started_at,
                "finished_at": r.finished_at,
            }
            for r in rows
        ]
