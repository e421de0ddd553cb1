"""Bad input gets a clear reason and changes nothing: tokens, seats, turns, stale ids,
illegal and malformed actions, protocol errors."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import grpc
import pytest

from cirulla.rules import Game, Options
from cirulla.server.client import ManualSeat, hello, submit_index
from cirulla.v1 import (
    cards_pb2,
    game_pb2,
    match_settings_pb2,
    play_pb2,
    rules_pb2,
)
from cirulla.v1 import match_service_pb2 as ms
from tests.server_harness import run_with_server

SEED = 3


def run(body: Callable[[Any, Any], Awaitable[None]]) -> None:
    run_with_server(body)


async def create(stub: Any, **kw: Any) -> Any:
    s = match_settings_pb2.MatchSettings(
        rules=rules_pb2.Rules(overrides=rules_pb2.RuleOptions(players=2, target=11)),
        seed=SEED,
        **kw,
    )
    return await stub.CreateMatch(ms.CreateMatchRequest(settings=s))


async def expect_status(seat: ManualSeat, code: grpc.StatusCode) -> str:
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        while True:
            await seat.next()
    assert exc.value.code() == code, exc.value.details()
    return exc.value.details() or ""


def submit(decision_id: int, **choice: Any) -> ms.PlayRequest:
    return ms.PlayRequest(submit_action=play_pb2.SubmitAction(decision_id=decision_id, **choice))


def test_hello_errors() -> None:
    async def body(stub: Any, srv: Any) -> None:
        m = await create(stub)
        mid = m.match.match_id
        for token, code in (
            ("", grpc.StatusCode.UNAUTHENTICATED),
            ("not-a-token", grpc.StatusCode.UNAUTHENTICATED),
        ):
            seat = ManualSeat(stub)
            seat.send(hello(mid, token))
            details = await expect_status(seat, code)
            assert "seat_token" in details
        seat = ManualSeat(stub)
        seat.send(hello("m-nope", m.seat_tokens[0].token))
        assert "no match" in await expect_status(seat, grpc.StatusCode.NOT_FOUND)
        seat = ManualSeat(stub)
        seat.send(ms.PlayRequest(list_commands=play_pb2.ListCommands()))
        assert "hello" in await expect_status(seat, grpc.StatusCode.INVALID_ARGUMENT)
        seat = ManualSeat(stub)  # a submission first (read without protobuf: service)
        seat.send(submit(1, legal_action_index=0))
        details = await expect_status(seat, grpc.StatusCode.INVALID_ARGUMENT)
        assert "must be hello" in details and "got submit_action" in details
        seat = ManualSeat(stub)
        bad = hello(mid, m.seat_tokens[0].token)
        bad.hello.protocol_version = "cirulla.v9/1"
        seat.send(bad)
        details = await expect_status(seat, grpc.StatusCode.FAILED_PRECONDITION)
        assert "protocol_version" in details
        first = ManualSeat(stub)
        first.send(hello(mid, m.seat_tokens[0].token))
        await first.next("welcome")
        dup = ManualSeat(stub)
        dup.send(hello(mid, m.seat_tokens[0].token))
        assert "seat 0" in await expect_status(dup, grpc.StatusCode.ALREADY_EXISTS)
        # The first stream is unaffected and still answers.
        first.send(ms.PlayRequest(list_commands=play_pb2.ListCommands()))
        assert "submit_action" in (await first.next("command_list")).command_list.commands
        first.send(ms.PlayRequest())  # empty oneof
        bye = await first.next("goodbye")
        assert bye.goodbye.reason == play_pb2.GOODBYE_REASON_PROTOCOL_ERROR
        assert "empty" in bye.goodbye.message
        with pytest.raises(grpc.aio.AioRpcError) as exc:
            await first.next()
        assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        with pytest.raises(grpc.aio.AioRpcError) as exc2:
            await stub.GetMatch(ms.GetMatchRequest(match_id="m-missing"))
        assert exc2.value.code() == grpc.StatusCode.NOT_FOUND
        with pytest.raises(grpc.aio.AioRpcError) as exc3:
            await stub.CreateMatch(
                ms.CreateMatchRequest(
                    settings=match_settings_pb2.MatchSettings(
                        rules=rules_pb2.Rules(overrides=rules_pb2.RuleOptions(players=5))
                    )
                )
            )
        assert exc3.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "players" in (exc3.value.details() or "")

    run(body)


def test_action_errors_are_rejected_and_change_nothing() -> None:
    async def body(stub: Any, srv: Any) -> None:
        m = await create(stub)
        mid = m.match.match_id
        seats = [ManualSeat(stub), ManualSeat(stub)]
        for i, s in enumerate(seats):
            s.send(hello(mid, m.seat_tokens[i].token, f"p{i}"))
        for s in seats:
            await s.next("welcome")
        # Server-side truth: the same seed gives the same first position.
        game = Game(Options(players=2, target=11), seed=SEED)
        mover = game.to_move
        assert mover is not None
        active, idle = seats[mover], seats[1 - mover]
        req = (await active.next("decision_request")).decision_request
        did = req.decision_id

        async def rejected(seat: ManualSeat, request: ms.PlayRequest) -> Any:
            seat.send(request)
            msg = await seat.next("action_rejected", "action_accepted")
            assert msg.WhichOneof("body") == "action_rejected", msg
            return msg.action_rejected

        r = await rejected(idle, submit_index(did, 0))
        assert r.reason == play_pb2.REJECT_REASON_NOT_YOUR_TURN and r.rule == ""
        r = await rejected(active, submit_index(did + 7, 0))
        assert r.reason == play_pb2.REJECT_REASON_STALE_DECISION
        assert r.open_decision_id == did
        n = len(req.legal_actions)
        r = await rejected(active, submit_index(did, n))
        assert r.reason == play_pb2.REJECT_REASON_INDEX_OUT_OF_RANGE
        assert r.rule == ""  # rule is only for ILLEGAL
        assert r.message.startswith(
            f"SubmitAction.legal_action_index: {n} is outside the valid range 0..{n - 1}"
        )
        assert r.open_decision_id == did
        r = await rejected(
            active, submit(did, action=game_pb2.Action(card=cards_pb2.Card(code="ZZ")))
        )
        assert r.reason == play_pb2.REJECT_REASON_INVALID
        assert r.message.startswith("SubmitAction.action.card: unknown card code 'ZZ'")
        r = await rejected(active, submit(did, notation="5H:"))
        assert r.reason == play_pb2.REJECT_REASON_INVALID
        r = await rejected(active, submit(did))
        assert r.reason == play_pb2.REJECT_REASON_INVALID and "empty" in r.message
        # A card not in hand, then an illegal capture: ILLEGAL naming the rule.
        hand = {c.code for c in req.view.hand}
        other = next(c for c in ("AD", "2D", "3D", "4D", "5D", "6D") if c not in hand)
        r = await rejected(active, submit(did, notation=other))
        assert r.reason == play_pb2.REJECT_REASON_ILLEGAL and r.rule == "card_in_hand"
        table = [c.code for c in req.view.table]
        card = req.view.hand[0].code
        legal = {
            (a.action.card.code, tuple(sorted(x.code for x in a.action.captures)))
            for a in req.legal_actions
        }
        bogus = next(
            (card, (t,))
            for t in [*table, "KS", "KC", "KD", "KH"]
            if (card, (t,)) not in legal and t != card
        )
        r = await rejected(
            active,
            submit(
                did,
                action=game_pb2.Action(
                    card=cards_pb2.Card(code=bogus[0]), captures=[cards_pb2.Card(code=bogus[1][0])]
                ),
            ),
        )
        assert r.reason == play_pb2.REJECT_REASON_ILLEGAL
        assert r.rule in {
            "capture",
            "capture_on_table",
            "must_capture",
            "ace_sweep",
            "pairing_precedence",
        }
        assert r.open_decision_id == did
        # Nothing changed: the same decision is open and the server's game is untouched.
        session = srv.hub.matches[mid]
        assert session.decision.id == did
        assert session.run.game.history == []
        # Counted: the index out of range and the two illegal actions (not the malformed).
        assert session.seats[mover].illegal == 3
        active.send(submit_index(did, 0))
        ok = (await active.next("action_accepted")).action_accepted
        assert ok.decision_id == did and ok.legal_action_index == 0
        assert session.run.game.history[0] == (mover, game.legal_codes()[0])
        summary = (await stub.GetMatch(ms.GetMatchRequest(match_id=mid))).match
        assert "illegal actions: 3" in summary.seats[mover].notes
        assert summary.seats[mover].illegal_actions == 3
        assert summary.seats[1 - mover].illegal_actions == 0
        assert summary.seats[mover].timeouts == 0
        for s in seats:
            s.close()

    run(body)


def test_record_of_unfinished_game_is_refused() -> None:
    async def body(stub: Any, srv: Any) -> None:
        m = await create(stub)
        mid = m.match.match_id
        seats = [ManualSeat(stub), ManualSeat(stub)]
        for i, s in enumerate(seats):
            s.send(hello(mid, m.seat_tokens[i].token))
        await seats[0].next("new_game")
        with pytest.raises(grpc.aio.AioRpcError) as exc:
            await stub.GetRecord(ms.GetRecordRequest(record_id=f"{mid}-g1"))
        assert exc.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        for s in seats:
            s.close()

    run(body)
