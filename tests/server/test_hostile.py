"""An attacker's inputs the other limit tests do not reach, each against a real server on
an ephemeral port: times in a match's settings beyond any game (one overflowed the
clock of a decision request and left the match hanging); names and reasons with terminal
escapes or line breaks, which every other seat, terminal and log would show; a name that
forged logfmt fields in the server's log."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import io
import logging
import random
from typing import Any

import grpc
import pytest

from cirulla.logs import setup_logging
from cirulla.rules import CARD_NAMES
from cirulla.server import logs as server_logs
from cirulla.server.client import ManualSeat, Outbox, hello, play_seat, random_choice
from cirulla.server.limits import MAX_TIME_MS
from cirulla.v1 import cards_pb2, game_pb2, match_settings_pb2, play_pb2, rules_pb2
from cirulla.v1 import match_service_pb2 as ms
from tests.server_harness import run_with_server
from tests.tournament.test_log_format import logfmt

U64 = 2**64 - 1


def settings(**fields: Any) -> match_settings_pb2.MatchSettings:
    if "deck_orders" not in fields:
        fields.setdefault("seed", 5)
    return match_settings_pb2.MatchSettings(
        rules=rules_pb2.Rules(overrides=rules_pb2.RuleOptions(players=2, target=11)), **fields
    )


@pytest.mark.parametrize(
    ("field", "fields"),
    [
        ("time_control.move_limit_ms", {"time_control": {"move_limit_ms": U64}}),
        ("time_control.game_bank_ms", {"time_control": {"game_bank_ms": U64}}),
        (
            "time_control.increment_ms",
            {"time_control": {"game_bank_ms": 60_000, "increment_ms": U64}},
        ),
        ("time_control.margin_ms", {"time_control": {"move_limit_ms": 1, "margin_ms": U64}}),
        ("disconnect_grace_ms", {"disconnect_grace_ms": MAX_TIME_MS + 1}),
    ],
)
def test_times_beyond_a_week_are_refused_naming_the_field(field: str, fields: Any) -> None:
    async def body(stub: Any, srv: Any) -> None:
        with pytest.raises(grpc.aio.AioRpcError) as exc:
            await stub.CreateMatch(ms.CreateMatchRequest(settings=settings(**fields)))
        assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        details = exc.value.details() or ""
        assert details.startswith(f"MatchSettings.{field} is ") and "limit" in details
        assert not srv.hub.matches

    run_with_server(body)


def test_the_longest_times_allowed_still_play_a_whole_match() -> None:
    """A week everywhere, the bank growing by a week at every answer: the clocks stay
    inside their uint64 fields and the match ends normally."""

    async def body(stub: Any, srv: Any) -> None:
        week = MAX_TIME_MS
        created = await stub.CreateMatch(
            ms.CreateMatchRequest(
                settings=settings(
                    time_control={
                        "move_limit_ms": week,
                        "game_bank_ms": week,
                        "increment_ms": week,
                        "margin_ms": week,
                    },
                    disconnect_grace_ms=week,
                )
            )
        )
        rng = random.Random(3)
        logs = await asyncio.wait_for(
            asyncio.gather(
                *(
                    play_seat(stub, created.match.match_id, t.token, random_choice(rng))
                    for t in created.seat_tokens
                )
            ),
            timeout=60,
        )
        for log in logs:
            assert log[-1].goodbye.reason == play_pb2.GOODBYE_REASON_MATCH_FINISHED

    run_with_server(body)


async def stream_failure(seat: ManualSeat) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        while True:
            await seat.next()
    return exc.value


ESCAPES = ["\x1b[2J\x1b[31mred", "two\nlines", "bell\x07", "\u202eevil", "tab\there"]


@pytest.mark.parametrize("text", ESCAPES)
def test_names_and_reasons_with_control_characters_are_refused(text: str) -> None:
    async def body(stub: Any, srv: Any) -> None:
        created = await stub.CreateMatch(ms.CreateMatchRequest(settings=settings()))
        match_id = created.match.match_id
        for field in ("name", "version"):
            request = hello(match_id, created.seat_tokens[0].token, "ok")
            setattr(request.hello, field, text)
            seat = ManualSeat(stub)
            seat.send(request)
            err = await stream_failure(seat)
            assert err.code() == grpc.StatusCode.INVALID_ARGUMENT, err.details()
            details = err.details() or ""
            assert details.startswith(f"Hello.{field} has a control or format character")
            assert details.isprintable() and text not in details
            seat.close()
        assert not srv.hub.matches[match_id].seats[0].joined
        with pytest.raises(grpc.aio.AioRpcError) as exc:
            await stub.CreateRoom(ms.CreateRoomRequest(display_name=text, settings=settings()))
        assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "CreateRoomRequest.display_name" in (exc.value.details() or "")
        assert not srv.hub.rooms
        with pytest.raises(grpc.aio.AioRpcError) as exc:
            await stub.AbortMatch(
                ms.AbortMatchRequest(match_id=match_id, reason=text),
                metadata=[("authorization", "Bearer " + created.seat_tokens[0].token)],
            )
        assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "AbortMatchRequest.reason" in (exc.value.details() or "")
        assert srv.hub.matches[match_id].status == "waiting"

    run_with_server(body)


def test_names_in_any_script_with_spaces_are_welcome() -> None:
    async def body(stub: Any, srv: Any) -> None:
        created = await stub.CreateMatch(ms.CreateMatchRequest(settings=settings()))
        seat = ManualSeat(stub)
        seat.send(hello(created.match.match_id, created.seat_tokens[0].token, "Zoë 🂡 <b>"))
        await seat.next("welcome")
        got = await stub.GetMatch(ms.GetMatchRequest(match_id=created.match.match_id))
        assert got.match.seats[0].name == "Zoë 🂡 <b>"
        seat.close()

    run_with_server(body)


def test_names_and_reasons_stay_one_field_of_the_log() -> None:
    """``name='x resumed=True match=m-forged'`` (the name's repr) parsed as three fields;
    each value is now one logfmt value, read back exactly."""
    name = "x resumed=True match=m-forged"
    reason = 'done match=m-forged \\ "quoted"'
    buffer = io.StringIO()
    logger = logging.getLogger("cirulla")
    saved = logger.handlers[:], logger.level, logger.propagate
    setup_logging("info", "server", logger="cirulla", stream=buffer)

    async def body(stub: Any, srv: Any) -> str:
        created = await stub.CreateMatch(ms.CreateMatchRequest(settings=settings()))
        seat = ManualSeat(stub)
        seat.send(hello(created.match.match_id, created.seat_tokens[0].token, name))
        await seat.next("welcome")
        await stub.AbortMatch(
            ms.AbortMatchRequest(match_id=created.match.match_id, reason=reason),
            metadata=[("authorization", "Bearer " + created.seat_tokens[0].token)],
        )
        seat.close()
        return str(created.match.match_id)

    try:
        match_id = run_with_server(body)
    finally:
        logger.handlers[:], logger.level, logger.propagate = saved
    lines = {}
    for line in buffer.getvalue().splitlines():
        fields = logfmt(line)
        assert "msg" not in fields, line  # every server line stays structured
        lines[line.split(" ")[4]] = fields
    joined, aborted = lines["seat_joined"], lines["match_aborted"]
    assert joined["match"] == match_id and joined["name"] == name
    assert joined["resumed"] == "False"
    assert aborted["match"] == match_id and aborted["reason"] == reason


class Spectator(ManualSeat):
    """A Spectate stream read in the background like a seat's (``next``, ``received``)."""

    def __init__(self, call: Any) -> None:
        self.call = call
        self.received = []
        self.inbox = asyncio.Queue()
        self.reader = asyncio.ensure_future(self._read())

    def close(self) -> None:
        self.call.cancel()
        self.reader.cancel()


ADMIN_TOKEN = "hostile-admin-secret"
ADMIN = [("authorization", "Bearer " + ADMIN_TOKEN)]


def test_a_spectator_of_a_twin_stops_watching_when_its_group_reopens() -> None:
    """Spectate(A) is allowed while A is its deal group's only match; once B joins the
    group with the same decks, A's public events would show every card B is yet to
    deal. The public spectator gets a goodbye then; the admin's keeps watching."""

    async def body(stub: Any, srv: Any) -> None:
        request = ms.CreateMatchRequest(settings=settings(), deal_group="twins")
        a = await stub.CreateMatch(request, metadata=ADMIN)
        watch = ms.SpectateRequest(match_id=a.match.match_id)
        public, admin = (
            Spectator(stub.Spectate(watch)),
            Spectator(stub.Spectate(watch, metadata=ADMIN)),
        )
        for watcher in (public, admin):
            await watcher.next("welcome")
        b = await stub.CreateMatch(request, metadata=ADMIN)
        bye = await public.next("goodbye")
        assert bye.goodbye.reason == play_pb2.GOODBYE_REASON_ABORTED
        assert bye.goodbye.message == (
            f"match {a.match.match_id} can no longer be watched: match {b.match.match_id} of "
            "its deal_group twins shares its deck orders and is yet to be played"
        )
        assert srv.hub.matches[a.match.match_id].delivery.spectators == {
            c for c in srv.hub.matches[a.match.match_id].delivery.spectators if c.trusted
        }
        rng = random.Random(4)
        await asyncio.wait_for(
            asyncio.gather(
                *(
                    play_seat(stub, a.match.match_id, t.token, random_choice(rng))
                    for t in a.seat_tokens
                )
            ),
            timeout=60,
        )
        played = await admin.next_event("card_played")
        assert played.card_played.card.code
        assert not any(m.WhichOneof("body") == "event" for m in public.received), (
            "the public spectator saw no card of A"
        )
        for watcher in (public, admin):
            watcher.close()

    run_with_server(body, admin_token=ADMIN_TOKEN)


def test_an_error_in_an_event_loop_callback_is_one_logfmt_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """An exception in a callback of the server's loop (how the overflowing clock above
    surfaced) went to stderr as a bare line and a raw traceback; ``cirulla server``'s
    logging now writes it as one logfmt line with the traceback in ``exc``."""
    loggers = [logging.getLogger(name) for name in ("cirulla", *server_logs.LIBRARY_LOGGERS)]
    saved = [(lg.handlers[:], lg.level, lg.propagate) for lg in loggers]
    server_logs.setup_logging("info")

    def broken() -> None:
        raise ZeroDivisionError("a callback that fails")

    async def body(stub: Any, srv: Any) -> None:
        asyncio.get_running_loop().call_soon(broken)
        await asyncio.sleep(0.05)
        created = await stub.CreateMatch(ms.CreateMatchRequest(settings=settings()))
        assert created.match.match_id  # the server serves on

    try:
        run_with_server(body)
    finally:
        for lg, (handlers, level, propagate) in zip(loggers, saved, strict=True):
            lg.handlers[:], lg.level, lg.propagate = handlers, level, propagate
    lines = capsys.readouterr().err.splitlines()
    failures = [fields for fields in map(logfmt, lines) if fields.get("logger") == "asyncio"]
    assert len(failures) == 1, lines
    assert failures[0]["level"] == "error" and failures[0]["proc"] == "server"
    assert "ZeroDivisionError: a callback that fails" in failures[0]["exc"]


def test_list_matches_refuses_an_unknown_status() -> None:
    """An unknown MatchStatus was read as "any" and listed every match."""

    async def body(stub: Any, srv: Any) -> None:
        await stub.CreateMatch(ms.CreateMatchRequest(settings=settings()))
        with pytest.raises(grpc.aio.AioRpcError) as exc:
            await stub.ListMatches(ms.ListMatchesRequest(status=99))
        assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert (exc.value.details() or "").startswith("ListMatchesRequest.status: 99 is unknown")
        waiting = await stub.ListMatches(ms.ListMatchesRequest(status=1))
        assert len(waiting.matches) == 1
        assert not (await stub.ListMatches(ms.ListMatchesRequest(status=3))).matches

    run_with_server(body)


def test_streams_cancelled_before_their_hello_log_nothing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A client that opens Play and cancels it before sending hello left the server's
    read of the first message to fail unobserved: one ERROR line ("Task exception was
    never retrieved", StopAsyncIteration) per stream, 3211 of them for 5000 streams in
    the attack run, which a client could repeat to flood the log."""
    loggers = [logging.getLogger(name) for name in ("cirulla", *server_logs.LIBRARY_LOGGERS)]
    saved = [(lg.handlers[:], lg.level, lg.propagate) for lg in loggers]
    server_logs.setup_logging("info")

    async def body(stub: Any, srv: Any) -> None:
        calls = [stub.Play(Outbox()) for _ in range(200)]
        await asyncio.sleep(0.5)  # every call reached the server's wait for hello
        for call in calls:
            call.cancel()
        await asyncio.sleep(0.5)
        gc.collect()  # an unretrieved task exception is reported when the task is freed
        created = await stub.CreateMatch(ms.CreateMatchRequest(settings=settings()))
        assert created.match.match_id

    try:
        run_with_server(body)
    finally:
        for lg, (handlers, level, propagate) in zip(loggers, saved, strict=True):
            lg.handlers[:], lg.level, lg.propagate = handlers, level, propagate
    errors = [line for line in capsys.readouterr().err.splitlines() if "level=error" in line]
    assert not errors, errors[:3]


HUGE_CODE = "Z" * 200_000  # far over any card code, under the 256 KiB frame limit


def test_an_oversized_card_code_is_refused_without_being_echoed() -> None:
    """The decoder quotes an unknown card code: a 200,000-character one came back whole,
    in ActionRejected.message, and in CreateMatch's status, where it passed the client's
    16 KiB limit for status details (RESOURCE_EXHAUSTED, the real error lost)."""

    async def body(stub: Any, srv: Any) -> None:
        deck = [cards_pb2.Card(code=CARD_NAMES[c]) for c in range(40)]
        deck[3] = cards_pb2.Card(code=HUGE_CODE)
        request = ms.CreateMatchRequest(settings=settings(deck_orders={"decks": [{"cards": deck}]}))
        with pytest.raises(grpc.aio.AioRpcError) as exc:
            await stub.CreateMatch(request)
        assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert exc.value.details() == (
            "MatchSettings.deck_orders.decks[0].cards[3].code has 200000 characters; "
            "the limit is 16"
        )
        created = await stub.CreateMatch(ms.CreateMatchRequest(settings=settings()))
        seats = [ManualSeat(stub) for _ in created.seat_tokens]
        for seat, token in zip(seats, created.seat_tokens, strict=True):
            seat.send(hello(created.match.match_id, token.token))
        mover, decision = seats[0], None
        for seat in seats:
            with contextlib.suppress(TimeoutError):
                decision = (await seat.next("decision_request", timeout=1)).decision_request
                mover = seat
                break
        assert decision is not None
        hand = decision.view.hand[0]
        for action, field in (
            (game_pb2.Action(card=cards_pb2.Card(code=HUGE_CODE)), "card.code"),
            (
                game_pb2.Action(card=hand, captures=[cards_pb2.Card(code=HUGE_CODE)]),
                "captures[0].code",
            ),
        ):
            mover.send(
                ms.PlayRequest(
                    submit_action=play_pb2.SubmitAction(
                        decision_id=decision.decision_id, action=action
                    )
                )
            )
            rejected = (await mover.next("action_rejected")).action_rejected
            assert rejected.reason == play_pb2.REJECT_REASON_INVALID
            assert rejected.message == (
                f"SubmitAction.action.{field} has 200000 characters; the limit is 16"
            )
            assert rejected.open_decision_id == decision.decision_id
        mover.send(
            ms.PlayRequest(
                submit_action=play_pb2.SubmitAction(
                    decision_id=decision.decision_id,
                    action=game_pb2.Action(card=cards_pb2.Card(code=" 7h ")),
                )
            )
        )
        answer = await mover.next("action_rejected", "action_accepted")
        assert "Z" * 20 not in str(answer)  # a short code is decoded as before
        for seat in seats:
            seat.close()

    run_with_server(body)
