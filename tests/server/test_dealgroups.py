"""Duplicate-deal twins (CreateMatchRequest.deal_group): a record whose decks are still
in play in a twin is withheld from everyone without the admin token.

A real ``cirulla server`` subprocess, real bot processes, and a cheating bot process
(tests/programs/cheater.py) that snoops on records and streams on every decision.
"""

from __future__ import annotations

import asyncio
import json
import random
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest

from cirulla.bots.botspec import bot_command
from cirulla.clients.matches.supervise import LocalServer
from cirulla.server.client import play_seat, random_choice
from cirulla.v1 import match_service_pb2, match_service_pb2_grpc, match_settings_pb2, rules_pb2
from tests.server.test_play import settings
from tests.server_harness import run_with_server, serving

ADMIN = "admin-secret-for-tests"
CHEATER = Path(__file__).parents[1] / "programs" / "cheater.py"


def create(stub, seed: int, group: str = "", size: int = 0) -> tuple[str, list[str]]:
    settings = match_settings_pb2.MatchSettings(
        rules=rules_pb2.Rules(
            preset=rules_pb2.PRESET_STANDARD,
            overrides=rules_pb2.RuleOptions(players=2, target=11),
        ),
        seed=seed,
    )
    reply = stub.CreateMatch(
        match_service_pb2.CreateMatchRequest(
            settings=settings, deal_group=group, deal_group_size=size
        ),
        metadata=(("authorization", f"Bearer {ADMIN}"),),
        timeout=10,
    )
    return reply.match.match_id, [t.token for t in sorted(reply.seat_tokens, key=lambda t: t.seat)]


def play(address: str, match_id: str, tokens: list[str], argvs: list[list[str]], logs: Path):
    procs = []
    for seat, argv in enumerate(argvs):
        log = (logs / f"{match_id}-{seat}.log").open("w")
        procs.append(subprocess.Popen(argv, stdout=log, stderr=log))
    deadline = time.monotonic() + 120
    for proc in procs:
        proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    for seat, proc in enumerate(procs):
        assert proc.returncode == 0, (logs / f"{match_id}-{seat}.log").read_text()


def greedy(address: str, match_id: str, token: str) -> list[str]:
    return [sys.executable, "-m", "cirulla", *bot_command("greedy", address, match_id, token)]


