"""Hello.auto_play_forced: a seat that asks for it is never asked a decision with one
legal action; the server plays it for that seat at once, and for nobody else."""

from __future__ import annotations

import asyncio
import random
import subprocess
import sys
from pathlib import Path

import grpc
import pytest

from cirulla.clients.matches.supervise import LocalServer
from cirulla.rules import Game, Options
from cirulla.server.client import play_seat, random_choice
from cirulla.v1 import match_service_pb2 as ms
from cirulla.v1 import match_service_pb2_grpc, match_settings_pb2, play_pb2
from tests.bots.test_processes import create_match, run_bots
from tests.server.test_play import settings
from tests.server_harness import serving


def decisions(log: list[ms.PlayResponse]) -> list[play_pb2.DecisionRequest]:
    return [m.decision_request for m in log if m.WhichOneof("body") == "decision_request"]


def replay_legal_counts(record: dict) -> list[int]:
    """How many legal actions the mover had before each recorded action (rules core)."""
    game = Game(
        Options(**record["options"]), decks=record["decks"], first_dealer=record["first_dealer"]
    )
    counts = []
    for act in record["actions"]:
        counts.append(len(game.legal_codes()))
        game.apply(int(act["code"]), act["seat"])
    return counts


def play_one_game(
    request: match_settings_pb2.MatchSettings, seed: int, auto_seats: set[int]
) -> tuple[list[list[ms.PlayResponse]], dict]:
    """Every seat's messages (seats in ``auto_seats`` set Hello.auto_play_forced) and the
    stored record of the match's first game, on a real server."""

    async def main() -> tuple[list[list[ms.PlayResponse]], dict]:
        async with serving(":memory:") as (stub, srv, _ch):
            created = await stub.CreateMatch(ms.CreateMatchRequest(settings=request))
            rng = random.Random(seed)
            logs = await asyncio.gather(
                *[
                    play_seat(
                        stub,
                        created.match.match_id,
                        t.token,
                        random_choice(rng),
                        batches=True,
                        auto_play_forced=t.seat in auto_seats,
                    )
                    for t in sorted(created.seat_tokens, key=lambda t: t.seat)
                ]
            )
            await srv.hub.records_written()  # written on the hub's writer thread
            return list(logs), srv.hub.store.get_record(f"{created.match.match_id}-g1")

    return asyncio.run(main())


@pytest.mark.parametrize("players", [2, 4])
def test_only_the_seat_that_asked_has_its_forced_moves_played_unasked(players: int) -> None:
    logs, record = play_one_game(settings(players, target=31, seed=7), 7, {0})
    asked = decisions(logs[0])
    # Seat 0 is never asked to choose among one action; the others are, in the same game.
    assert asked and all(len(d.legal_actions) > 1 for d in asked)
    others_forced = sum(1 for log in logs[1:] for d in decisions(log) if len(d.legal_actions) == 1)
    assert others_forced > 0
    # The record marks exactly the moves played unasked, all seat 0's, each the only
    # legal action at that point (checked by replaying the rules core).
    counts = replay_legal_counts(record)
    auto = [a for a in record["actions"] if a["auto_played"]]
    assert auto and all(a["seat"] == 0 for a in auto)
    for act, count in zip(record["actions"], counts, strict=True):
        assert act["auto_played"] == (act["seat"] == 0 and count == 1)
    mine = [a for a in record["actions"] if a["seat"] == 0]
    assert len(mine) == len(asked) + len(auto)
    # No acceptance for a decision the seat never saw; its forced moves reach it as
    # card_played events like everyone's.
    asked_ids = {d.decision_id for d in asked}
    accepted = [
        m.action_accepted.decision_id for m in logs[0] if m.WhichOneof("body") == "action_accepted"
    ]
    assert set(accepted) <= asked_ids and len(accepted) == len(asked)
    played = [
        m.event.card_played
        for m in logs[0]
        if m.WhichOneof("body") == "event" and m.event.WhichOneof("body") == "card_played"
    ]
    assert sum(1 for p in played if p.seat == 0) == len(mine)
    # Every seat saw the same card_played events, in the same order.
    seen = [
        [
            (m.event.sequence, m.event.card_played.seat)
            for m in log
            if m.WhichOneof("body") == "event" and m.event.WhichOneof("body") == "card_played"
        ]
        for log in logs
    ]
    assert all(s == seen[0] for s in seen)


def test_a_forced_move_counts_as_an_instant_answer_on_the_clock() -> None:
    """With a bank and an increment, an unasked move adds the increment like any answer:
    a seat gains nothing and loses nothing by asking for it."""

    request = settings(2, target=21, seed=3)
    request.time_control.game_bank_ms = 60_000
    request.time_control.increment_ms = 1_000
    logs, record = play_one_game(request, 3, {0, 1})
    log = logs[0]
    auto = [a for a in record["actions"] if a["auto_played"]]
    assert auto and all(a["elapsed_ms"] <= 5 for a in auto)
    # Seat 0's bank grows by the increment across each of its moves, unasked ones too:
    # between two consecutive decisions with k moves of seat 0 in between (the first
    # answered, the rest forced), it gains about k seconds less the time it spent.
    mine = [a for a in record["actions"] if a["seat"] == 0]
    asked = decisions(log)
    banks = [d.clock.bank_time_left_ms for d in asked]
    assert len(mine) > len(asked)
    position = {a["decision_id"]: i for i, a in enumerate(mine)}
    for before, after, b0, b1 in zip(asked, asked[1:], banks, banks[1:], strict=False):
        moves = position[after.decision_id] - position[before.decision_id]
        spent = sum(
            a["elapsed_ms"]
            for a in mine[position[before.decision_id] : position[after.decision_id]]
        )
        assert b1 - b0 == pytest.approx(moves * 1_000 - spent, abs=5)


def test_the_kit_asks_for_it_only_for_policies_that_keep_no_account(tmp_path: Path) -> None:
    """random and greedy (bot processes) let the server play their forced moves; mcts,
    which follows the opponent's plays between its decisions, is asked every decision."""
    with LocalServer(tmp_path / "server.sqlite3", tmp_path / "server.log") as local:
        match_id, tokens = create_match(local.address, players=2, target=21, seed=4)
        results = run_bots(
            local.address, match_id, tokens, ["greedy", "mcts:iterations=20"], tmp_path
        )
        assert [code for code, _ in results] == [0, 0], results
        with grpc.insecure_channel(local.address) as channel:
            stub = match_service_pb2_grpc.MatchServiceStub(channel)
            listed = stub.ListRecords(ms.ListRecordsRequest(match_id=match_id), timeout=10)
            record = stub.GetRecord(
                ms.GetRecordRequest(record_id=listed.records[0].record_id), timeout=10
            ).record
    actions = [a for deal in record.deals for a in deal.actions]
    assert any(a.auto_played for a in actions if a.seat == 0)
    assert not any(a.auto_played for a in actions if a.seat == 1)
    text = subprocess.run(
        [
            sys.executable,
            "-m",
            "cirulla",
            "replay",
            "--db",
            str(tmp_path / "server.sqlite3"),
            listed.records[0].record_id,
            "--show",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert text.returncode == 0, text.stderr
    assert "(forced)" in text.stdout
