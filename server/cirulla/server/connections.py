"""A live match's connections: its seats (their secret tokens and what each did), the
live streams attached to them or watching (``Connection``), and who receives what
(``Delivery``).

A stream is one seat's Play call or a spectator, as the domain sees it: the domain puts
messages on its queue and the stream's writer (``service``) takes them off in order. The
queue is bounded: a client that stops reading while messages keep coming is disconnected,
never buffered without limit.

The hiding rule is applied in ``Delivery.events`` and only there: an event goes to a seat
only if ``event.visible_to(seat)`` and to spectators only if ``event.visible_to(None)``
(the rules core decides; ``cirulla.rules.events``); an event whose type keeps
``Event.visible_to`` (true for everyone) is not asked each time. Everything else a match sends
(welcome, views, decisions, results) is addressed to one stream or built per receiver by
the session.
"""

from __future__ import annotations

import asyncio
import collections
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cirulla.rules.events import Event
from cirulla.server.documents import SeatSummary
from cirulla.server.limits import MAX_BATCH
from cirulla.server.messages import AcceptedMsg, EventMsg, GoodbyeMsg, SeatPublic, ServerMsg

#: What a stream with Hello.defer_events may receive late: events and acceptances.
DEFERRABLE = frozenset((EventMsg, AcceptedMsg))

if TYPE_CHECKING:
    from cirulla.server.hub import Room
    from cirulla.server.session import MatchSession


class Mailbox:
    """A stream's outgoing messages, in order: the part of ``asyncio.Queue`` a stream uses
    (one reader, its writer), without its bookkeeping (task counts, an event per put).

    Every message of every decision passes through one (an acceptance, each event, the
    decision request), so its cost counts: a put is a deque append, and wakes the writer
    only when it waits."""

    __slots__ = ("_items", "_loop", "_waiter")

    def __init__(self) -> None:
        self._items: collections.deque[ServerMsg] = collections.deque()
        self._waiter: asyncio.Future[None] | None = None
        #: The loop of the stream's writer, kept at its first wait (``get_running_loop``
        #: asks the OS for the process id at every call, to detect a fork).
        self._loop: asyncio.AbstractEventLoop | None = None

    def qsize(self) -> int:
        return len(self._items)

    def empty(self) -> bool:
        return not self._items

    def put_nowait(self, msg: ServerMsg) -> None:
        self._items.append(msg)
        self._wake()

    def extend(self, msgs: list[ServerMsg]) -> None:
        """Several messages, in order, with one wake-up."""
        self._items.extend(msgs)
        self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    def get_nowait(self) -> ServerMsg:
        if not self._items:
            raise asyncio.QueueEmpty
        return self._items.popleft()

    async def get(self) -> ServerMsg:
        if not self._items:
            await self._filled()
        return self._items.popleft()

    async def _filled(self) -> None:
        """Wait until a message is put (called only when there is none: a stream with
        messages waiting never pays for this coroutine)."""
        while not self._items:
            loop = self._loop
            if loop is None or loop.is_closed():  # (a test may run several loops)
                loop = self._loop = asyncio.get_running_loop()
            waiter = loop.create_future()
            self._waiter = waiter
            try:
                await waiter
            finally:
                if self._waiter is waiter:
                    self._waiter = None

    async def get_some(self, limit: int) -> list[ServerMsg]:
        """The next messages, at least one (waiting for it), in order: up to ``limit`` in
        all and up to a ``GoodbyeMsg`` included (the stream ends there), one stream
        message's worth taken in one call (``get`` then ``get_nowait`` one by one cost a
        call and three checks per message, five or so messages a decision)."""
        items = self._items
        if not items:
            await self._filled()
        out = [items.popleft()]
        while items and len(out) < limit and type(out[-1]) is not GoodbyeMsg:
            out.append(items.popleft())
        return out


