"""A duplicate twin (CreateMatchRequest.deal_group) shows nothing on any rpc or page while
its deal group is in play, and a seat's name and version are those of its first Hello.

The attack these close: a bot's process in one game renamed its seat on resume to spell
its hand, and its fresh process in the twin game (dealt alike, seats swapped) read that
name with GetMatch or ListMatches; anyone without a token could too. A real server on an
ephemeral port and the real web view, in one event loop; real Play streams.
"""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

import grpc
import pytest

from cirulla.clients.play.preflight import match_problem
from cirulla.ladder import await_join
from cirulla.server.client import ManualSeat, hello, play_seat, random_choice
from cirulla.server.web.app import start_web
from cirulla.v1 import match_pb2, match_settings_pb2, rules_pb2
from cirulla.v1 import match_service_pb2 as ms
from tests.server_harness import run_with_server

TOKEN = "twin-admin-secret"
ADMIN = (("authorization", f"Bearer {TOKEN}"),)


def bearer(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


async def create(stub: Any, seed: int, group: str = "", size: int = 0) -> tuple[str, list[str]]:
    settings = match_settings_pb2.MatchSettings(
        rules=rules_pb2.Rules(overrides=rules_pb2.RuleOptions(players=2, target=11)), seed=seed
    )
    created = await stub.CreateMatch(
        ms.CreateMatchRequest(settings=settings, deal_group=group, deal_group_size=size),
        metadata=ADMIN,
    )
    tokens = [t.token for t in sorted(created.seat_tokens, key=lambda t: t.seat)]
    return created.match.match_id, tokens


async def play(stub: Any, match_id: str, tokens: list[str], names: list[str]) -> None:
    await asyncio.gather(
        *[
            play_seat(stub, match_id, t, random_choice(random.Random(i)), name=names[i])
            for i, t in enumerate(tokens)
        ]
    )


async def refused(call: Any) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await call
    return exc.value.code(), exc.value.details() or ""


async def http_get(port: int, path: str) -> str:
    """The body of a plain HTTP/1.1 GET on the web view."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
    await writer.drain()
    data = await reader.read()
    writer.close()
    head, _, body = data.decode().partition("\r\n\r\n")
    assert head.startswith("HTTP/1.1 200"), head
    return body


def test_a_seat_keeps_the_name_and_version_of_its_first_hello() -> None:
    async def body(stub: Any, srv: Any) -> None:
        mid, tokens = await create(stub, seed=4)
        seats = [ManualSeat(stub) for _ in range(2)]
        seats[0].send(hello(mid, tokens[0], "alpha"))
        seats[1].send(hello(mid, tokens[1], "beta"))
        for seat in seats:
            await seat.next("new_game")

        # A resume under another name: refused, naming the field; nothing changes.
        renamer = ManualSeat(stub)
        renamer.send(hello(mid, tokens[0], "hand-7D-KC-1S", resume=0))
        with pytest.raises(grpc.aio.AioRpcError) as exc:
            await renamer.next()
        assert exc.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert exc.value.details() == (
            "Hello.name 'hand-7D-KC-1S' differs from 'alpha', seat 0's name since its first "
            "Hello: it cannot change (send the same or leave it empty)"
        )
        # ... and under another version (the same name): refused the same way.
        request = hello(mid, tokens[0], "alpha", resume=0)
        request.hello.version = "7D KC 1S"
        renamer = ManualSeat(stub)
        renamer.send(request)
        with pytest.raises(grpc.aio.AioRpcError) as exc:
            await renamer.next()
        assert exc.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert (exc.value.details() or "").startswith(
            "Hello.version '7D KC 1S' differs from 'test', seat 0's version"
        )
        got = (await stub.GetMatch(ms.GetMatchRequest(match_id=mid))).match
        assert [(s.name, s.version, s.connected) for s in got.seats] == [
            ("alpha", "test", True),  # the refused takeovers left the seat's stream alone
            ("beta", "test", True),
        ]

        # A resume with the same name, or with none, takes the seat over as before.
        for name in ("alpha", ""):
            back = ManualSeat(stub)
            back.send(hello(mid, tokens[0], name, resume=0))
            welcome = (await back.next("welcome")).welcome
            assert [s.name for s in welcome.seats] == ["alpha", "beta"]
            seats.append(back)
        got = (await stub.GetMatch(ms.GetMatchRequest(match_id=mid))).match
        assert [s.name for s in got.seats] == ["alpha", "beta"]
        for seat in (*seats, renamer):
            seat.close()

    run_with_server(body, admin_token=TOKEN)


def test_a_withheld_twin_shows_nothing_on_any_rpc_or_page_until_its_group_ends() -> None:
    async def body(stub: Any, srv: Any) -> None:
        web = await start_web("127.0.0.1:0", f"127.0.0.1:{srv.port}")
        try:
            await check(stub, web.port, f"127.0.0.1:{srv.port}")
        finally:
            await web.stop()

    async def check(stub: Any, port: int, address: str) -> None:
        free, free_tokens = await create(stub, seed=3)  # no group: anyone's, at once
        await play(stub, free, free_tokens, ["free-0", "free-1"])
        # Twin A is played; twin B (same group, announced size 2) is not even created.
        a, a_tokens = await create(stub, seed=5, group="pair-1", size=2)
        await play(stub, a, a_tokens, ["spells-7D-0", "spells-KC-1"])

        async def public_view() -> dict[str, Any]:
            """What anyone without a token can read about matches."""
            listed = await stub.ListMatches(ms.ListMatchesRequest())
            finished = await stub.ListMatches(
                ms.ListMatchesRequest(status=match_pb2.MATCH_STATUS_FINISHED)
            )
            records = await stub.ListRecords(ms.ListRecordsRequest())
            return {
                "listed": {m.match_id for m in listed.matches},
                "finished": {m.match_id for m in finished.matches},
                "records": {r.match_id for r in records.records},
                "names": {s.name for m in listed.matches for s in m.seats},
                "json": await http_get(port, "/api/matches"),
                "index": await http_get(port, "/"),
            }

        seen = await public_view()
        assert seen["listed"] == seen["finished"] == seen["records"] == {free}
        assert seen["names"] == {"free-0", "free-1"}
        for page in (seen["json"], seen["index"]):
            assert free in page and "free-0" in page
            assert a not in page and "spells-" not in page
        assert {m["match_id"] for m in json.loads(seen["json"])["matches"]} == {free}
        code, details = await refused(stub.GetMatch(ms.GetMatchRequest(match_id=a)))
        assert code == grpc.StatusCode.FAILED_PRECONDITION
        assert details == (
            f"match {a} withheld: its deal_group pair-1 has other games in play that share "
            "its deck orders (only the admin or its seat tokens may read it)"
        )
        # A wrong token is no better than none; AbortMatch's answer shows nothing either.
        code, _ = await refused(stub.GetMatch(ms.GetMatchRequest(match_id=a), metadata=bearer("x")))
        assert code == grpc.StatusCode.FAILED_PRECONDITION

        # The admin sees everything; the match's creator (a seat token) sees its match.
        for metadata in (ADMIN, bearer(a_tokens[1])):
            got = (await stub.GetMatch(ms.GetMatchRequest(match_id=a), metadata=metadata)).match
            assert [s.name for s in got.seats] == ["spells-7D-0", "spells-KC-1"]
            assert got.status == match_pb2.MATCH_STATUS_FINISHED and got.games
        admin_list = await stub.ListMatches(ms.ListMatchesRequest(), metadata=ADMIN)
        assert {m.match_id for m in admin_list.matches} == {free, a}
        admin_records = await stub.ListRecords(ms.ListRecordsRequest(), metadata=ADMIN)
        assert {r.match_id for r in admin_records.records} == {free, a}

        # The clients that follow their own match send its seat token: `cirulla play`'s
        # check before joining, the connect-in seat's stand-in (its match is over: 0).
        problem = await asyncio.to_thread(match_problem, address, a, joining=True)
        assert problem.startswith("127.0.0.1") and f"match {a} withheld" in problem
        assert "is over" in await asyncio.to_thread(
            match_problem, address, a, joining=True, token=a_tokens[0]
        )
        assert await asyncio.to_thread(await_join.wait, address, a, 0, 5.0, a_tokens[0]) == 0

        # Twin B is created and played: while it plays A stays withheld. B itself is
        # shown (as Spectate shows it): the other game of its group is over.
        b, b_tokens = await create(stub, seed=5, group="pair-1", size=2)
        assert (await public_view())["listed"] == {free, b}
        code, _ = await refused(stub.GetMatch(ms.GetMatchRequest(match_id=a)))
        assert code == grpc.StatusCode.FAILED_PRECONDITION
        # A seat token of B does not open A.
        code, _ = await refused(
            stub.GetMatch(ms.GetMatchRequest(match_id=a), metadata=bearer(b_tokens[0]))
        )
        assert code == grpc.StatusCode.FAILED_PRECONDITION
        await play(stub, b, b_tokens, ["b-0", "b-1"])

        # The group is over: everything is public, names included.
        seen = await public_view()
        assert seen["listed"] == seen["finished"] == seen["records"] == {free, a, b}
        assert {"spells-7D-0", "spells-KC-1", "b-0"} <= seen["names"]
        assert a in seen["json"] and "spells-7D-0" in seen["json"] and a in seen["index"]
        got = (await stub.GetMatch(ms.GetMatchRequest(match_id=a))).match
        assert [s.name for s in got.seats] == ["spells-7D-0", "spells-KC-1"]

    run_with_server(body, admin_token=TOKEN)


def test_a_withheld_twin_no_longer_in_memory_does_not_say_how_it_ended() -> None:
    """Evicted at once (keep_finished_s=0): Spectate and Hello answer from the database,
    and for a withheld twin say nothing of its status (finished or aborted, and when)."""

    async def body(stub: Any, srv: Any) -> None:
        a, a_tokens = await create(stub, seed=7, group="pair-2", size=2)
        await play(stub, a, a_tokens, ["a-0", "a-1"])
        while a in srv.hub.matches:
            await asyncio.sleep(0.01)
        answers = []
        for attempt in range(2):
            if attempt == 0:
                call = stub.Spectate(ms.SpectateRequest(match_id=a))
                with pytest.raises(grpc.aio.AioRpcError) as exc:
                    async for _ in call:
                        pass
            else:
                seat = ManualSeat(stub)
                seat.send(hello(a, "not-a-token", "x"))
                with pytest.raises(grpc.aio.AioRpcError) as exc:
                    await seat.next()
                seat.close()
            assert exc.value.code() == grpc.StatusCode.FAILED_PRECONDITION
            answers.append(exc.value.details() or "")
        expected = (
            f"match {a} is not live on this server (and withheld: its deal_group has other "
            "games in play)"
        )
        assert answers == [expected, expected]
        # Once its group is over, it says so as for any match.
        b, b_tokens = await create(stub, seed=7, group="pair-2", size=2)
        await play(stub, b, b_tokens, ["b-0", "b-1"])
        call = stub.Spectate(ms.SpectateRequest(match_id=a))
        with pytest.raises(grpc.aio.AioRpcError) as exc:
            async for _ in call:
                pass
        assert f"match {a} is finished" in (exc.value.details() or "")

    run_with_server(body, admin_token=TOKEN, keep_finished_s=0)
