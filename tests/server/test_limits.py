"""Hostile input is bounded: long strings are refused without being echoed, odd page
tokens and undecodable frames get INVALID_ARGUMENT, and a stream that never reads is
disconnected instead of buffered (issue 12, items 1, 3 and 5)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any

import grpc
import pytest

from cirulla.server.client import ManualSeat, Outbox, hello
from cirulla.server.limits import Limits
from cirulla.v1 import match_service_pb2 as ms
from cirulla.v1 import match_service_pb2_grpc, match_settings_pb2, play_pb2, rules_pb2
from tests.server_harness import run_with_server

HUGE = 200_000  # characters: far over every field limit, well under the frame limit


async def create(stub: Any) -> Any:
    settings = match_settings_pb2.MatchSettings(
        rules=rules_pb2.Rules(overrides=rules_pb2.RuleOptions(players=2, target=11)), seed=5
    )
    return await stub.CreateMatch(ms.CreateMatchRequest(settings=settings))


async def failure(call: Awaitable[Any]) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await call
    return exc.value


async def stream_failure(seat: ManualSeat) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        while True:
            await seat.next()
    return exc.value


@pytest.mark.parametrize("field", ["name", "version", "seat_token", "match_id"])
def test_oversized_hello_fields_are_refused_and_not_echoed(field: str) -> None:
    async def body(stub: Any, srv: Any) -> None:
        m = await create(stub)
        request = hello(m.match.match_id, m.seat_tokens[0].token, "ok")
        setattr(request.hello, field, "x" * HUGE)
        seat = ManualSeat(stub)
        seat.send(request)
        err = await stream_failure(seat)
        assert err.code() == grpc.StatusCode.INVALID_ARGUMENT, err.details()
        assert f"Hello.{field}" in (err.details() or "")
        assert len(err.details() or "") < 300
        assert srv.hub.matches[m.match.match_id].seats[0].name == ""

    run_with_server(body)


def test_oversized_ids_and_names_in_calls_are_refused() -> None:
    async def body(stub: Any, srv: Any) -> None:
        long = "m" * HUGE
        for call, field in (
            (stub.GetMatch(ms.GetMatchRequest(match_id=long)), "match_id"),
            (stub.GetRoom(ms.GetRoomRequest(room_id=long)), "room_id"),
            (stub.GetRecord(ms.GetRecordRequest(record_id=long)), "record_id"),
            (stub.AbortMatch(ms.AbortMatchRequest(match_id=long)), "match_id"),
            (stub.ListRecords(ms.ListRecordsRequest(match_id=long)), "match_id"),
            (stub.CreateRoom(ms.CreateRoomRequest(display_name=long)), "display_name"),
        ):
            err = await failure(call)
            assert err.code() == grpc.StatusCode.INVALID_ARGUMENT, (field, err.details())
            assert field in (err.details() or "") and len(err.details() or "") < 300
        watcher = stub.Spectate(ms.SpectateRequest(match_id=long))
        err = await failure(watcher.read())
        assert err.code() == grpc.StatusCode.INVALID_ARGUMENT

    run_with_server(body)


@pytest.mark.parametrize("token", ["²", "9" * 25, "9" * 5000, "-1", " 1", "abc"])
def test_odd_page_tokens_are_invalid_argument(token: str) -> None:
    async def body(stub: Any, srv: Any) -> None:
        for call in (
            stub.ListMatches(ms.ListMatchesRequest(page_token=token)),
            stub.ListRooms(ms.ListRoomsRequest(page_token=token)),
            stub.ListRecords(ms.ListRecordsRequest(page_token=token)),
        ):
            err = await failure(call)
            assert err.code() == grpc.StatusCode.INVALID_ARGUMENT, err.details()
            assert "page_token" in (err.details() or "")

    run_with_server(body)


def test_a_page_is_capped() -> None:
    async def body(stub: Any, srv: Any) -> None:
        for _ in range(5):
            await create(stub)
        page = await stub.ListMatches(ms.ListMatchesRequest(page_size=4_000_000_000))
        assert len(page.matches) == 5
        small = Limits(max_page=2)
        assert small.page_size(0) == 2 and small.page_size(10**9) == 2

    run_with_server(body)


def test_non_ascii_seat_token_is_unauthenticated() -> None:
    async def body(stub: Any, srv: Any) -> None:
        m = await create(stub)
        seat = ManualSeat(stub)
        seat.send(hello(m.match.match_id, "ťøķéñ"))
        err = await stream_failure(seat)
        assert err.code() == grpc.StatusCode.UNAUTHENTICATED, err.details()

    run_with_server(body)


def test_a_long_notation_is_refused_without_being_quoted() -> None:
    async def body(stub: Any, srv: Any) -> None:
        m = await create(stub)
        seats = [ManualSeat(stub) for _ in range(2)]
        for i, seat in enumerate(seats):
            seat.send(hello(m.match.match_id, m.seat_tokens[i].token, f"p{i}"))
        first = None
        for seat in seats:
            msg = await seat.next("decision_request", "new_game")
            if msg.WhichOneof("body") == "new_game":
                pass
        # whoever has the decision answers with a 200 kB notation of NULs
        for seat in seats:
            try:
                req = await seat.next("decision_request", timeout=0.5)
            except TimeoutError:
                continue
            first = (seat, req.decision_request.decision_id)
        assert first is not None
        seat, decision_id = first
        for _ in range(3):
            seat.send(
                ms.PlayRequest(
                    submit_action=play_pb2.SubmitAction(
                        decision_id=decision_id, notation="\0" * HUGE
                    )
                )
            )
            rejected = (await seat.next("action_rejected")).action_rejected
            assert rejected.reason == play_pb2.REJECT_REASON_INVALID
            assert "notation" in rejected.message and len(rejected.message) < 300
        for s in seats:
            s.close()

    run_with_server(body)


def test_a_stream_that_never_reads_is_disconnected_not_buffered() -> None:
    """A seat floods rejected submits and never reads its replies: the server drops it."""

    async def body(stub: Any, srv: Any) -> None:
        m = await create(stub)
        mid = m.match.match_id
        # Without BDP probing the client's receive window stays small (64 KiB), so the
        # replies it does not read pile up on the server quickly.
        address = f"127.0.0.1:{srv.port}"
        async with grpc.aio.insecure_channel(address, options=[("grpc.http2.bdp_probe", 0)]) as ch:
            out = Outbox()
            out.send(hello(mid, m.seat_tokens[0].token, "deaf"))
            call = match_service_pb2_grpc.MatchServiceStub(ch).Play(out)  # never read
            for _ in range(20_000):
                out.send(
                    ms.PlayRequest(
                        submit_action=play_pb2.SubmitAction(decision_id=999, legal_action_index=0)
                    )
                )
            session = srv.hub.matches[mid]
            for _ in range(300):
                await asyncio.sleep(0.05)
                if session.seats[0].conn is None and session.seats[0].name == "deaf":
                    break
            assert session.seats[0].conn is None, "the deaf stream still holds its seat"
            assert srv.hub.stats["slow_consumers"] == 1
            out.send(None)
            call.cancel()

    run_with_server(body, limits=Limits(stream_queue=64))


def _raw_play(channel: grpc.aio.Channel) -> Any:
    """A Play call that sends raw bytes (so a test can send an undecodable frame)."""
    return channel.stream_stream(
        "/cirulla.v1.MatchService/Play",
        request_serializer=lambda b: b,
        response_deserializer=ms.PlayResponse.FromString,
    )


def test_an_undecodable_frame_after_hello_ends_the_stream_with_a_status() -> None:
    from tests.server_harness import serving

    async def main() -> None:
        async with serving() as (stub, srv, channel):
            m = await create(stub)
            mid = m.match.match_id
            out = Outbox()
            call = _raw_play(channel)(out)
            out.send(hello(mid, m.seat_tokens[0].token, "p0").SerializeToString())
            first = await call.read()
            assert first.WhichOneof("body") == "welcome"
            out.send(b"\xff\xff\xff\xff")  # not a PlayRequest
            with pytest.raises(grpc.aio.AioRpcError) as exc:
                while True:
                    msg = await call.read()
                    if msg is grpc.aio.EOF:
                        break
            assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert "PlayRequest" in (exc.value.details() or "")
            session = srv.hub.matches[mid]
            assert session.seats[0].conn is None
            assert srv.hub.stats["undecodable_frames"] == 1
            assert session.seats[0].protocol_errors == 1
            # undecodable unary requests: INVALID_ARGUMENT, not UNKNOWN
            get = channel.unary_unary(
                "/cirulla.v1.MatchService/GetMatch",
                request_serializer=lambda b: b,
                response_deserializer=ms.GetMatchResponse.FromString,
            )
            err = await failure(get(b"\x0a\x05\xff\xfe\xfd\xfc\xfb"))
            assert err.code() == grpc.StatusCode.INVALID_ARGUMENT, err.details()

    asyncio.run(main())


def test_an_oversized_frame_is_refused() -> None:
    async def body(stub: Any, srv: Any) -> None:
        big = "x" * (Limits().max_request_bytes + 10)
        err = await failure(stub.GetMatch(ms.GetMatchRequest(match_id=big)))
        assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED

    run_with_server(body)
