"""Ended matches leave the server's memory after --keep-finished seconds; the database then
answers for them, and joining or watching them gets a clear FAILED_PRECONDITION."""

from __future__ import annotations

import asyncio
import gc
import random
import time
import weakref
from typing import Any

import grpc
import pytest

from cirulla.server.app import start_server
from cirulla.server.client import ManualSeat, hello, play_seat, random_choice
from cirulla.server.connections import Connection
from cirulla.server.convert.settings import config_from_pb
from cirulla.server.decisions import ByIndex
from cirulla.server.hub import Hub
from cirulla.server.limits import Limits
from cirulla.server.messages import DecisionMsg
from cirulla.server.store import Store
from cirulla.v1 import match_pb2, match_settings_pb2, rules_pb2
from cirulla.v1 import match_service_pb2 as ms
from cirulla.version import PROTOCOL_VERSION
from tests.server_harness import run_with_server

KEEP = 4.0  # ample for the checks made before eviction even on a loaded CI machine


async def create(stub: Any) -> Any:
    settings = match_settings_pb2.MatchSettings(
        rules=rules_pb2.Rules(overrides=rules_pb2.RuleOptions(players=2, target=11)), seed=7
    )
    return await stub.CreateMatch(ms.CreateMatchRequest(settings=settings))


async def evicted(srv: Any, match_id: str, limit: float = 10.0) -> float:
    """Seconds until ``match_id`` left the hub's memory (fails after ``limit``)."""
    start = time.monotonic()
    while match_id in srv.hub.matches:
        assert time.monotonic() - start < limit, f"{match_id} was never evicted"
        await asyncio.sleep(0.05)
    return time.monotonic() - start


def without_connections(match: match_pb2.Match) -> match_pb2.Match:
    out = match_pb2.Match()
    out.CopyFrom(match)
    for seat in out.seats:
        seat.connected = False
    return out


async def refused(call: Any) -> str:
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await call
    assert exc.value.code() == grpc.StatusCode.FAILED_PRECONDITION, exc.value.details()
    return exc.value.details() or ""


def test_ended_matches_are_evicted_and_served_from_the_database() -> None:
    async def body(stub: Any, srv: Any) -> None:
        finished = await create(stub)
        mid = finished.match.match_id
        waiting = await create(stub)  # nobody joins: it stays live, never evicted
        aborted = await create(stub)
        creator = [("authorization", f"Bearer {aborted.seat_tokens[0].token}")]
        await stub.AbortMatch(
            ms.AbortMatchRequest(match_id=aborted.match.match_id, reason="x"), metadata=creator
        )
        await asyncio.gather(
            *(
                play_seat(stub, mid, t.token, random_choice(random.Random(t.seat)))
                for t in finished.seat_tokens
            )
        )
        # Still in memory right after the end: a late spectator gets the whole game.
        assert mid in srv.hub.matches
        late = [m async for m in stub.Spectate(ms.SpectateRequest(match_id=mid))]
        assert [m.WhichOneof("body") for m in late][-2:] == ["match_result", "goodbye"]
        before = (await stub.GetMatch(ms.GetMatchRequest(match_id=mid))).match
        record_id = f"{mid}-g1"
        record = (await stub.GetRecord(ms.GetRecordRequest(record_id=record_id))).record

        await evicted(srv, mid)
        await evicted(srv, aborted.match.match_id)
        assert waiting.match.match_id in srv.hub.matches

        # Served from the database exactly as from memory.
        after = (await stub.GetMatch(ms.GetMatchRequest(match_id=mid))).match
        assert after.status == match_pb2.MATCH_STATUS_FINISHED and after.HasField("result")
        assert without_connections(after) == without_connections(before)
        listed = await stub.ListMatches(
            ms.ListMatchesRequest(status=match_pb2.MATCH_STATUS_FINISHED)
        )
        assert [m.match_id for m in listed.matches] == [mid]
        again = (await stub.GetRecord(ms.GetRecordRequest(record_id=record_id))).record
        assert again == record
        records = await stub.ListRecords(ms.ListRecordsRequest(match_id=mid))
        assert [r.record_id for r in records.records] == [record_id]
        gone = (await stub.GetMatch(ms.GetMatchRequest(match_id=aborted.match.match_id))).match
        assert gone.status == match_pb2.MATCH_STATUS_ABORTED and gone.abort_reason == "x"

        # Joining or watching an evicted match: a clear error, nothing changes.
        seat = ManualSeat(stub)
        seat.send(hello(mid, finished.seat_tokens[0].token))
        assert f"match {mid} is finished" in await refused(seat.next())
        seat.close()
        watch = stub.Spectate(ms.SpectateRequest(match_id=mid))
        assert f"match {mid} is finished" in await refused(watch.read())
        watch_aborted = stub.Spectate(ms.SpectateRequest(match_id=aborted.match.match_id))
        assert "is aborted" in await refused(watch_aborted.read())
        late_abort = stub.AbortMatch(ms.AbortMatchRequest(match_id=mid, reason="late"))
        assert "finished" in await refused(late_abort)
        assert mid not in srv.hub.matches

    run_with_server(body, ":memory:", keep_finished_s=KEEP)


