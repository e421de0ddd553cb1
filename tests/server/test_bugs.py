"""Bugs found by reading the code (issue 12, items 6-9): an empty game bank still has a
deadline, best-of has one definition (a majority; no ties), room games keep the seats'
software versions in their records."""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any

import grpc
import pytest

from cirulla.rules import Match, OptionError, Options
from cirulla.rules.match import check_best_of, match_winner
from cirulla.server.client import play_seat, random_choice
from cirulla.server.clock import SeatClock, TimeControl
from cirulla.server.connections import Connection
from cirulla.server.decisions import ByIndex
from cirulla.server.match_config import MatchConfig
from cirulla.server.session import MatchSession
from cirulla.v1 import match_service_pb2 as ms
from cirulla.v1 import match_settings_pb2, rules_pb2
from tests.server_harness import run_with_server


def test_an_empty_bank_leaves_no_time_rather_than_unlimited_time() -> None:
    clock = SeatClock(TimeControl(game_bank_ms=100))
    clock.start()
    clock.started = time.monotonic() - 0.5  # the seat used 500 ms of its 100 ms
    clock.stop()
    assert clock.bank_left_ms == 0
    clock.start()
    assert clock.allowed_ms() == 0
    deadline = clock.deadline()
    assert deadline is not None and deadline <= time.monotonic()
    # no bank at all still means no deadline
    free = SeatClock(TimeControl())
    free.start()
    assert free.deadline() is None


def test_a_silent_seat_with_an_empty_bank_times_out() -> None:
    async def main() -> None:
        config = MatchConfig(
            options=Options.preset("standard", players=2, target=11),
            seed=3,
            time=TimeControl(game_bank_ms=50),
        )
        session = MatchSession("m-bank", config)
        conns = [Connection(), Connection()]
        for seat, conn in enumerate(conns):
            session.attach(seat, conn, name=f"p{seat}", version="t")
        decision = session.decision
        assert decision is not None
        seat = decision.seat
        session.turns.clocks[seat].bank_left_ms = 0  # spent earlier in the game
        session._schedule_timer()
        await asyncio.sleep(0.3)
        assert session.seats[seat].timeouts >= 1

    asyncio.run(main())


@pytest.mark.parametrize("best_of", [0, 2, 4, 100, 2**32 - 1])
def test_best_of_must_be_odd_and_sane(best_of: int) -> None:
    with pytest.raises(OptionError, match="best_of"):
        check_best_of(best_of)
    with pytest.raises(OptionError, match="best_of"):
        Match(Options(), best_of=best_of)


def test_best_of_is_a_majority_and_never_a_tie() -> None:
    assert match_winner([1, 0], 1) == 0
    assert match_winner([1, 1], 3) is None
    assert match_winner([2, 1], 3) == 0
    # three sides: 1-1-1 after three games of a best of 3 plays on
    assert match_winner([1, 1, 1], 3) is None
    assert match_winner([1, 2, 1], 3) == 1


def test_the_server_refuses_absurd_settings() -> None:
    async def body(stub: Any, srv: Any) -> None:
        for overrides, best_of, word in (
            ({"target": 0}, 1, "target"),
            ({"target": 1_000_000_000}, 1, "target"),
            ({}, 2, "best_of"),
            ({}, 2**32 - 1, "best_of"),
        ):
            s = match_settings_pb2.MatchSettings(
                rules=rules_pb2.Rules(overrides=rules_pb2.RuleOptions(players=2, **overrides)),
                best_of=best_of,
            )
            with pytest.raises(grpc.aio.AioRpcError) as exc:
                await stub.CreateMatch(ms.CreateMatchRequest(settings=s))
            assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert word in (exc.value.details() or "")

    run_with_server(body)


def test_three_players_best_of_three_never_ends_in_a_tie() -> None:
    async def main() -> None:
        config = MatchConfig(options=Options.preset("standard", players=3, target=11), best_of=3)
        for seed in range(6):
            config.seed = seed
            session = MatchSession(f"m-{seed}", config)
            conns = [Connection() for _ in range(3)]
            for seat, conn in enumerate(conns):
                session.attach(seat, conn, name=f"p{seat}", version="t")
            rng = random.Random(seed)
            while session.settled_status() == "in_progress":
                d = session.decision
                assert d is not None
                session.submit(conns[d.seat], d.id, ByIndex(rng.randrange(len(d.codes))))
            assert session.winner is not None
            assert session.games_won[session.winner] == 2

    asyncio.run(main())


def test_room_games_keep_the_software_versions() -> None:
    async def body(stub: Any, srv: Any) -> None:
        s = match_settings_pb2.MatchSettings(
            rules=rules_pb2.Rules(overrides=rules_pb2.RuleOptions(players=2, target=11))
        )
        room = await stub.CreateRoom(ms.CreateRoomRequest(display_name="club", settings=s))
        rid = room.room.room_id
        await asyncio.gather(
            *[
                play_seat(
                    stub, "", t.token, random_choice(random.Random(i)), room_id=rid, max_games=2
                )
                for i, t in enumerate(room.seat_tokens)
            ]
        )
        listed = await stub.ListRecords(ms.ListRecordsRequest(room_id=rid))
        assert len(listed.records) >= 2
        for summary in listed.records:
            record = (await stub.GetRecord(ms.GetRecordRequest(record_id=summary.record_id))).record
            assert [seat.version for seat in record.seats] == ["test", "test"], summary.record_id

    run_with_server(body)
