"""A minimal asyncio seat client: the loop tests and the benchmark use to play a seat.

Not the bot kit (that lives in ``cirulla.bots``); just enough to drive a Play stream:
send Hello, answer every DecisionRequest with ``choose(request)``, and stop at Goodbye.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Callable

from cirulla.v1 import events_pb2, match_service_pb2, match_service_pb2_grpc, play_pb2
from cirulla.version import PROTOCOL_VERSION

Choose = Callable[[play_pb2.DecisionRequest], int]


def random_choice(rng: random.Random) -> Choose:
    return lambda request: rng.randrange(len(request.legal_actions))


class Outbox:
    """A request iterator the caller can push into (None ends the stream)."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[match_service_pb2.PlayRequest | None] = asyncio.Queue()

    def send(self, request: match_service_pb2.PlayRequest | None) -> None:
        self.queue.put_nowait(request)

    async def __aiter__(self) -> AsyncIterator[match_service_pb2.PlayRequest]:
        while True:
            item = await self.queue.get()
            if item is None:
                return
            yield item


def hello(
    match_id: str,
    token: str,
    name: str = "client",
    *,
    room_id: str = "",
    resume: int | None = None,
    batches: bool = False,
    defer_events: bool = False,
    auto_play_forced: bool = False,
) -> match_service_pb2.PlayRequest:
    h = play_pb2.Hello(
        protocol_version=PROTOCOL_VERSION,
        name=name,
        version="test",
        seat_token=token,
        accept_batches=batches,
        defer_events=defer_events,
        auto_play_forced=auto_play_forced,
    )
    if room_id:
        h.room_id = room_id
    else:
        h.match_id = match_id
    if resume is not None:
        h.resume.last_event_sequence = resume
    return match_service_pb2.PlayRequest(hello=h)


def submit_index(decision_id: int, index: int) -> match_service_pb2.PlayRequest:
    return match_service_pb2.PlayRequest(
        submit_action=play_pb2.SubmitAction(decision_id=decision_id, legal_action_index=index)
    )


async def play_seat(
    stub: match_service_pb2_grpc.MatchServiceStub,
    match_id: str,
    token: str,
    choose: Choose,
    *,
    name: str = "client",
    room_id: str = "",
    log: list[match_service_pb2.PlayResponse] | None = None,
    max_games: int | None = None,
    batches: bool = False,
    stream_messages: list[int] | None = None,
    auto_play_forced: bool = False,
    defer_events: bool = False,
) -> list[match_service_pb2.PlayResponse]:
    """Play one seat to the end (Goodbye); returns (or appends to ``log``) every message.

    With ``batches`` the seat accepts ``PlayResponse.batch``; the log holds the messages
    unpacked, and ``stream_messages`` (if given) gets how many stream messages came.
    """
    received: list[match_service_pb2.PlayResponse] = [] if log is None else log
    out = Outbox()
    out.send(
        hello(
            match_id,
            token,
            name,
            room_id=room_id,
            batches=batches,
            defer_events=defer_events,
            auto_play_forced=auto_play_forced,
        )
    )
    call = stub.Play(out)
    games = 0
    async for message in call:
        if stream_messages is not None:
            stream_messages.append(1)
        unpacked = (
            list(message.batch.responses) if message.WhichOneof("body") == "batch" else [message]
        )
        ended, games = _answer(unpacked, out, received, choose, max_games, games)
        if ended:
            break
    out.send(None)
    return received


def _answer(
    messages: list[match_service_pb2.PlayResponse],
    out: Outbox,
    received: list[match_service_pb2.PlayResponse],
    choose: Choose,
    max_games: int | None,
    games: int,
) -> tuple[bool, int]:
    """Answer what needs an answer; (Goodbye came, games finished so far)."""
    for msg in messages:
        received.append(msg)
        kind = msg.WhichOneof("body")
        if kind == "decision_request":
            req = msg.decision_request
            out.send(submit_index(req.decision_id, choose(req)))
        elif kind == "event" and msg.event.WhichOneof("body") == "game_over":
            games += 1
            if max_games is not None and games >= max_games:
                out.send(match_service_pb2.PlayRequest(quit=play_pb2.Quit(reason="enough")))
        elif kind == "goodbye":
            return True, games
    return False, games


class ManualSeat:
    """A Play stream driven step by step (tests, debugging): send requests, await replies.

    A background task reads the stream into a queue, so giving up on a wait never cancels
    the call itself.
    """

    def __init__(self, stub: match_service_pb2_grpc.MatchServiceStub) -> None:
        self.out = Outbox()
        self.call = stub.Play(self.out)
        self.received: list[match_service_pb2.PlayResponse] = []
        #: the stream's messages, then how it ended (its error, or EOFError)
        self.inbox: asyncio.Queue[match_service_pb2.PlayResponse | BaseException] = asyncio.Queue()
        self.reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        try:
            async for msg in self.call:
                self.inbox.put_nowait(msg)
        except BaseException as exc:  # the stream's end status, for whoever waits next
            self.inbox.put_nowait(exc)
            return
        self.inbox.put_nowait(EOFError("stream ended"))

    def send(self, request: match_service_pb2.PlayRequest) -> None:
        self.out.send(request)

    async def next(self, *kinds: str, timeout: float = 5.0) -> match_service_pb2.PlayResponse:
        """The next message whose body is one of ``kinds`` (others are kept in received).

        Raises the stream's error (e.g. ``grpc.aio.AioRpcError``) if it ends first, and
        ``TimeoutError`` if nothing fitting arrives within ``timeout`` seconds.

        Waits with ``asyncio.timeout`` rather than ``asyncio.wait_for``: on Python 3.11 a
        ``wait_for`` cancelled in the same loop iteration as its ``get`` completes returns
        the message and swallows the cancellation, so a "cancelled" waiter lived on and
        ate messages meant for the next caller (the flaky timeout tests). Cancelling this
        coroutine leaves every message it has not returned in the inbox.
        """
        while True:
            async with asyncio.timeout(timeout):
                msg = await self.inbox.get()
            if isinstance(msg, BaseException):
                self.inbox.put_nowait(msg)
                raise msg
            self.received.append(msg)
            if not kinds or msg.WhichOneof("body") in kinds:
                return msg

    async def next_event(self, *bodies: str, timeout: float = 5.0) -> events_pb2.Event:
        while True:
            msg = await self.next("event", timeout=timeout)
            if msg.event.WhichOneof("body") in bodies:
                return msg.event

    def close(self) -> None:
        self.out.send(None)
        self.call.cancel()
        self.reader.cancel()
