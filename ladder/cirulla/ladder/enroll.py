"""The connect-in bots' stream (``LadderService.Enroll``), server side: the lichess-bot model.

A bot that runs on its owner's machine holds one Enroll stream per process: ``hello``
with its name and bot key (checked against ``bots.bot_key_hash``) and how many matches
it plays at once, then heartbeats. While the stream is open an ``enrollments`` row says
so, and the scheduler seats the bot in at most that many matches.

Assignments come from the database, not from memory: a worker (embedded in
``cirulla ladder serve`` or a ``cirulla ladder worker`` on another machine) that creates a
match stores each seat's token in ``ladder_seats``; every enrollment stream polls for the
seats of its bot's current version whose match is running, that have a token and were
not delivered yet, marks each delivered with a guarded UPDATE (so two streams of one bot
never get the same seat) and sends it with the address of the match server hosting the
match. So a bot may enroll at any ladder process, whichever worker hosts its matches.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path

import grpc

from cirulla.ladder.fields import MAX_SOFTWARE_VERSION, FieldError, check_text, shown
from cirulla.ladder.messages import QUEUE_TO_PB, Context
from cirulla.ladder.store import LadderStore
from cirulla.v1 import ladder_pb2, match_pb2, match_service_pb2, match_service_pb2_grpc

log = logging.getLogger("cirulla.ladder.enroll")

#: How often a bot must send something (Enrolled.heartbeat_interval_ms).
HEARTBEAT_MS = 5_000
#: Intervals of silence after which the ladder ends an enrollment.
MISSED_BEATS = 3
#: Seconds between two looks for new assignments.
POLL_S = 0.2


@dataclass(frozen=True, slots=True)
class Delivery:
    """SECRET: one seat handed to an enrolled bot."""

    match_id: str
    server_match_id: str
    server_address: str
    seat: int
    token: str
    queue: str
    #: when it was marked delivered (the guard of ``Enrollments.undeliver``)
    delivered_at: float = 0.0

    def to_proto(self) -> ladder_pb2.EnrollResponse:
        return ladder_pb2.EnrollResponse(
            assignment=ladder_pb2.Assignment(
                match_id=self.match_id,
                server_match_id=self.server_match_id,
                server_address=self.server_address,
                seat=self.seat,
                seat_token=self.token,
                queue=QUEUE_TO_PB.get(self.queue, ladder_pb2.LADDER_QUEUE_UNSPECIFIED),
            )
        )


class Enrollments:
    """A connect-in bot's enrollments and assignment deliveries, as the ``Enroll`` stream
    uses them: the rows are the store's (``store.enrollments`` writes ``enrollments``,
    ``store.matches`` the seats' deliveries); this class runs no SQL of its own."""

    def __init__(self, store: LadderStore) -> None:
        self.store = store

    def open(self, bot_id: int, served_by: str, capacity: int) -> str:
        return self.store.enrollments.open(bot_id, served_by, capacity)

    def beat(self, enrollment_id: str) -> None:
        self.store.enrollments.beat(enrollment_id)

    def close(self, enrollment_id: str) -> None:
        self.store.enrollments.close(enrollment_id)

    def close_served_by(self, served_by: str) -> None:
        """Forget the enrollments a ladder process held (at its start: left by a crash)."""
        self.store.enrollments.close_served_by(served_by)

    def bot_state(self, bot_id: int) -> tuple[str, int]:
        """(state, current version number) of the bot."""
        return self.store.bots.bot_state(bot_id)

    def running(self, match_ids: set[str]) -> set[str]:
        """Those of ``match_ids`` still claimed or running."""
        return self.store.matches.still_active(match_ids)

    def deliver(self, bot_id: int, limit: int) -> list[Delivery]:
        """Up to ``limit`` undelivered seats of the bot's current version, now delivered."""
        return [
            Delivery(
                match_id=d.match_id,
                server_match_id=d.server_match_id,
                server_address=d.server_address,
                seat=d.seat,
                token=d.token,
                queue=d.queue,
                delivered_at=d.delivered_at,
            )
            for d in self.store.matches.deliver_seats(bot_id, limit)
        ]

    def undeliver(self, delivery: Delivery) -> bool:
        """Make a delivered seat deliverable again (its bot's stream dropped before the
        bot joined); False if the match is no longer running or the seat changed hands."""
        return self.store.matches.undeliver_seat(
            delivery.match_id, delivery.seat, delivery.delivered_at
        )