def test_a_cheating_bot_cannot_read_its_twin_mid_match(tmp_path: Path) -> None:
    with LocalServer(tmp_path / "db.sqlite3", tmp_path / "server.log", ADMIN) as local:
        address = local.address
        channel = grpc.insecure_channel(address)
        stub = match_service_pb2_grpc.MatchServiceStub(channel)
        admin = (("authorization", f"Bearer {ADMIN}"),)

        # A match in no group: its record is anyone's (the cheater must see it, which
        # shows its snooping works).
        free_id, free_tokens = create(stub, seed=3)
        play(
            address,
            free_id,
            free_tokens,
            [greedy(address, free_id, t) for t in free_tokens],
            tmp_path,
        )

        # Twin A plays first; twin B (same seed, seats swapped) is not created yet.
        a_id, a_tokens = create(stub, seed=5, group="pair-1", size=2)
        play(address, a_id, a_tokens, [greedy(address, a_id, t) for t in a_tokens], tmp_path)
        record_a = f"{a_id}-g1"
        listed = stub.ListRecords(match_service_pb2.ListRecordsRequest(), timeout=10).records
        assert [r.record_id for r in listed] == [f"{free_id}-g1"]
        with pytest.raises(grpc.RpcError) as err:
            stub.GetRecord(match_service_pb2.GetRecordRequest(record_id=record_a), timeout=10)
        assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert (
            err.value.details() == "record withheld: its deal_group pair-1 still has games in play"
        )
        # The admin (the tournament runner) still reads it.
        assert stub.GetRecord(
            match_service_pb2.GetRecordRequest(record_id=record_a), metadata=admin, timeout=10
        ).record.deals

        b_id, b_tokens = create(stub, seed=5, group="pair-1", size=2)
        report = tmp_path / "cheater.json"
        cheater = [sys.executable, str(CHEATER), address, b_id, b_tokens[0], str(report), a_id]
        play(address, b_id, b_tokens, [cheater, greedy(address, b_id, b_tokens[1])], tmp_path)

        seen = json.loads(report.read_text())
        assert seen["decisions"] > 3
        # It found the free record, and nothing of its twin.
        assert f"{free_id}-g1" in seen["listed"]
        assert [f["record_id"] for f in seen["fetched"]] == [f"{free_id}-g1"] * 3
        assert record_a not in seen["listed"]
        # Nor the twin's summary: not listed, and refused by id (names, results, faults).
        assert a_id not in seen["matches_listed"] and free_id in seen["matches_listed"]
        assert seen["names_seen"] == []
        assert (
            seen["get_match_refused"]
            == [
                f"FAILED_PRECONDITION: match {a_id} withheld: its deal_group pair-1 has other "
                "games in play that share its deck orders (only the admin or its seat tokens "
                "may read it)"
            ]
            * 3
        )
        assert (
            "FAILED_PRECONDITION: record withheld: its deal_group pair-1 still has games in play"
            in seen["refused"]
        )
        assert seen["spectate_refused"] and all(
            "deal_group pair-1" in r for r in seen["spectate_refused"]
        )

        # Both twins ended: the records are public again, with every deck order.
        listed = stub.ListRecords(match_service_pb2.ListRecordsRequest(), timeout=10).records
        assert {r.record_id for r in listed} == {f"{free_id}-g1", record_a, f"{b_id}-g1"}
        rec = stub.GetRecord(match_service_pb2.GetRecordRequest(record_id=record_a), timeout=10)
        assert all(len(d.decks[-1].cards) == 40 for d in rec.record.deals)
        channel.close()


def test_deal_group_requests_are_checked() -> None:
    async def body(stub, srv) -> None:
        settings = match_settings_pb2.MatchSettings(
            rules=rules_pb2.Rules(preset=rules_pb2.PRESET_STANDARD)
        )
        for request, words in (
            (
                match_service_pb2.CreateMatchRequest(settings=settings, deal_group="g" * 129),
                "at most 128",
            ),
            (
                match_service_pb2.CreateMatchRequest(settings=settings, deal_group_size=2),
                "deal_group is empty",
            ),
            (
                match_service_pb2.CreateMatchRequest(settings=settings, deal_group="a\nb"),
                "printable",
            ),
        ):
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await stub.CreateMatch(request)
            assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert words in err.value.details()

    run_with_server(body)


def test_a_restarted_server_still_withholds_an_incomplete_group(tmp_path: Path) -> None:
    """The group registry is rebuilt from the database (an indexed lookup per group)."""
    db = tmp_path / "db.sqlite3"

    async def twin(stub) -> str:
        created = await stub.CreateMatch(
            match_service_pb2.CreateMatchRequest(
                settings=settings(2, 11, seed=21), deal_group="pair-9", deal_group_size=2
            )
        )
        await asyncio.gather(
            *[
                play_seat(stub, created.match.match_id, t.token, random_choice(random.Random(i)))
                for i, t in enumerate(created.seat_tokens)
            ]
        )
        return f"{created.match.match_id}-g1"

    async def main() -> None:
        async with serving(db) as (stub, _srv, _ch):
            first = await twin(stub)
        async with serving(db) as (stub, _srv, _ch):  # a new server process state
            listed = await stub.ListRecords(match_service_pb2.ListRecordsRequest())
            assert first not in [r.record_id for r in listed.records]
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await stub.GetRecord(match_service_pb2.GetRecordRequest(record_id=first))
            assert "deal_group pair-9" in err.value.details()
            second = await twin(stub)
            listed = await stub.ListRecords(match_service_pb2.ListRecordsRequest())
            assert {first, second} <= {r.record_id for r in listed.records}

    asyncio.run(main())
