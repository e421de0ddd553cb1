"""The server's registry: live matches and rooms, joining seats, admin checks, persistence.

The servicer asks the hub for everything; the hub owns the store and decides which session
a stream belongs to (a room moves its seats from one finished game to the next).

A match that has ended stays in memory for ``keep_finished_s`` seconds (late spectators,
streams still saying goodbye), then only in the database: a ladder server runs for weeks,
and a finished session holds every event and position of its games.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import secrets
from typing import Any

from cirulla import PROTOCOL_VERSION, protocol_compatible
from cirulla.server.dealgroups import DealGroups, check_group
from cirulla.server.errors import (
    AlreadyExists,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    Unauthenticated,
)
from cirulla.server.session import (
    Connection,
    MatchConfig,
    MatchSession,
    new_seat_token,
    now_iso,
    public_config,
)
from cirulla.server.store import Store

log = logging.getLogger("cirulla.server")
#: Default time an ended (finished or aborted) match stays in memory, in seconds.
KEEP_FINISHED_S = 300.0
#: Match statuses after which nothing changes any more.
ENDED = ("finished", "aborted")
#: Longest AbortMatch reason accepted (it is stored and sent to every player).
MAX_ABORT_REASON = 1000


class Room:
    """Fixed settings; one game after another while every seat has a live stream."""

    def __init__(self, hub: Hub, room_id: str, name: str, config: MatchConfig) -> None:
        self.hub = hub
        self.room_id = room_id
        self.display_name = name
        self.config = dataclasses.replace(config, best_of=1, seed=None, decks=None)
        n = config.options.players
        self.tokens = [new_seat_token() for _ in range(n)]
        self.conns: list[Connection | None] = [None] * n
        self.names = [""] * n
        self.current: MatchSession | None = None
        self.spectators: set[Connection] = set()
        self.history: list[dict[str, Any]] = []
        self.create_time = now_iso()

    def seat_for_token(self, token: str) -> int:
        if not token:
            raise Unauthenticated("Hello.seat_token is empty: send the token from CreateRoom")
        for seat, t in enumerate(self.tokens):
            if secrets.compare_digest(t, token):
                return seat
        raise Unauthenticated(f"Hello.seat_token is not a token of room {self.room_id}")

    def join(
        self,
        seat: int,
        conn: Connection,
        name: str,
        version: str,
        resume: int | None,
        takeover: bool,
    ) -> None:
        old = self.conns[seat]
        if old is not None and old is not conn and not takeover:
            raise AlreadyExists(f"seat {seat} of room {self.room_id} already has a live stream")
        self.conns[seat] = conn
        self.names[seat] = name
        conn.room = self
        session = self.current
        if session is None or session.status in ("finished", "aborted"):
            session = self._next_session()
        session.attach(
            seat, conn, name=name, version=version, resume_after=resume, takeover=takeover
        )

    def leave(self, conn: Connection) -> None:
        if conn.seat is not None and self.conns[conn.seat] is conn:
            self.conns[conn.seat] = None

    def _next_session(self) -> MatchSession:
        session = self.hub.create_match(self.config, room_id=self.room_id, room=self)
        self.current = session
        for spec in self.spectators:
            session.add_spectator(spec)
        return session

    def game_finished(self, session: MatchSession) -> None:
        """Start the next game if every seat is still connected."""
        if all(c is not None and not c.closed for c in self.conns):
            nxt = self._next_session()
            for seat, conn in enumerate(self.conns):
                assert conn is not None
                nxt.attach(seat, conn, name=self.names[seat], version="", welcome=False)

    def summary(self) -> dict[str, Any]:
        n = self.config.options.players
        return {
            "room_id": self.room_id,
            "display_name": self.display_name,
            "config": public_config(self.config),
            "seats": [
                {
                    "seat": s,
                    "side": self.config.options.side_of(s),
                    "name": self.names[s],
                    "connected": self.conns[s] is not None,
                }
                for s in range(n)
            ],
            "current_match_id": self.current.match_id
            if self.current is not None and self.current.status == "in_progress"
            else "",
            "history": self.history,
            "create_time": self.create_time,
        }


class Hub:
    def __init__(
        self,
        store: Store,
        *,
        admin_token: str | None = None,
        default_grace_ms: int = 30_000,
        keep_finished_s: float = KEEP_FINISHED_S,
    ) -> None:
        self.store = store
        self.admin_token = admin_token
        self.default_grace_ms = default_grace_ms
        self.keep_finished_s = keep_finished_s
        #: Live matches, and ended ones until their eviction (``_evictions``) is due.
        self.matches: dict[str, MatchSession] = {}
        self._evictions: dict[str, asyncio.TimerHandle] = {}
        self.rooms: dict[str, Room] = {}
        self._counter = 0
        self.groups = DealGroups(store.group_members)

    # ------------------------------------------------------------------ admin

    def check_admin(self, metadata: dict[str, str]) -> None:
        """With an admin token configured, require ``authorization: Bearer TOKEN``."""
        if not self.admin_token:
            return
        value = metadata.get("authorization", "")
        if not value:
            raise Unauthenticated(
                "this server requires the admin token: send call metadata "
                "'authorization: Bearer <token>'"
            )
        scheme, _, token = value.partition(" ")
        if scheme.lower() != "bearer" or not secrets.compare_digest(
            token.strip(), self.admin_token
        ):
            raise PermissionDenied("the admin token in 'authorization' metadata is wrong")

    def is_admin(self, metadata: dict[str, str]) -> bool:
        """Whether the call carries this server's admin token (never true without one)."""
        if not self.admin_token:
            return False
        scheme, _, token = metadata.get("authorization", "").partition(" ")
        return scheme.lower() == "bearer" and secrets.compare_digest(
            token.strip().encode(), self.admin_token.encode()
        )

    # ------------------------------------------------------------------ deal groups

    def record_withheld(self, record: dict[str, Any]) -> bool:
        """Whether ``record``'s decks may still be in play in a twin (dealgroups.py)."""
        return self.groups.is_open(record.get("deal_group", ""))

    def check_record_readable(self, record: dict[str, Any], metadata: dict[str, str]) -> None:
        group = record.get("deal_group", "")
        if self.record_withheld(record) and not self.is_admin(metadata):
            raise FailedPrecondition(self.groups.withheld_message(group))

    def check_spectatable(self, session: MatchSession, metadata: dict[str, str]) -> None:
        group = session.deal_group
        if self.groups.is_open(group, excluding=session.match_id) and not self.is_admin(metadata):
            raise FailedPrecondition(
                f"match {session.match_id} cannot be watched: its deal_group {group} has "
                "other games in play that share its deck orders"
            )

    # ------------------------------------------------------------------ matches

    def _new_id(self, prefix: str) -> str:
        self._counter += 1
        return f"{prefix}-{self._counter}-{secrets.token_hex(3)}"

    def create_match(
        self,
        config: MatchConfig,
        *,
        room_id: str = "",
        room: Room | None = None,
        deal_group: str = "",
        deal_group_size: int = 0,
    ) -> MatchSession:
        problem = check_group(deal_group, deal_group_size)
        if problem:
            raise InvalidArgument(problem)
        session = MatchSession(
            self._new_id("m"),
            config,
            room_id=room_id,
            default_grace_ms=self.default_grace_ms,
            on_record=lambda record: self._record(record, room),
            on_change=self._save_match,
            on_finished=room.game_finished if room is not None else None,
            close_on_finish=room is None,
            deal_group=deal_group,
            deal_group_size=deal_group_size,
        )
        self.matches[session.match_id] = session
        if deal_group:
            self.groups.add(deal_group, deal_group_size, session.match_id, session.status)
        self._save_match(session)
        log.info(
            "match_created match=%s room=%s players=%d best_of=%d",
            session.match_id,
            room_id or "-",
            config.options.players,
            config.best_of,
        )
        return session

    def _record(self, record: dict[str, Any], room: Room | None) -> None:
        self.store.save_record(record)
        if room is not None:
            room.history.append(record_summary(record))
            self.store.save_room(room.summary())

    def _save_match(self, session: MatchSession) -> None:
        summary = session.summary()
        self.store.save_match(summary)
        self.groups.update(session.deal_group, session.match_id, summary["status"])
        if summary["status"] in ENDED:
            self._schedule_eviction(session.match_id)

    def _schedule_eviction(self, match_id: str) -> None:
        if match_id in self._evictions or match_id not in self.matches:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no server running (a script driving the hub): keep it
            return
        self._evictions[match_id] = loop.call_later(self.keep_finished_s, self._evict, match_id)

    def _evict(self, match_id: str) -> None:
        """Drop an ended match from memory; from now on the database answers for it."""
        self._evictions.pop(match_id, None)
        session = self.matches.pop(match_id, None)
        if session is not None:
            self.store.save_match(session.summary())
            log.info("match_evicted match=%s status=%s", match_id, session.status)

    def _not_live(self, match_id: str) -> FailedPrecondition | NotFound:
        """The error for a match this server no longer (or never) holds in memory."""
        stored = self.store.get_match(match_id)
        if stored is None:
            return NotFound(f"no match {match_id!r}")
        if stored["status"] in ENDED:
            return FailedPrecondition(
                f"match {match_id} is {stored['status']}: it can no longer be joined or "
                "watched (GetMatch, ListRecords and GetRecord still serve it)"
            )
        return FailedPrecondition(
            f"match {match_id} is no longer live on this server (it was "
            f"{stored['status']} when the server stopped)"
        )

    def match_summary(self, match_id: str) -> dict[str, Any]:
        session = self.matches.get(match_id)
        if session is not None:
            return session.summary()
        stored = self.store.get_match(match_id)
        if stored is None:
            raise NotFound(f"no match {match_id!r}")
        return stored

    def abort_match(self, match_id: str, reason: str) -> dict[str, Any]:
        """End a waiting or running match as aborted; its summary afterwards.

        A match only in the database (the server was restarted while it ran) is marked
        aborted there, so no match is left looking alive forever.
        """
        if not match_id:
            raise InvalidArgument("AbortMatchRequest.match_id is empty")
        if len(reason) > MAX_ABORT_REASON:
            raise InvalidArgument(
                f"AbortMatchRequest.reason has {len(reason)} characters; "
                f"at most {MAX_ABORT_REASON} are kept"
            )
        message = reason.strip() or "aborted by the server's administrator"
        session = self.matches.get(match_id)
        summary = session.summary() if session is not None else self.store.get_match(match_id)
        if summary is None:
            raise NotFound(f"no match {match_id!r}")
        if summary["status"] == "finished":
            raise FailedPrecondition(
                f"match {match_id} is finished: only a waiting or in-progress match can be aborted"
            )
        if summary["status"] == "aborted":
            return summary
        if session is not None:
            session.abort("aborted", message)
            return session.summary()
        summary = {**summary, "status": "aborted", "abort_reason": message}
        self.store.save_match(summary)
        self.groups.update(summary.get("deal_group", ""), match_id, "aborted")
        log.info("match_aborted match=%s reason=%r (not live)", match_id, message)
        return summary

    def create_room(self, name: str, config: MatchConfig) -> Room:
        room = Room(self, self._new_id("r"), name, config)
        self.rooms[room.room_id] = room
        self.store.save_room(room.summary())
        log.info("room_created room=%s players=%d", room.room_id, config.options.players)
        return room

    def room(self, room_id: str) -> Room:
        room = self.rooms.get(room_id)
        if room is None:
            raise NotFound(f"no room {room_id!r}")
        return room

    # ------------------------------------------------------------------ streams

    def join(
        self,
        conn: Connection,
        *,
        protocol_version: str,
        match_id: str,
        room_id: str,
        token: str,
        name: str,
        version: str,
        resume: int | None,
    ) -> None:
        if protocol_version and not protocol_compatible(protocol_version):
            raise FailedPrecondition(
                f"Hello.protocol_version {protocol_version!r} is not supported; "
                f"this server speaks {PROTOCOL_VERSION}"
            )
        takeover = resume is not None
        if room_id:
            room = self.room(room_id)
            room.join(room.seat_for_token(token), conn, name, version, resume, takeover)
            return
        if not match_id:
            raise NotFound("Hello names neither match_id nor room_id")
        session = self.matches.get(match_id)
        if session is None:
            raise self._not_live(match_id)
        seat = session.seat_for_token(token)
        session.attach(
            seat, conn, name=name, version=version, resume_after=resume, takeover=takeover
        )

    def leave(self, conn: Connection, *, quit: bool = False) -> None:
        if conn.room is not None:
            conn.room.leave(conn)
            conn.room.spectators.discard(conn)
        if conn.session is not None:
            conn.session.detach(conn, quit=quit)

    def spectate(
        self,
        conn: Connection,
        *,
        match_id: str,
        room_id: str,
        after: int,
        metadata: dict[str, str] | None = None,
    ) -> None:
        if room_id:
            room = self.room(room_id)
            room.spectators.add(conn)
            conn.room = room
            if room.current is not None:
                room.current.add_spectator(conn, after)
            return
        if not match_id:
            raise InvalidArgument("SpectateRequest.match_id is empty")
        session = self.matches.get(match_id)
        if session is None:
            raise self._not_live(match_id)
        self.check_spectatable(session, metadata or {})
        session.add_spectator(conn, after)

    def shutdown(self) -> None:
        for handle in self._evictions.values():
            handle.cancel()
        self._evictions.clear()
        for session in list(self.matches.values()):
            session.abort("server_shutdown", "the server is shutting down")


def record_summary(record: dict[str, Any]) -> dict[str, Any]:
    """What lists and room histories show of a record (no cards)."""
    keys = ("record_id", "match_id", "room_id", "game_number", "seats", "result", "finish_time")
    return {k: record[k] for k in keys}