def match_server_channel(address: str, tls_ca: str | None) -> grpc.aio.Channel:
    """A channel to a ladder process's match server: TLS checked against ``tls_ca`` when
    the ladder speaks TLS (every process of one ladder does, or none)."""
    if tls_ca is None:
        return grpc.aio.insecure_channel(address)
    roots = Path(tls_ca).read_bytes()
    return grpc.aio.secure_channel(address, grpc.ssl_channel_credentials(roots))


async def seat_is_empty(
    delivery: Delivery, timeout: float = 5.0, tls_ca: str | None = None
) -> bool:
    """True when the match server hosting ``delivery`` says its seat was never taken and
    the match is not over; False when taken, over, or the server cannot be asked."""
    try:
        async with match_server_channel(delivery.server_address, tls_ca) as channel:
            response = await match_service_pb2_grpc.MatchServiceStub(channel).GetMatch(
                match_service_pb2.GetMatchRequest(match_id=delivery.server_match_id),
                timeout=timeout,
            )
    except (grpc.RpcError, OSError):
        return False
    match = response.match
    if match.status in (match_pb2.MATCH_STATUS_FINISHED, match_pb2.MATCH_STATUS_ABORTED):
        return False
    return not any(s.seat == delivery.seat and (s.name or s.connected) for s in match.seats)


async def redeliver_unjoined(
    book: Enrollments, deliveries: list[Delivery], tls_ca: str | None = None
) -> list[str]:
    """After a stream ended: the seats it was given that its bot never joined become
    deliverable again, so the bot's next enrollment (or another live stream of the same
    bot) gets them while the match still waits for it. The ids of those matches."""
    again = []
    for delivery in deliveries:
        if await seat_is_empty(delivery, tls_ca=tls_ca) and await asyncio.to_thread(
            book.undeliver, delivery
        ):
            again.append(delivery.match_id)
    return again


async def _abort(context: Context, code: grpc.StatusCode, detail: str) -> None:
    await context.abort(code, detail)