class Connection:
    """One live stream: a seat's Play call (``seat`` set) or a spectator (``seat`` None).

    A stream with ``defer`` set (Hello.defer_events) keeps its events and acceptances in
    ``held`` instead of on the queue: they reach the queue (with no wake-up of the
    stream's writer of their own) just before the next message the seat must read at
    once, or when ``MAX_BATCH`` of them wait. One stream message per decision then costs
    one wake-up of the writer, not one per event.
    """

    __slots__ = (
        "auto_play_forced",
        "batches",
        "closed",
        "defer",
        "held",
        "limit",
        "on_overflow",
        "overflowed",
        "queue",
        "quit",
        "room",
        "seat",
        "session",
        "trusted",
    )

    def __init__(self, seat: int | None = None, *, limit: int = 0) -> None:
        self.seat = seat
        #: The client reads PlayResponse.batch (Hello.accept_batches).
        self.batches = False
        #: ... and lets events and acceptances wait for the next such message
        #: (Hello.defer_events).
        self.defer = False
        #: Decisions with one legal action are played for the seat, unasked
        #: (Hello.auto_play_forced).
        self.auto_play_forced = False
        self.queue = Mailbox()
        #: Deferred messages not yet on the queue (``defer``), in order.
        self.held: list[ServerMsg] = []
        self.limit = limit  # 0 = unbounded
        self.session: MatchSession | None = None
        self.room: Room | None = None
        self.closed = False
        self.quit = False
        self.overflowed = False
        #: A spectator admitted with the admin token: it keeps watching a duplicate-deal
        #: twin whose group another match reopens (``Delivery.close_spectators``).
        self.trusted = False
        #: Called once when the queue overflows: the stream's owner ends the call.
        self.on_overflow: Callable[[Connection], None] | None = None

    def send(self, msg: ServerMsg) -> None:
        if self.closed:
            return
        if self.defer:
            if type(msg) in DEFERRABLE:
                self.held.append(msg)
                if len(self.held) >= MAX_BATCH:
                    self._release()  # a full batch: it goes now
                return
            held = self.held
            if held:
                queue = self.queue
                if not self.limit or len(queue._items) + len(held) < self.limit:
                    # ``_release`` then the put below, with one wake-up: nothing overflows
                    self.held = []
                    held.append(msg)
                    queue.extend(held)
                    return
                self._release()
        if self.limit and self.queue.qsize() >= self.limit:
            self._overflow()
            return
        self.queue.put_nowait(msg)

    def send_events(self, msgs: list[EventMsg]) -> None:
        """``send`` each of ``msgs`` in order; held in one step when they stay below a
        full batch (as one by one: nothing would be released)."""
        if self.defer and not self.closed and len(self.held) + len(msgs) < MAX_BATCH:
            self.held.extend(msgs)
            return
        for msg in msgs:
            self.send(msg)

    def _release(self) -> None:
        """Put the held messages on the queue (in order, before whatever comes next)."""
        held = self.held
        if not held:
            return
        self.held = []
        if self.limit and self.queue.qsize() + len(held) > self.limit:
            self._overflow()  # (as if put one by one until the queue was full)
            return
        self.queue.extend(held)

    def _overflow(self) -> None:
        self.closed = True
        self.overflowed = True
        self.held = []
        if self.on_overflow is not None:
            self.on_overflow(self)

    def close(self, reason: str, message: str = "") -> None:
        if not self.closed:
            self._release()
            if self.closed:  # releasing overflowed the queue
                return
            self.queue.put_nowait(GoodbyeMsg(reason, message))
            self.closed = True


def new_seat_token() -> str:
    """A secret seat token (192 bits, hex): only letters and digits, so it can never start
    with "-" and be read as an option by a command line that receives it."""
    return secrets.token_hex(24)


def token_seat(tokens: list[str], token: str) -> int | None:
    """The seat whose token is ``token`` (compared in constant time, any characters)."""
    given = token.encode("utf-8", "surrogatepass")
    for seat, t in enumerate(tokens):
        if secrets.compare_digest(t.encode(), given):
            return seat
    return None


