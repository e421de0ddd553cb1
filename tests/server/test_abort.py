"""AbortMatch: an admin ends a waiting or running match; everyone connected is told why,
and the database keeps it, also for a match the server no longer holds in memory."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import grpc
import pytest

from cirulla.server.client import ManualSeat, hello, play_seat, random_choice
from cirulla.server.hub import INTERRUPTED
from cirulla.server.store import Store
from cirulla.v1 import match_pb2, match_settings_pb2, play_pb2, rules_pb2
from cirulla.v1 import match_service_pb2 as ms
from tests.server_harness import run_with_server

TOKEN = "s3cret"
ADMIN = [("authorization", f"Bearer {TOKEN}")]


def run(body: Callable[[Any, Any], Awaitable[None]], db: str = ":memory:") -> None:
    run_with_server(body, db, admin_token=TOKEN)


async def create(stub: Any) -> Any:
    settings = match_settings_pb2.MatchSettings(
        rules=rules_pb2.Rules(overrides=rules_pb2.RuleOptions(players=2, target=11)), seed=4
    )
    return await stub.CreateMatch(ms.CreateMatchRequest(settings=settings), metadata=ADMIN)


async def status_of(call: Awaitable[Any]) -> grpc.StatusCode:
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await call
    return exc.value.code()


def test_abort_a_running_match_tells_everyone_and_is_kept() -> None:
    async def body(stub: Any, srv: Any) -> None:
        created = await create(stub)
        mid = created.match.match_id
        seats = [ManualSeat(stub) for _ in range(2)]
        for i, seat in enumerate(seats):
            seat.send(hello(mid, created.seat_tokens[i].token, f"p{i}"))
        for seat in seats:
            await seat.next("new_game")
        watcher = stub.Spectate(ms.SpectateRequest(match_id=mid))
        assert (await watcher.read()).WhichOneof("body") == "welcome"
        request = ms.AbortMatchRequest(match_id=mid, reason="seat 1 went silent")
        # Without the admin token nothing happens.
        code = await status_of(stub.AbortMatch(request))
        assert code == grpc.StatusCode.UNAUTHENTICATED
        wrong = [("authorization", "Bearer nope")]
        assert await status_of(stub.AbortMatch(request, metadata=wrong)) == (
            grpc.StatusCode.PERMISSION_DENIED
        )
        live = (await stub.GetMatch(ms.GetMatchRequest(match_id=mid))).match
        assert live.status == match_pb2.MATCH_STATUS_IN_PROGRESS and not live.abort_reason

        aborted = (await stub.AbortMatch(request, metadata=ADMIN)).match
        assert aborted.status == match_pb2.MATCH_STATUS_ABORTED
        assert aborted.abort_reason == "seat 1 went silent"
        assert not aborted.HasField("result")
        for seat in seats:
            bye = (await seat.next("goodbye")).goodbye
            assert bye.reason == play_pb2.GOODBYE_REASON_ABORTED
            assert bye.message == "seat 1 went silent"
        last = await watcher.read()
        while last.WhichOneof("body") != "goodbye":
            last = await watcher.read()
        assert last.goodbye.reason == play_pb2.GOODBYE_REASON_ABORTED

        # Kept: GetMatch, ListMatches by status, the database row.
        got = (await stub.GetMatch(ms.GetMatchRequest(match_id=mid))).match
        assert got.status == match_pb2.MATCH_STATUS_ABORTED
        assert got.abort_reason == "seat 1 went silent"
        listed = await stub.ListMatches(
            ms.ListMatchesRequest(status=match_pb2.MATCH_STATUS_ABORTED)
        )
        assert [m.match_id for m in listed.matches] == [mid]
        stored = srv.hub.store.get_match(mid)
        assert stored["status"] == "aborted" and stored["abort_reason"] == "seat 1 went silent"
        # Nobody can join it again; aborting twice changes nothing.
        back = ManualSeat(stub)
        back.send(hello(mid, created.seat_tokens[0].token, resume=0))
        with pytest.raises(grpc.aio.AioRpcError) as exc:
            await back.next()
        assert exc.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert "aborted" in (exc.value.details() or "")
        again = await stub.AbortMatch(
            ms.AbortMatchRequest(match_id=mid, reason="other"), metadata=ADMIN
        )
        assert again.match.abort_reason == "seat 1 went silent"
        # A spectator arriving later is told at once.
        late = [m async for m in stub.Spectate(ms.SpectateRequest(match_id=mid))]
        assert late[-1].goodbye.reason == play_pb2.GOODBYE_REASON_ABORTED
        for seat in (*seats, back):
            seat.close()

    run(body)


def test_abort_a_waiting_match_and_bad_requests() -> None:
    async def body(stub: Any, srv: Any) -> None:
        created = await create(stub)
        mid = created.match.match_id
        early = ManualSeat(stub)
        early.send(hello(mid, created.seat_tokens[0].token, "early"))
        await early.next("welcome")
        done = await stub.AbortMatch(ms.AbortMatchRequest(match_id=mid), metadata=ADMIN)
        assert done.match.status == match_pb2.MATCH_STATUS_ABORTED
        assert done.match.abort_reason == "aborted by the server's administrator"
        bye = (await early.next("goodbye")).goodbye
        assert bye.reason == play_pb2.GOODBYE_REASON_ABORTED
        early.close()

        def abort(match_id: str, reason: str = "") -> Any:
            req = ms.AbortMatchRequest(match_id=match_id, reason=reason)
            return stub.AbortMatch(req, metadata=ADMIN)

        assert await status_of(abort("m-nope")) == grpc.StatusCode.NOT_FOUND
        assert await status_of(abort("")) == grpc.StatusCode.INVALID_ARGUMENT
        other = await create(stub)
        assert await status_of(abort(other.match.match_id, "x" * 1001)) == (
            grpc.StatusCode.INVALID_ARGUMENT
        )
        # A finished match keeps its result.
        omid = other.match.match_id
        await asyncio.gather(
            *(
                play_seat(stub, omid, t.token, random_choice(random.Random(t.seat)))
                for t in other.seat_tokens
            )
        )
        with pytest.raises(grpc.aio.AioRpcError) as exc:
            await abort(omid, "too late")
        assert exc.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert "finished" in (exc.value.details() or "")
        finished = (await stub.GetMatch(ms.GetMatchRequest(match_id=omid))).match
        assert finished.status == match_pb2.MATCH_STATUS_FINISHED and finished.HasField("result")

    run(body)


def test_a_match_left_running_by_a_previous_server_is_aborted_at_start(tmp_path: Path) -> None:
    db = str(tmp_path / "abort.sqlite3")
    box: dict[str, str] = {}

    async def first(stub: Any, srv: Any) -> None:
        created = await create(stub)
        box["mid"] = created.match.match_id
        seats = [ManualSeat(stub) for _ in range(2)]
        for i, seat in enumerate(seats):
            seat.send(hello(box["mid"], created.seat_tokens[i].token))
        for seat in seats:
            await seat.next("new_game")
        for seat in seats:
            seat.close()

    async def second(stub: Any, srv: Any) -> None:
        mid = box["mid"]
        assert mid not in srv.hub.matches
        before = (await stub.GetMatch(ms.GetMatchRequest(match_id=mid))).match
        assert before.status == match_pb2.MATCH_STATUS_ABORTED
        assert before.abort_reason == INTERRUPTED
        # aborting it again returns it unchanged
        reply = await stub.AbortMatch(
            ms.AbortMatchRequest(match_id=mid, reason="server restarted"), metadata=ADMIN
        )
        assert reply.match.status == match_pb2.MATCH_STATUS_ABORTED

    run(first, db)
    run(second, db)
    store = Store(db)
    try:
        stored = store.get_match(box["mid"])
    finally:
        store.close()
    assert stored is not None
    assert (stored["status"], stored["abort_reason"]) == ("aborted", INTERRUPTED)