async def enroll_stream(
    store: LadderStore,
    requests: AsyncIterator[ladder_pb2.EnrollRequest],
    context: Context,
    *,
    served_by: str,
    stopping: asyncio.Event | None = None,
    heartbeat_ms: int = HEARTBEAT_MS,
    poll_s: float = POLL_S,
    tls_ca: str | None = None,
    on_enrolled: Callable[[], None] | None = None,
) -> AsyncIterator[ladder_pb2.EnrollResponse]:
    """The body of ``LadderService.Enroll`` (an async generator of responses).

    ``stopping`` set by the ladder process when it shuts down: the bot is told goodbye
    (and reconnects elsewhere or later; its running matches go on). ``on_enrolled`` is
    called once the bot is enrolled (it may be scheduled now).
    """
    book = Enrollments(store)
    interval = heartbeat_ms / 1000
    try:
        first = await asyncio.wait_for(anext(requests), timeout=interval * MISSED_BEATS)
    except (StopAsyncIteration, TimeoutError):
        await _abort(context, grpc.StatusCode.INVALID_ARGUMENT, "send hello first")
        return
    if first.WhichOneof("body") != "hello":
        await _abort(
            context, grpc.StatusCode.INVALID_ARGUMENT, "the first Enroll message must be hello"
        )
        return
    hello = first.hello
    if hello.capacity < 1:
        await _abort(context, grpc.StatusCode.INVALID_ARGUMENT, "hello.capacity: at least 1")
        return
    try:
        check_text("hello.software_version", hello.software_version, MAX_SOFTWARE_VERSION)
        check_text("hello.bot_name", hello.bot_name, 40)
    except FieldError as exc:
        await _abort(context, grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        return
    bot = await asyncio.to_thread(store.check_bot_key, hello.bot_name, hello.bot_key)
    if bot is None:
        # One answer for an unknown bot, a managed bot and a wrong key: nothing to probe.
        await _abort(
            context,
            grpc.StatusCode.UNAUTHENTICATED,
            f"bot {shown(hello.bot_name)}: unknown connect-in bot or wrong bot key",
        )
        return
    if bot["state"] == "removed":
        await _abort(
            context,
            grpc.StatusCode.FAILED_PRECONDITION,
            f"bot {shown(hello.bot_name)} was removed from the ladder",
        )
        return
    capacity = min(int(hello.capacity), int(bot["max_concurrency"]))
    enrollment_id = await asyncio.to_thread(book.open, bot["id"], served_by, capacity)
    log.info(
        "enrolled bot=%s version=%s capacity=%d enrollment=%s software=%r",
        bot["name"],
        bot["version"],
        capacity,
        enrollment_id,
        hello.software_version,
    )
    if on_enrolled is not None:
        on_enrolled()
    last_heard = time.monotonic()
    closed = asyncio.Event()

    async def read() -> None:
        nonlocal last_heard
        try:
            async for request in requests:
                last_heard = time.monotonic()
                if request.WhichOneof("body") == "accepted":
                    log.info("accepted bot=%s match=%s", bot["name"], request.accepted.match_id)
        except (grpc.RpcError, asyncio.CancelledError):
            pass
        finally:
            closed.set()

    reader = asyncio.create_task(read())
    delivered: set[str] = set()
    #: what this stream was given, while its match runs (redelivered if never joined)
    sent: dict[str, Delivery] = {}
    last_beat = time.monotonic()
    try:
        yield ladder_pb2.EnrollResponse(
            enrolled=ladder_pb2.Enrolled(
                bot_name=bot["name"],
                version=int(bot["version"]),
                capacity=capacity,
                heartbeat_interval_ms=heartbeat_ms,
                enrollment_id=enrollment_id,
            )
        )
        while not closed.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(closed.wait(), timeout=poll_s)
            if closed.is_set():
                break
            now = time.monotonic()
            if stopping is not None and stopping.is_set():
                yield _goodbye("ladder shutting down")
                break
            if now - last_heard > interval * MISSED_BEATS:
                yield _goodbye(f"missed heartbeats (nothing for {interval * MISSED_BEATS:.0f}s)")
                break
            if now - last_beat >= interval / 2:
                last_beat = now
                await asyncio.to_thread(book.beat, enrollment_id)
                state, _version = await asyncio.to_thread(book.bot_state, bot["id"])
                if state == "removed":
                    yield _goodbye("bot removed from the ladder")
                    break
            delivered = await asyncio.to_thread(book.running, delivered)
            sent = {k: v for k, v in sent.items() if k in delivered}
            for item in await asyncio.to_thread(book.deliver, bot["id"], capacity - len(delivered)):
                delivered.add(item.match_id)
                sent[item.match_id] = item
                log.info(
                    "assignment bot=%s match=%s seat=%d server=%s",
                    bot["name"],
                    item.match_id,
                    item.seat,
                    item.server_address,
                )
                yield item.to_proto()
    finally:
        reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reader
        # Its own task: the handler may be cancelled again while this runs (the client
        # is gone), and the seats must be freed all the same.
        after = asyncio.create_task(_after_stream(book, enrollment_id, bot["name"], sent, tls_ca))
        _AFTER.add(after)
        after.add_done_callback(_AFTER.discard)
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.shield(after)


#: Clean-ups of ended streams still running (a reference keeps each task alive).
_AFTER: set[asyncio.Task[None]] = set()


async def _after_stream(
    book: Enrollments,
    enrollment_id: str,
    name: str,
    sent: dict[str, Delivery],
    tls_ca: str | None = None,
) -> None:
    """Close the enrollment, then free the seats its bot never joined."""
    await asyncio.to_thread(book.close, enrollment_id)
    log.info("enrollment_closed bot=%s enrollment=%s", name, enrollment_id)
    again = await redeliver_unjoined(book, list(sent.values()), tls_ca)
    if again:
        log.info("redeliver bot=%s matches=%s", name, ",".join(again))


def _goodbye(reason: str) -> ladder_pb2.EnrollResponse:
    return ladder_pb2.EnrollResponse(goodbye=ladder_pb2.EnrollGoodbye(reason=reason))
