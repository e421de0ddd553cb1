"""What a bot's author may read with the bot's key (``store.authors``; writes nothing).

An author is not trusted more than anyone else: the key lets them read their own bot's
life and nothing more, as aiarena and Kaggle give authors: its state changes
(``bot_events``, written by ``store_bots``), and for its own **finished** games the
seats it played and where their logs lie, never a game of another bot, never a game
still in play, and never the first game of a duplicate pair while its twin is played
(its logs and record show hands that are the opponent's in the twin: withheld means
withheld, here too). The key is checked against its SHA-256 (``bots.author_key_hash``,
or for a connect-in bot registered before author keys existed its Enroll key).
"""

from __future__ import annotations

import json
import secrets
from typing import TYPE_CHECKING, TypedDict

from sqlalchemy import Connection, RowMapping, and_, select

from cirulla.ladder.fields import shown
from cirulla.ladder.schema import bot_events, bot_versions, bots, ladder_matches, ladder_seats
from cirulla.ladder.store_bots import BotStore
from cirulla.ladder.store_rows import LadderError, MatchView, NotFound, Refused, hash_key

if TYPE_CHECKING:
    from cirulla.ladder.store import LadderStore


class Withheld(LadderError):
    """The game is not over, or its duplicate twin is still being played."""


class BotEvent(TypedDict):
    """One state change of a bot."""

    id: int
    bot: str
    version: int
    at: float
    state: str
    reason: str


class OwnSeat(TypedDict):
    """A seat the author's bot played in one of its finished games."""

    seat: int
    #: its log, relative to the data folder of the ladder process that played it
    log: str


class OwnMatch(TypedDict):
    """A finished, not withheld game of the author's bot, with its seats in it."""

    match: MatchView
    server_match_id: str
    seats: list[OwnSeat]


class AuthorViews:
    """The reads an author's key opens, each for that one bot."""

    def __init__(self, ladder: LadderStore) -> None:
        self.ladder = ladder

    def check_key(self, name: str, key: str) -> None:
        """Refused (one line naming the field) unless ``key`` is ``name``'s key."""
        with self.ladder.engine.connect() as conn:
            bot = BotStore.row(conn, name)
        given = hash_key(key) if key else ""
        if not given or not any(
            stored and secrets.compare_digest(stored, given)
            for stored in (bot["author_key_hash"], bot["bot_key_hash"])
        ):
            raise Refused(f"authorization: not the key of bot {shown(name)}")

    def events(self, name: str, limit: int = 100) -> list[BotEvent]:
        """The bot's state changes, newest first."""
        with self.ladder.engine.connect() as conn:
            bot = BotStore.row(conn, name)
            rows = conn.execute(
                select(bot_events)
                .where(bot_events.c.bot_id == bot["id"])
                .order_by(bot_events.c.id.desc())
                .limit(limit)
            ).mappings()
            return [_event(r, name) for r in rows]

    def events_after(self, last_id: int, state: str = "deactivated") -> list[BotEvent]:
        """Every bot's ``state`` changes after event ``last_id``, oldest first (the
        webhook's feed: whichever ladder process wrote them)."""
        with self.ladder.engine.connect() as conn:
            rows = conn.execute(
                select(bot_events, bots.c.name)
                .join(bots, bots.c.id == bot_events.c.bot_id)
                .where(bot_events.c.id > last_id, bot_events.c.state == state)
                .order_by(bot_events.c.id)
                .limit(100)
            ).mappings()
            return [_event(r, r["name"]) for r in rows]

    def last_event_id(self) -> int:
        with self.ladder.engine.connect() as conn:
            rows = conn.execute(
                select(bot_events.c.id).order_by(bot_events.c.id.desc()).limit(1)
            ).scalar_one_or_none()
        return int(rows or 0)

    def own_match(self, name: str, match_id: str) -> OwnMatch:
        """One finished game of the bot: Refused for a game it did not play, Withheld for
        one not over or whose twin is still played."""
        with self.ladder.engine.connect() as conn:
            bot = BotStore.row(conn, name)
            row = (
                conn.execute(
                    select(ladder_matches).where(
                        (ladder_matches.c.id == match_id)
                        | (ladder_matches.c.server_match_id == match_id)
                    )
                )
                .mappings()
                .first()
            )
            if row is None:
                raise NotFound(f"match_id: no ladder match {shown(match_id)}")
            seats = self._seats_of(conn, row, bot["id"])
            if not seats:
                raise Refused(f"match_id: bot {shown(name)} has no seat in {shown(row['id'])}")
            if row["status"] != "finished":
                raise Withheld(f"match_id: {shown(row['id'])} is {row['status']}, not finished")
            if self.ladder.views.pair_in_play(conn, row["id"]):
                raise Withheld(
                    f"match_id: {shown(row['id'])} is withheld until the other game of its "
                    "duplicate pair is over"
                )
            return {
                "match": self.ladder.views.public_match(conn, row),
                "server_match_id": row["server_match_id"] or "",
                "seats": seats,
            }

    def own_matches(self, name: str, limit: int = 20) -> list[OwnMatch]:
        """The bot's finished games, newest first, those withheld left out."""
        with self.ladder.engine.connect() as conn:
            bot = BotStore.row(conn, name)
            mine = (
                select(ladder_seats.c.match_id)
                .join(bot_versions, bot_versions.c.id == ladder_seats.c.version_id)
                .where(bot_versions.c.bot_id == bot["id"])
            )
            rows = conn.execute(
                select(ladder_matches)
                .where(ladder_matches.c.id.in_(mine), ladder_matches.c.status == "finished")
                .order_by(ladder_matches.c.finished_at.desc(), ladder_matches.c.id.desc())
                .limit(limit + 10)
            ).mappings()
            out: list[OwnMatch] = []
            for row in rows:
                if len(out) >= limit:
                    break
                if self.ladder.views.pair_in_play(conn, row["id"]):
                    continue
                out.append(
                    {
                        "match": self.ladder.views.public_match(conn, row),
                        "server_match_id": row["server_match_id"] or "",
                        "seats": self._seats_of(conn, row, bot["id"]),
                    }
                )
            return out

    @staticmethod
    def _seats_of(conn: Connection, row: RowMapping, bot_id: int) -> list[OwnSeat]:
        match = dict(row)
        result = json.loads(match["result"] or "{}") if match.get("result") else {}
        logs = list(result.get("logs") or ())
        rows = conn.execute(
            select(ladder_seats.c.seat)
            .join(
                bot_versions,
                and_(
                    bot_versions.c.id == ladder_seats.c.version_id,
                    bot_versions.c.bot_id == bot_id,
                ),
            )
            .where(ladder_seats.c.match_id == match["id"])
            .order_by(ladder_seats.c.seat)
        ).all()
        seats = [int(r[0]) for r in rows]
        return [{"seat": n, "log": logs[n] if n < len(logs) else ""} for n in seats]


def _event(row: RowMapping, name: str) -> BotEvent:
    r = dict(row)
    return {
        "id": r["id"],
        "bot": name,
        "version": r["version"],
        "at": r["at"],
        "state": r["state"],
        "reason": r["reason"],
    }