def test_keep_finished_must_not_be_negative() -> None:
    async def main() -> None:
        with pytest.raises(ValueError, match="--keep-finished"):
            await start_server("127.0.0.1:0", ":memory:", keep_finished_s=-1)

    asyncio.run(main())


async def play(stub: Any, created: Any) -> None:
    await asyncio.gather(
        *(
            play_seat(stub, created.match.match_id, t.token, random_choice(random.Random(t.seat)))
            for t in created.seat_tokens
        )
    )


def test_ended_matches_are_kept_by_count_oldest_out_first() -> None:
    """Hours of --keep-finished, but at most 2 ended matches: memory does not grow with
    the games played, and an evicted match is still served from the database."""

    async def body(stub: Any, srv: Any) -> None:
        played = [await create(stub) for _ in range(4)]
        for created in played:
            await play(stub, created)
        ids = [c.match.match_id for c in played]
        ended_in_memory = [m for m in ids if m in srv.hub.matches]
        assert ended_in_memory == ids[-2:]
        for mid in ids[:2]:
            stored = (await stub.GetMatch(ms.GetMatchRequest(match_id=mid))).match
            assert stored.status == match_pb2.MATCH_STATUS_FINISHED and stored.HasField("result")
        assert len(srv.hub._ended) == 2

    run_with_server(body, ":memory:", keep_finished_s=3600, limits=Limits(keep_finished_matches=2))


def test_ended_matches_are_kept_by_their_events_too() -> None:
    """A bound on the events held: one finished game holds more than 10, so none stays."""

    async def body(stub: Any, srv: Any) -> None:
        waiting = await create(stub)
        created = await create(stub)
        await play(stub, created)
        assert created.match.match_id not in srv.hub.matches
        assert waiting.match.match_id in srv.hub.matches  # live matches are never evicted
        assert srv.hub._ended_events == 0 and not srv.hub._ended
        late = stub.Spectate(ms.SpectateRequest(match_id=created.match.match_id))
        assert "is finished" in await refused(late.read())

    run_with_server(body, ":memory:", keep_finished_s=3600, limits=Limits(keep_finished_events=10))


def test_an_evicted_match_is_freed_without_the_garbage_collector() -> None:
    """No reference cycle holds a session (its timer's callback once did): an evicted
    match's memory goes as soon as the hub lets go of it, not at the garbage collector's
    next full collection, which the serving process makes rare (``app.tune_gc``)."""

    async def body(stub: Any, srv: Any) -> None:
        created = await create(stub)
        session = weakref.ref(srv.hub.matches[created.match.match_id])
        gc.disable()
        try:
            await play(stub, created)
            await srv.hub.records_written()
            start = time.monotonic()
            while session() is not None and time.monotonic() - start < 10:
                await asyncio.sleep(0.05)  # the streams' handlers end
            assert session() is None, "an evicted session is only freed by a full collection"
        finally:
            gc.enable()

    run_with_server(body, ":memory:", keep_finished_s=3600, limits=Limits(keep_finished_events=10))


def test_a_move_settled_while_matches_are_counted_may_evict_its_match() -> None:
    """CreateMatch counts the live matches, settling each one's pending move first; a
    move that ends its match evicts it at once (no ended match kept), from the very
    registry being counted: the count must survive that (it once failed CreateMatch with
    "dictionary changed size during iteration")."""

    async def body() -> None:
        hub = Hub(Store(":memory:"), limits=Limits(keep_finished_matches=0))
        settings = match_settings_pb2.MatchSettings(
            rules=rules_pb2.Rules(overrides=rules_pb2.RuleOptions(players=2, target=11)), seed=3
        )
        session = hub.create_match(config_from_pb(settings))
        conns = []
        for seat, token in enumerate(session.tokens):
            conn = Connection()  # a plain client: its moves are delivered a step later
            hub.join(
                conn,
                protocol_version=PROTOCOL_VERSION,
                match_id=session.match_id,
                room_id="",
                token=token,
                name=f"seat {seat}",
                version="",
                resume=None,
            )
            conns.append(conn)
        counted = 0
        while session.match_id in hub.matches:
            for conn in conns:
                while not conn.queue.empty():
                    msg = conn.queue.get_nowait()
                    if isinstance(msg, DecisionMsg):
                        session.submit(conn, msg.decision_id, ByIndex(0))
                        # the move is pending: counting settles it (the last one ends
                        # the match, which leaves memory at once)
                        hub.check_create({}, "ipv4:192.0.2.1")
                        counted += 1
            await asyncio.sleep(0)
        assert counted > 10
        stored = hub.store.get_match(session.match_id)
        assert stored is not None and stored["status"] == "finished"

    asyncio.run(body())
