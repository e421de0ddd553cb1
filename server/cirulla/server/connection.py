"""One live stream of a match: a seat's Play call or a spectator, as the domain sees it.

The domain puts messages on its queue; the stream's writer (``service``) takes them off in
order. The queue is bounded: a client that stops reading while messages keep coming is
disconnected, never buffered without limit.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from cirulla.server.messages import GoodbyeMsg

if TYPE_CHECKING:
    from cirulla.server.session import MatchSession


class Connection:
    """One live stream: a seat's Play call (``seat`` set) or a spectator (``seat`` None)."""

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
        self.queue: asyncio.Queue[Any] = asyncio.Queue()
        self.limit = limit  # 0 = unbounded
        self.session: MatchSession | None = None
        self.room: Any = None
        self.closed = False
        self.quit = False
        self.overflowed = False
        #: Called once when the queue overflows: the stream's owner ends the call.
        self.on_overflow: Callable[[Connection], None] | None = None

    def send(self, msg: Any) -> None:
        if self.closed:
            return
        if self.limit and self.queue.qsize() >= self.limit:
            self.closed = True
            self.overflowed = True
            if self.on_overflow is not None:
                self.on_overflow(self)
            return
        self.queue.put_nowait(msg)

    def close(self, reason: str, message: str = "") -> None:
        if not self.closed:
            self.queue.put_nowait(GoodbyeMsg(reason, message))
            self.closed = True
