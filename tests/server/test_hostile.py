"""An attacker's inputs the other limit tests do not reach, each against a real server on
an ephemeral port: times in a match's settings beyond any game (one overflowed the
clock of a decision request and left the match hanging)."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import grpc
import pytest

from cirulla.server.client import play_seat, random_choice
from cirulla.server.limits import MAX_TIME_MS
from cirulla.v1 import match_service_pb2 as ms
from cirulla.v1 import match_settings_pb2, play_pb2, rules_pb2
from tests.server_harness import run_with_server

U64 = 2**64 - 1


def settings(**fields: Any) -> match_settings_pb2.MatchSettings:
    return match_settings_pb2.MatchSettings(
        rules=rules_pb2.Rules(overrides=rules_pb2.RuleOptions(players=2, target=11)),
        seed=5,
        **fields,
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
