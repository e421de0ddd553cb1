"""Clocks, timeout policies, disconnects and resuming a seat."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from cirulla.server.client import ManualSeat, hello, submit_index
from cirulla.v1 import match_pb2, match_settings_pb2, play_pb2, rules_pb2
from cirulla.v1 import match_service_pb2 as ms
from tests.server_harness import run_with_server


def run(body: Callable[[Any, Any], Awaitable[None]], db: str = ":memory:") -> None:
    run_with_server(body, db)


async def start(stub: Any, **kw: Any) -> tuple[str, tuple[list[ManualSeat], Any]]:
    s = match_settings_pb2.MatchSettings(
        rules=rules_pb2.Rules(overrides=rules_pb2.RuleOptions(players=2, target=11)),
        seed=9,
        **kw,
    )
    m = await stub.CreateMatch(ms.CreateMatchRequest(settings=s))
    seats = [ManualSeat(stub), ManualSeat(stub)]
    for i, seat in enumerate(seats):
        seat.send(hello(m.match.match_id, m.seat_tokens[i].token, f"p{i}"))
    return m.match.match_id, (seats, m.seat_tokens)


async def first_decision(seats: list[ManualSeat]) -> tuple[int, Any]:
    """Which seat got the first decision_request, and the request."""
    for seat in seats:
        await seat.next("new_game")
    tasks = {asyncio.ensure_future(s.next("decision_request")): i for i, s in enumerate(seats)}
    done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    for p in pending:
        p.cancel()
    # Wait until the losers are really gone, so no stale waiter reads a later message.
    await asyncio.gather(*pending, return_exceptions=True)
    task = done.pop()
    return tasks[task], task.result().decision_request


def test_timeout_plays_the_default_action() -> None:
    # 1 s, not 150 ms: a test process held off the processor for longer than the limit
    # (a loaded CI machine) saw the first mover time out and the next seat's request
    # arrive before it read the first, and took the second seat for the first mover
    limit = 1000

    async def body(stub: Any, srv: Any) -> None:
        mid, (seats, _) = await start(
            stub,
            time_control=match_settings_pb2.TimeControl(move_limit_ms=limit),
            timeout_policy=match_settings_pb2.TIMEOUT_POLICY_PLAY_DEFAULT_ACTION,
        )
        mover, req = await first_decision(seats)
        assert req.clock.move_time_left_ms <= limit
        assert req.default_action_index == 0
        default = req.legal_actions[0].action
        other = seats[1 - mover]
        timeout = await other.next_event("timeout")
        assert timeout.timeout.seat == mover
        assert timeout.timeout.policy == match_settings_pb2.TIMEOUT_POLICY_PLAY_DEFAULT_ACTION
        played = await other.next_event("card_played")
        assert played.card_played.by_timeout
        assert played.card_played.card.code == default.card.code
        # A late answer to the timed-out decision is stale and changes nothing.
        seats[mover].send(submit_index(req.decision_id, 0))
        rej = await seats[mover].next("action_rejected")
        assert rej.action_rejected.reason in (
            play_pb2.REJECT_REASON_NOT_YOUR_TURN,
            play_pb2.REJECT_REASON_STALE_DECISION,
        )
        match = (await stub.GetMatch(ms.GetMatchRequest(match_id=mid))).match
        assert "timeout: 1" in match.seats[mover].notes
        session = srv.hub.matches[mid]
        assert session.run.actions[0]["by_timeout"] is True
        for s in seats:
            s.close()

    run(body)


def test_timeout_forfeits_the_game_and_the_record_replays(tmp_path: Any) -> None:
    db = str(tmp_path / "f.sqlite3")
    box: dict[str, Any] = {}

    async def body(stub: Any, srv: Any) -> None:
        mid, (seats, _) = await start(
            stub,
            time_control=match_settings_pb2.TimeControl(game_bank_ms=300),
            timeout_policy=match_settings_pb2.TIMEOUT_POLICY_FORFEIT_GAME,
        )
        mover, req = await first_decision(seats)
        assert req.clock.bank_time_left_ms <= 300
        over = await seats[1 - mover].next_event("game_over")
        assert over.game_over.reason == 3  # GAME_END_REASON_FORFEIT
        assert over.game_over.forfeit_seat == mover
        assert over.game_over.winner_side == 1 - mover
        result = await seats[1 - mover].next("match_result")
        assert list(result.match_result.games_won)[1 - mover] == 1
        match = (await stub.GetMatch(ms.GetMatchRequest(match_id=mid))).match
        assert match.status == 3
        assert "forfeit" in match.seats[mover].notes
        faulty, fine = match.seats[mover], match.seats[1 - mover]
        assert (faulty.timeouts, faulty.forfeits, faulty.illegal_actions) == (1, 1, 0)
        assert (fine.timeouts, fine.forfeits, fine.disconnects) == (0, 0, 0)
        # The same typed counts are read back from the database once the match is over.
        listed = await stub.ListMatches(ms.ListMatchesRequest())
        (stored,) = [m for m in listed.matches if m.match_id == mid]
        assert stored.seats[mover].timeouts == 1 and stored.seats[mover].forfeits == 1
        rec = await stub.GetRecord(ms.GetRecordRequest(record_id=f"{mid}-g1"))
        assert rec.record.result.reason == 3
        kinds = [e.WhichOneof("body") for e in rec.record.events]
        assert kinds[-2:] == ["timeout", "game_over"]
        assert rec.record.events[-2].timeout.seat == mover
        assert rec.record.events[-1] == over
        box["id"] = f"{mid}-g1"
        for s in seats:
            s.close()

    run(body, db)
    res = subprocess.run(
        [sys.executable, "-m", "cirulla", "replay", box["id"], "--db", db],
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stdout + res.stderr


def test_disconnect_and_resume_resends_the_pending_decision() -> None:
    async def body(stub: Any, srv: Any) -> None:
        mid, (seats, tokens) = await start(stub, disconnect_grace_ms=5000)
        mover, req = await first_decision(seats)
        last_seq = max(
            m.event.sequence for m in seats[mover].received if m.WhichOneof("body") == "event"
        )
        seats[mover].close()
        other = seats[1 - mover]
        gone = await other.next_event("player_disconnected")
        assert gone.player_disconnected.seat == mover
        assert gone.player_disconnected.grace_ms == 5000
        # Without resume the seat is free again only after the old stream is gone; with
        # resume it is taken over.
        back = ManualSeat(stub)
        back.send(hello(mid, tokens[mover].token, name="", resume=last_seq))
        welcome = (await back.next("welcome")).welcome
        assert welcome.resumed and welcome.seat == mover
        await back.next("new_game")
        view = (await back.next("view")).view
        assert view.seat == mover and len(view.hand) == 3
        again = (await back.next("decision_request")).decision_request
        assert again.decision_id == req.decision_id
        assert [a.notation for a in again.legal_actions] == [a.notation for a in req.legal_actions]
        events_after = [m.event.sequence for m in back.received if m.WhichOneof("body") == "event"]
        assert all(seq > last_seq for seq in events_after)
        back_again = await other.next_event("player_reconnected")
        assert back_again.player_reconnected.seat == mover
        back.send(submit_index(again.decision_id, 0))
        assert (await back.next("action_accepted")).action_accepted.decision_id == req.decision_id
        match = (await stub.GetMatch(ms.GetMatchRequest(match_id=mid))).match
        assert "disconnected" in match.seats[mover].notes
        assert match.seats[mover].disconnects == 1
        assert match.seats[1 - mover].disconnects == 0
        back.close()
        other.close()

    run(body)


def test_grace_period_expiry_applies_the_timeout_policy() -> None:
    async def body(stub: Any, srv: Any) -> None:
        _, (seats, _) = await start(stub, disconnect_grace_ms=200)
        mover, _ = await first_decision(seats)
        seats[mover].close()
        other = seats[1 - mover]
        await other.next_event("player_disconnected")
        timeout = await other.next_event("timeout")
        assert timeout.timeout.seat == mover
        played = await other.next_event("card_played")
        assert played.card_played.by_timeout and played.card_played.seat == mover
        other.close()

    run(body)


def test_the_increment_is_shown_and_added_to_the_bank_after_each_answer() -> None:
    bank, increment = 2_000, 60_000  # an increment far above any time spent here

    async def body(stub: Any, srv: Any) -> None:
        mid, (seats, _) = await start(
            stub,
            time_control=match_settings_pb2.TimeControl(game_bank_ms=bank, increment_ms=increment),
            timeout_policy=match_settings_pb2.TIMEOUT_POLICY_FORFEIT_GAME,
        )
        mover, req = await first_decision(seats)
        assert req.clock.increment_ms == increment
        assert req.clock.bank_time_left_ms <= bank
        seats[mover].send(submit_index(req.decision_id, 0))
        await seats[mover].next("action_accepted")
        other = seats[1 - mover]
        req2 = (await other.next("decision_request")).decision_request
        assert req2.clock.bank_time_left_ms <= bank  # the other seat has not answered yet
        other.send(submit_index(req2.decision_id, 0))
        again = (await seats[mover].next("decision_request")).decision_request
        # bank - time spent + increment: the bank grew past where it started.
        assert bank < again.clock.bank_time_left_ms <= bank + increment
        assert again.clock.increment_ms == increment
        match = (await stub.GetMatch(ms.GetMatchRequest(match_id=mid))).match
        assert match.settings.time_control.increment_ms == increment
        for s in seats:
            s.close()

    run(body)


def test_an_increment_without_a_bank_is_refused_in_one_line() -> None:
    async def body(stub: Any, srv: Any) -> None:
        s = match_settings_pb2.MatchSettings(
            time_control=match_settings_pb2.TimeControl(move_limit_ms=100, increment_ms=50)
        )
        try:
            await stub.CreateMatch(ms.CreateMatchRequest(settings=s))
        except Exception as exc:  # grpc.aio.AioRpcError
            assert "increment_ms" in exc.details() and "game_bank_ms" in exc.details()
        else:
            raise AssertionError("CreateMatch accepted an increment without a bank")

    run(body)


def test_an_answer_inside_the_margin_is_accepted_past_the_move_limit() -> None:
    limit = 150

    async def body(stub: Any, srv: Any) -> None:
        mid, (seats, _) = await start(
            stub,
            time_control=match_settings_pb2.TimeControl(move_limit_ms=limit, margin_ms=60_000),
            timeout_policy=match_settings_pb2.TIMEOUT_POLICY_FORFEIT_GAME,
        )
        mover, req = await first_decision(seats)
        assert req.clock.move_time_left_ms <= limit  # the margin is never shown
        await asyncio.sleep(3 * limit / 1000)
        seats[mover].send(submit_index(req.decision_id, 0))
        accepted = (await seats[mover].next("action_accepted")).action_accepted
        assert accepted.elapsed_ms > limit  # overran the limit, inside the margin
        match = (await stub.GetMatch(ms.GetMatchRequest(match_id=mid))).match
        assert match.seats[mover].timeouts == 0
        assert match.status == match_pb2.MATCH_STATUS_IN_PROGRESS
        for s in seats:
            s.close()

    run(body)


def test_an_overrun_past_the_margin_times_out() -> None:
    limit, margin = 100, 300

    async def body(stub: Any, srv: Any) -> None:
        mid, (seats, _) = await start(
            stub,
            time_control=match_settings_pb2.TimeControl(move_limit_ms=limit, margin_ms=margin),
            timeout_policy=match_settings_pb2.TIMEOUT_POLICY_PLAY_DEFAULT_ACTION,
        )
        mover, req = await first_decision(seats)
        assert req.clock.move_time_left_ms <= limit  # shown without the margin
        timeout = await seats[1 - mover].next_event("timeout")
        assert timeout.timeout.seat == mover
        action = srv.hub.matches[mid].run.actions[0]
        # The timeout waited for the limit and the margin (timers never fire early).
        assert action["by_timeout"] is True and action["elapsed_ms"] >= limit + margin - 1
        for s in seats:
            s.close()

    run(body)