@dataclass(slots=True)
class Seat:
    """One seat: its player's name and software, its live stream, and its faults."""

    name: str = ""
    version: str = ""
    conn: Connection | None = None
    joined: bool = False
    disconnected_at: float | None = None
    timeouts: int = 0
    forfeits: int = 0
    disconnects: int = 0
    illegal: int = 0
    #: Streams of this seat ended for breaking the protocol (e.g. an undecodable frame).
    protocol_errors: int = 0

    def summary(self, public: SeatPublic) -> SeatSummary:
        """This seat in a match summary: its public part, its fault counts and notes."""
        return {
            "seat": public.seat,
            "side": public.side,
            "name": public.name,
            "version": public.version,
            "connected": public.connected,
            "timeouts": self.timeouts,
            "illegal_actions": self.illegal,
            "forfeits": self.forfeits,
            "disconnects": self.disconnects,
            "notes": self.notes(),
        }

    def notes(self) -> list[str]:
        out = []
        if self.timeouts:
            out.append(f"timeout: {self.timeouts}")
        if self.forfeits:
            out.append("forfeit")
        if self.disconnects:
            out.append("disconnected")
        if self.illegal:
            out.append(f"illegal actions: {self.illegal}")
        if self.protocol_errors:
            out.append(f"protocol errors: {self.protocol_errors}")
        return out


class _SeenByAll(dict[type[Event], bool]):
    """Whether every seat and spectator sees an event of a type: the type keeps
    ``Event.visible_to`` (true for all), so none need be asked (one frame less per event
    and receiver); computed at a type's first event."""

    def __missing__(self, cls: type[Event]) -> bool:
        seen = self[cls] = cls.visible_to is Event.visible_to
        return seen


_SEEN_BY_ALL = _SeenByAll()


class Delivery:
    """Sends a match's messages to its seats' live streams and its spectators."""

    __slots__ = ("seats", "spectators")

    def __init__(self, seats: list[Seat]) -> None:
        self.seats = seats
        self.spectators: set[Connection] = set()

    def receivers(self) -> list[Connection]:
        """Every live stream: the seats' (in seat order), then the spectators'."""
        return [s.conn for s in self.seats if s.conn is not None] + list(self.spectators)

    def to_all(self, msg: ServerMsg) -> None:
        """A message every receiver may see (a new game, the match result)."""
        for conn in self.receivers():
            conn.send(msg)

    def to_seat(self, seat: int, msg: ServerMsg) -> None:
        conn = self.seats[seat].conn
        if conn is not None:
            conn.send(msg)

    def to_spectators(self, msg: ServerMsg) -> None:
        for spec in self.spectators:
            spec.send(msg)

    def events(
        self, msgs: list[EventMsg], exclude: Connection | None = None, *, everyone: bool = False
    ) -> None:
        """Events in order (a move's), each to every receiver allowed to see it;
        ``everyone``: the caller knows every one of them is visible to every seat and
        spectator (its type keeps ``Event.visible_to``, true for all), so none is asked."""
        if everyone:
            for slot in self.seats:
                conn = slot.conn
                if conn is not None and conn is not exclude:
                    conn.send_events(msgs)
            for spec in self.spectators:
                spec.send_events(msgs)
            return
        open_ = _SEEN_BY_ALL
        for seat, slot in enumerate(self.seats):
            conn = slot.conn
            if conn is not None and conn is not exclude:
                mine = [m for m in msgs if open_[type(m.event)] or m.event.visible_to(seat)]
                if mine:
                    conn.send_events(mine)
        if self.spectators:
            public = [m for m in msgs if m.event.visible_to(None)]
            if public:
                for spec in self.spectators:
                    spec.send_events(public)

    def close_spectators(self, reason: str, message: str) -> None:
        """Goodbye ``reason`` to every spectator but the admin's (``trusted``)."""
        for spec in [s for s in self.spectators if not s.trusted]:
            spec.close(reason, message)
            self.spectators.discard(spec)

    def close_all(self, reason: str, message: str = "") -> None:
        """Goodbye ``reason`` to every receiver."""
        for conn in self.receivers():
            conn.close(reason, message)
