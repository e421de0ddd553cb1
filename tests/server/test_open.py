"""An open server (no admin token) keeps to its limits: creation rate per address, live
matches, waiting matches and idle rooms evicted, streams without hello closed, and only
a match's creator may abort it."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable
from typing import Any

import grpc
import pytest

from cirulla.server.client import ManualSeat, play_seat, random_choice
from cirulla.server.limits import Limits
from cirulla.v1 import match_pb2, match_settings_pb2, rules_pb2
from cirulla.v1 import match_service_pb2 as ms
from tests.server_harness import run_with_server


def settings() -> match_settings_pb2.MatchSettings:
    return match_settings_pb2.MatchSettings(
        rules=rules_pb2.Rules(overrides=rules_pb2.RuleOptions(players=2, target=11))
    )


async def create(stub: Any, **kw: Any) -> Any:
    return await stub.CreateMatch(ms.CreateMatchRequest(settings=settings()), **kw)


async def code_of(call: Awaitable[Any]) -> grpc.StatusCode:
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await call
    return exc.value.code()


def test_creation_rate_per_address() -> None:
    async def body(stub: Any, srv: Any) -> None:
        for _ in range(3):
            await create(stub)
        assert await code_of(create(stub)) == grpc.StatusCode.RESOURCE_EXHAUSTED
        room = stub.CreateRoom(ms.CreateRoomRequest(display_name="r", settings=settings()))
        assert await code_of(room) == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert srv.hub.stats["creations_refused"] == 2

    run_with_server(body, limits=Limits(create_rate=0.01, create_burst=3))


def test_the_admin_is_not_rate_limited() -> None:
    async def body(stub: Any, srv: Any) -> None:
        for _ in range(5):
            await create(stub, metadata=[("authorization", "Bearer adm")])

    run_with_server(body, admin_token="adm", limits=Limits(create_rate=0.01, create_burst=1))


def test_live_matches_are_capped() -> None:
    async def body(stub: Any, srv: Any) -> None:
        await create(stub)
        await create(stub)
        assert await code_of(create(stub)) == grpc.StatusCode.RESOURCE_EXHAUSTED

    run_with_server(body, limits=Limits(max_live_matches=2))


def test_a_match_nobody_joins_is_aborted_after_the_waiting_timeout() -> None:
    async def body(stub: Any, srv: Any) -> None:
        m = await create(stub)
        await asyncio.sleep(0.8)
        got = (await stub.GetMatch(ms.GetMatchRequest(match_id=m.match.match_id))).match
        assert got.status == match_pb2.MATCH_STATUS_ABORTED
        assert "not every seat joined" in got.abort_reason
        await create(stub)  # the expired one no longer counts as live

    run_with_server(body, limits=Limits(waiting_timeout_s=0.3, max_live_matches=1))


def test_only_the_creator_may_abort_on_an_open_server() -> None:
    async def body(stub: Any, srv: Any) -> None:
        m = await create(stub)
        request = ms.AbortMatchRequest(match_id=m.match.match_id, reason="enough")
        assert await code_of(stub.AbortMatch(request)) == grpc.StatusCode.UNAUTHENTICATED
        other = await create(stub)
        foreign = [("authorization", f"Bearer {other.seat_tokens[0].token}")]
        assert await code_of(stub.AbortMatch(request, metadata=foreign)) == (
            grpc.StatusCode.PERMISSION_DENIED
        )
        own = [("authorization", f"Bearer {m.seat_tokens[1].token}")]
        reply = await stub.AbortMatch(request, metadata=own)
        assert reply.match.status == match_pb2.MATCH_STATUS_ABORTED

    run_with_server(body)


def test_a_stream_without_hello_is_closed() -> None:
    async def body(stub: Any, srv: Any) -> None:
        seat = ManualSeat(stub)
        with pytest.raises(grpc.aio.AioRpcError) as exc:
            await seat.next(timeout=5)
        assert exc.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        assert "hello" in (exc.value.details() or "")
        assert srv.hub.stats["hello_timeouts"] == 1

    run_with_server(body, limits=Limits(hello_timeout_s=0.3))


def test_rooms_keep_a_bounded_history_and_idle_rooms_are_dropped() -> None:
    async def body(stub: Any, srv: Any) -> None:
        room = await stub.CreateRoom(ms.CreateRoomRequest(display_name="club", settings=settings()))
        rid = room.room.room_id
        await asyncio.gather(
            *[
                play_seat(
                    stub, "", t.token, random_choice(random.Random(i)), room_id=rid, max_games=2
                )
                for i, t in enumerate(room.seat_tokens)
            ]
        )
        got = (await stub.GetRoom(ms.GetRoomRequest(room_id=rid))).room
        assert len(got.history) == 1
        listed = await stub.ListRecords(ms.ListRecordsRequest(room_id=rid))
        assert len(listed.records) >= 2
        for _ in range(50):
            await asyncio.sleep(0.1)
            if rid not in srv.hub.rooms:
                break
        assert await code_of(stub.GetRoom(ms.GetRoomRequest(room_id=rid))) == (
            grpc.StatusCode.NOT_FOUND
        )
        assert srv.hub.stats["rooms_evicted"] == 1

    run_with_server(body, limits=Limits(room_history=1, room_idle_s=0.5))
