"""The server's registry: live matches and rooms, joining seats, persistence.

The servicer asks the hub for everything; the hub owns the store and decides which session
a stream belongs to (a room moves its seats from one finished game to the next).

A match that has ended stays in memory for ``keep_finished_s`` seconds (late spectators,
streams still saying goodbye), then only in the database: a ladder server runs for weeks,
and a finished session holds every event and position of its games. Ended matches are
also kept by count and by size (``Limits.keep_finished_matches`` and
``keep_finished_events``), oldest out first, so a server playing many short games at once
does not hold minutes of them: its memory does not grow with the games it has played.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import logging
import secrets
import sqlite3
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from cirulla.logs import quote
from cirulla.rules.cards import NUM_CARDS
from cirulla.server import metrics
from cirulla.server.admission import check_identity, seat_of_token
from cirulla.server.authorization import Authorization
from cirulla.server.connections import Connection, new_seat_token
from cirulla.server.dealgroups import DealGroups, check_group
from cirulla.server.documents import (
    MatchSummary,
    RecordSummary,
    RoomSummary,
    record_summary,
)
from cirulla.server.errors import (
    AlreadyExists,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    ResourceExhausted,
)
from cirulla.server.limits import (
    MAX_ID,
    MAX_NAME,
    MAX_PROTOCOL_VERSION,
    MAX_REASON,
    MAX_TOKEN,
    MAX_VERSION,
    Limits,
    check_text,
)
from cirulla.server.match_config import MatchConfig, public_config
from cirulla.server.recordkeeping import now_iso
from cirulla.server.session import MatchSession, RecordBuilder
from cirulla.server.store import Store
from cirulla.version import PROTOCOL_VERSION, protocol_compatible

log = logging.getLogger("cirulla.server")
#: Default time an ended (finished or aborted) match stays in memory, in seconds.
KEEP_FINISHED_S = 300.0
#: Abort reason of the matches a previous server process left waiting or running.
INTERRUPTED = "the server stopped while this match was waiting or in progress"
#: Match statuses after which nothing changes any more.
ENDED = ("finished", "aborted")


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
        self.versions = [""] * n
        self.current: MatchSession | None = None
        self.spectators: set[Connection] = set()
        self.history: list[RecordSummary] = []
        self.create_time = now_iso()
        self.idle_since = time.monotonic()  # no seat connected since

    def seat_for_token(self, token: str) -> int:
        return seat_of_token(
            self.tokens, token, created_by="CreateRoom", holder=f"room {self.room_id}"
        )

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
        session = self.current
        if session is not None and session.settled_status() not in ENDED:
            check_identity(session.seats[seat], seat, name, version)  # before any change
        self.conns[seat] = conn
        self.names[seat] = name or self.names[seat]
        self.versions[seat] = version or self.versions[seat]
        conn.room = self
        if session is None or session.settled_status() in ENDED:
            session = self._next_session()
        session.attach(
            seat, conn, name=name, version=version, resume_after=resume, takeover=takeover
        )

    def leave(self, conn: Connection) -> None:
        if conn.seat is not None and self.conns[conn.seat] is conn:
            self.conns[conn.seat] = None
            if all(c is None for c in self.conns):
                self.idle_since = time.monotonic()
                if self.hub.limits.room_idle_s > 0:
                    self.hub._later(self.hub.limits.room_idle_s, self.hub._room_idle, self.room_id)

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
                nxt.attach(
                    seat, conn, name=self.names[seat], version=self.versions[seat], welcome=False
                )

    def summary(self) -> RoomSummary:
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
            if self.current is not None and self.current.settled_status() == "in_progress"
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
        limits: Limits | None = None,
    ) -> None:
        self.store = store
        self.limits = limits or Limits()
        #: Counts of notable events (slow consumers dropped, undecodable frames, ...).
        self.stats: collections.Counter[str] = collections.Counter()
        #: One thread builds and writes records, in the order the games ended.
        self._writer = ThreadPoolExecutor(1, thread_name_prefix="cirulla-records")
        self._pending: set[asyncio.Future[RecordSummary | None]] = set()
        self.default_grace_ms = default_grace_ms
        self.keep_finished_s = keep_finished_s
        #: Live matches, and ended ones until their eviction (``_evictions``) is due.
        self.matches: dict[str, MatchSession] = {}
        self._evictions: dict[str, asyncio.TimerHandle] = {}
        #: The ended matches still in memory, oldest first, with their events held.
        self._ended: collections.OrderedDict[str, int] = collections.OrderedDict()
        self._ended_events = 0
        self.rooms: dict[str, Room] = {}
        # Ids go on from the matches already stored, so a restart never reuses one.
        self._counter = store.count_matches()
        interrupted = store.abort_interrupted(INTERRUPTED)
        if interrupted:
            log.info("matches_interrupted count=%d aborted (server restart)", len(interrupted))
        self.groups = DealGroups(store.group_members)
        #: Who may do what (the admin token, creation rates, aborts, twins withheld).
        self.auth = Authorization(admin_token, self.limits, self.groups, self.stats)

    # ------------------------------------------------------------------ access

    def check_create(self, metadata: dict[str, str], peer: str) -> None:
        """May this caller create a match or room now (``authorization``)?"""
        # a copy: settling a pending move may end its match, and evict it
        live = sum(1 for m in list(self.matches.values()) if m.settled_status() not in ENDED)
        self.auth.check_create(metadata, peer, live)

    def check_abort(self, metadata: dict[str, str], match_id: str) -> None:
        """May this caller abort ``match_id`` (``authorization``)?"""
        session = self.matches.get(match_id)
        if session is None:
            stored = self.store.get_match(match_id) if len(match_id) <= MAX_ID else None
            unended = stored is not None and stored["status"] not in ENDED
            self.auth.check_abort(metadata, match_id, None, unended)
            return
        self.auth.check_abort(metadata, match_id, self._tokens(session), False)

    def _tokens(self, session: MatchSession) -> list[str]:
        """The seat tokens that prove a caller created ``session``: its own, its room's."""
        room = self.rooms.get(session.room_id)
        return session.tokens + (room.tokens if room is not None else [])

    def check_match_readable(
        self, metadata: dict[str, str], match_id: str, summary: MatchSummary | None = None
    ) -> None:
        """Refuse the summary of a withheld twin to this caller (``authorization``);
        ``summary``: the match's, when the caller has it already."""
        session = self.matches.get(match_id)
        if summary is None:
            if session is not None:
                summary = session.summary()
            elif len(match_id) <= MAX_ID:
                summary = self.store.get_match(match_id)
        if summary is not None:
            tokens = self._tokens(session) if session is not None else None
            self.auth.check_match_readable(summary, metadata, tokens)

    # ------------------------------------------------------------------ matches

    def _new_id(self, prefix: str) -> str:
        """``m-<n>-<8 hex>``: n counts on across restarts; the store refuses a taken id."""
        self._counter += 1
        return f"{prefix}-{self._counter}-{secrets.token_hex(4)}"

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
        self.check_deck_cards(len(config.decks or b""))
        match_id = self._new_id("m")
        while match_id in self.matches or self.store.get_match(match_id) is not None:
            match_id = self._new_id("m")
        session = MatchSession(
            match_id,
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
        if not self.store.insert_match(session.summary()):
            raise FailedPrecondition(f"match id {match_id} is already stored; try again")
        self.matches[session.match_id] = session
        if room is None and self.limits.waiting_timeout_s > 0:
            self._later(self.limits.waiting_timeout_s, self._expire_waiting, match_id)
        if deal_group:
            self.groups.add(deal_group, deal_group_size, session.match_id, session.status)
            self._withhold_twins(deal_group, session.match_id)
        log.info(
            "match_created match=%s room=%s players=%d best_of=%d",
            session.match_id,
            room_id or "-",
            config.options.players,
            config.best_of,
        )
        return session

    def check_deck_cards(self, cards: int) -> None:
        """Refuse ``cards`` more explicit deck cards past ``Limits.max_deck_cards``: the
        ones the waiting and running matches hold (a CreateMatch of 1,050 decks, 255 KB,
        makes a match of 42 KB of them; 5,000 such matches would hold 210 MB)."""
        if not cards:
            return
        held = sum(
            len(m.config.decks)
            for m in list(self.matches.values())
            if m.config.decks and m.settled_status() not in ENDED
        )
        limit = self.limits.max_deck_cards
        if held + cards > limit:
            self.stats["creations_refused"] += 1
            raise ResourceExhausted(
                f"MatchSettings.deck_orders: {cards // NUM_CARDS} decks would take the explicit "
                f"deck cards of the live matches from {held} to {held + cards}, over the server's "
                f"limit of {limit} (--max-deck-cards); retry later, or deal from a seed"
            )

    def _withhold_twins(self, group: str, new_id: str) -> None:
        """A new member reopens ``group``: the live twins' spectators (but the admin's)
        stop watching, as a new spectator would be refused. Their public events show the
        cards of deck orders the new match is yet to deal."""
        for match_id in self.groups.member_ids(group):
            twin = self.matches.get(match_id)
            if match_id != new_id and twin is not None and twin.delivery.spectators:
                twin.settle()
                twin.delivery.close_spectators(
                    "aborted",
                    f"match {match_id} can no longer be watched: match {new_id} of its "
                    f"deal_group {group} shares its deck orders and is yet to be played",
                )

    def _record(self, build: RecordBuilder, room: Room | None) -> None:
        """Build and store a finished game's record on the writer thread.

        Building a record (every event of the game) and writing it takes milliseconds;
        on the event loop that would stall every other match's decisions. The loop only
        keeps the pending write, which ``records_written`` awaits before a read.
        """
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no server running (a script driving the hub): write now
            self._recorded(self._write_record(build), room)
            return
        future = loop.run_in_executor(self._writer, self._write_record, build)
        self._pending.add(future)

        def done(future: asyncio.Future[RecordSummary | None]) -> None:
            self._pending.discard(future)
            if not future.cancelled() and future.exception() is None:
                self._recorded(future.result(), room)

        future.add_done_callback(done)

    def _write_record(self, build: RecordBuilder) -> RecordSummary | None:
        """(writer thread) The record's summary once stored; None if it was refused."""
        record, text = build()  # (the record without its entries, its whole JSON)
        try:
            self.store.save_record_text(record, text)
        except sqlite3.IntegrityError:
            log.error("record_conflict record=%s: already stored, kept", record["record_id"])
            return None
        metrics.record_written()
        return record_summary(record)

    def _recorded(self, summary: RecordSummary | None, room: Room | None) -> None:
        if room is not None and summary is not None:
            room.history.append(summary)
            del room.history[: -self.limits.room_history]  # older games: in ListRecords
            self.store.save_room(room.summary())

    async def records_written(self) -> None:
        """Wait until every finished game so far is in the database."""
        while self._pending:
            await asyncio.gather(*list(self._pending), return_exceptions=True)

    @staticmethod
    def _later(delay: float, callback: Callable[[str], None], key: str) -> None:
        """Run ``callback(key)`` (a match or room id) after ``delay`` s (nothing without a
        running loop: a script driving the hub directly keeps everything)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        loop.call_later(delay, callback, key)

    def _expire_waiting(self, match_id: str) -> None:
        """Abort a match whose players never all came (an open server would fill up)."""
        session = self.matches.get(match_id)
        if session is not None and session.settled_status() == "waiting":
            self.stats["waiting_expired"] += 1
            session.abort(
                "aborted",
                f"not every seat joined within {self.limits.waiting_timeout_s:g} s",
            )

    def _room_idle(self, room_id: str) -> None:
        """Drop a room nobody is connected to from memory (the database keeps it)."""
        room = self.rooms.get(room_id)
        if room is None or any(c is not None for c in room.conns):
            return
        idle = time.monotonic() - room.idle_since
        if idle < self.limits.room_idle_s:
            self._later(self.limits.room_idle_s - idle, self._room_idle, room_id)
            return
        del self.rooms[room_id]
        for spec in list(room.spectators):
            spec.close("aborted", f"room {room_id} was closed after being idle")
        if room.current is not None and room.current.settled_status() == "waiting":
            room.current.abort("aborted", f"room {room_id} was closed after being idle")
        self.stats["rooms_evicted"] += 1
        log.info("room_evicted room=%s games=%d", room_id, len(room.history))

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
        held = sum(len(run.events) for run in self.matches[match_id].runs)
        self._ended[match_id] = held
        self._ended_events += held
        limits = self.limits
        while self._ended and (
            len(self._ended) > limits.keep_finished_matches
            or self._ended_events > limits.keep_finished_events
        ):
            self._evict(next(iter(self._ended)))

    def _evict(self, match_id: str) -> None:
        """Drop an ended match from memory; from now on the database answers for it."""
        timer = self._evictions.pop(match_id, None)
        if timer is not None:
            timer.cancel()
        self._ended_events -= self._ended.pop(match_id, 0)
        session = self.matches.pop(match_id, None)
        if session is not None:
            self.store.save_match(session.summary())
            log.info("match_evicted match=%s status=%s", match_id, session.status)

    def _live(self, match_id: str) -> MatchSession:
        """The live session of ``match_id``; raises the error for a match this server no
        longer (or never) holds in memory."""
        session = self.matches.get(match_id)
        if session is not None:
            return session
        stored = self.store.get_match(match_id)
        if stored is None:
            raise NotFound(f"no match {match_id!r}")
        if self.auth.match_withheld(stored):  # its status would tell when it ended
            raise FailedPrecondition(
                f"match {match_id} is not live on this server (and withheld: its "
                "deal_group has other games in play)"
            )
        if stored["status"] in ENDED:
            raise FailedPrecondition(
                f"match {match_id} is {stored['status']}: it can no longer be joined or "
                "watched (GetMatch, ListRecords and GetRecord still serve it)"
            )
        raise FailedPrecondition(
            f"match {match_id} is no longer live on this server (it was "
            f"{stored['status']} when the server stopped)"
        )

    def match_summary(self, match_id: str) -> MatchSummary:
        check_text(match_id, "GetMatchRequest.match_id", MAX_ID)
        session = self.matches.get(match_id)
        if session is not None:
            return session.summary()
        stored = self.store.get_match(match_id)
        if stored is None:
            raise NotFound(f"no match {match_id!r}")
        return stored

    def abort_match(self, match_id: str, reason: str) -> MatchSummary:
        """End a waiting or running match as aborted; its summary afterwards.

        A match only in the database (the server was restarted while it ran) is marked
        aborted there, so no match is left looking alive forever.
        """
        if not match_id:
            raise InvalidArgument("AbortMatchRequest.match_id is empty")
        check_text(match_id, "AbortMatchRequest.match_id", MAX_ID)
        check_text(reason, "AbortMatchRequest.reason", MAX_REASON, printable=True)
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
        summary = {**summary, "status": "aborted", "abort_reason": message}  # a copy
        self.store.save_match(summary)
        self.groups.update(summary.get("deal_group", ""), match_id, "aborted")
        log.info("match_aborted match=%s reason=%s live=False", match_id, quote(message))
        return summary

    def create_room(self, name: str, config: MatchConfig) -> Room:
        check_text(name, "CreateRoomRequest.display_name", MAX_NAME, printable=True)
        if len(self.rooms) >= self.limits.max_rooms:
            self.stats["creations_refused"] += 1
            raise ResourceExhausted(
                f"the server holds {len(self.rooms)} rooms, its limit (--max-rooms); retry "
                f"later (a room nobody is connected to leaves after --room-idle, "
                f"{self.limits.room_idle_s:g} s)"
            )
        room = Room(self, self._new_id("r"), name, config)
        self.rooms[room.room_id] = room
        if self.limits.room_idle_s > 0:
            self._later(self.limits.room_idle_s, self._room_idle, room.room_id)
        self.store.save_room(room.summary())
        log.info("room_created room=%s players=%d", room.room_id, config.options.players)
        return room

    def room(self, room_id: str, field: str = "room_id") -> Room:
        check_text(room_id, field, MAX_ID)
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
        for value, field, limit, shown in (
            (protocol_version, "protocol_version", MAX_PROTOCOL_VERSION, False),
            (match_id, "match_id", MAX_ID, False),
            (room_id, "room_id", MAX_ID, False),
            (token, "seat_token", MAX_TOKEN, False),
            (name, "name", MAX_NAME, True),
            (version, "version", MAX_VERSION, True),
        ):
            check_text(value, f"Hello.{field}", limit, printable=shown)
        if protocol_version and not protocol_compatible(protocol_version):
            raise FailedPrecondition(
                f"Hello.protocol_version {protocol_version!r} is not supported; "
                f"this server speaks {PROTOCOL_VERSION}"
            )
        takeover = resume is not None
        if room_id:
            room = self.room(room_id, "Hello.room_id")
            room.join(room.seat_for_token(token), conn, name, version, resume, takeover)
            return
        if not match_id:
            raise NotFound("Hello names neither match_id nor room_id")
        session = self._live(match_id)
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
        check_text(match_id, "SpectateRequest.match_id", MAX_ID)
        if room_id:
            room = self.room(room_id, "SpectateRequest.room_id")
            room.spectators.add(conn)
            conn.room = room
            if room.current is not None:
                room.current.add_spectator(conn, after)
            return
        if not match_id:
            raise InvalidArgument("SpectateRequest.match_id is empty")
        session = self._live(match_id)
        self.auth.check_spectatable(session.match_id, session.deal_group, metadata or {})
        conn.trusted = self.auth.is_admin(metadata or {})
        session.add_spectator(conn, after)

    def close(self) -> None:
        """After ``records_written``: stop the writer thread."""
        self._writer.shutdown(wait=True)

    def shutdown(self) -> None:
        for handle in self._evictions.values():
            handle.cancel()
        self._evictions.clear()
        for session in list(self.matches.values()):
            session.abort("server_shutdown", "the server is shutting down")
