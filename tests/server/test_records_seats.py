"""A record's seats carry each seat's counts and notes so far in the match as its game
ended (SeatInfo's timeouts, illegal_actions, forfeits, disconnects, notes), wherever a
record is served: GetRecord (from memory and from the database), ListRecords' summaries,
the record file the tournament writes and its text form. They once were always zero in
records while GetMatch showed, for the same match, a seat's 108 illegal actions.

A real server; one seat answers with out-of-range indexes (counted as illegal actions)
and lets its move clock run out once (the default action is played for it). A record
stored before the counts were kept (no such keys) still reads, as zero.
"""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

from cirulla.server import records as record_files
from cirulla.server.client import Outbox, hello, submit_index
from cirulla.server.convert.records import game_summary_pb, record_pb
from cirulla.server.documents import GameRecord, record_summary
from cirulla.server.store import Store
from cirulla.v1 import match_pb2, match_settings_pb2, rules_pb2
from cirulla.v1 import match_service_pb2 as ms
from tests.server.test_evict import evicted
from tests.server_harness import run_with_server

FAULTY = 0
COUNTS = ("timeouts", "illegal_actions", "forfeits", "disconnects")


def counts(seat: match_pb2.SeatInfo) -> tuple[object, ...]:
    return (*(getattr(seat, c) for c in COUNTS), list(seat.notes))


async def play(stub: Any, match_id: str, token: str, seat: int, illegal: dict[int, int]) -> None:
    """Play ``seat`` to the end: the faulty seat first sends out-of-range indexes at each
    of its decisions (3, then nothing, at its first: its clock runs out; 1 later), and
    ``illegal`` counts them by game."""
    rng = random.Random(seat)
    out = Outbox()
    out.send(hello(match_id, token, f"p{seat}"))
    game, waited = 0, False
    async for msg in stub.Play(out):
        kind = msg.WhichOneof("body")
        if kind == "new_game":
            game = msg.new_game.game_number
        elif kind == "decision_request":
            req = msg.decision_request
            if seat == FAULTY:
                bad = 1 if waited else 3
                for _ in range(bad):
                    out.send(submit_index(req.decision_id, len(req.legal_actions)))
                illegal[game] = illegal.get(game, 0) + bad
                if not waited:
                    waited = True
                    continue  # no answer: the move limit plays the default action
            out.send(submit_index(req.decision_id, rng.randrange(len(req.legal_actions))))
        elif kind == "goodbye":
            break
    out.send(None)


def test_records_show_the_seats_counts_as_getmatch_does() -> None:
    async def body(stub: Any, srv: Any) -> None:
        settings = match_settings_pb2.MatchSettings(
            rules=rules_pb2.Rules(overrides=rules_pb2.RuleOptions(players=2, target=11)),
            seed=5,
            best_of=3,
            time_control=match_settings_pb2.TimeControl(move_limit_ms=1000),
            timeout_policy=match_settings_pb2.TIMEOUT_POLICY_PLAY_DEFAULT_ACTION,
        )
        created = await stub.CreateMatch(ms.CreateMatchRequest(settings=settings))
        mid = created.match.match_id
        illegal: dict[int, int] = {}
        await asyncio.gather(
            *(play(stub, mid, t.token, t.seat, illegal) for t in created.seat_tokens)
        )
        match = (await stub.GetMatch(ms.GetMatchRequest(match_id=mid))).match
        assert match.status == match_pb2.MATCH_STATUS_FINISHED
        faulty = match.seats[FAULTY]
        assert faulty.illegal_actions == sum(illegal.values()) > 3
        assert faulty.timeouts >= 1
        assert f"illegal actions: {faulty.illegal_actions}" in faulty.notes

        listed = (await stub.ListRecords(ms.ListRecordsRequest(match_id=mid))).records
        ids = sorted(r.record_id for r in listed)
        games = len(match.games)
        assert len(ids) == games >= 2
        from_memory = [(await stub.GetRecord(ms.GetRecordRequest(record_id=i))).record for i in ids]
        last = from_memory[-1]
        # The last game's record: the match's counts (GetMatch's, so far in the match).
        assert [counts(s) for s in last.seats] == [counts(s) for s in match.seats]
        assert not any(s.connected for s in last.seats)
        # Each game's record: the counts as that game ended (illegal actions by game).
        for n, record in enumerate(from_memory, 1):
            so_far = sum(k for g, k in illegal.items() if g <= n)
            assert record.seats[FAULTY].illegal_actions == so_far
            assert record.seats[FAULTY].timeouts >= 1
            assert f"illegal actions: {so_far}" in record.seats[FAULTY].notes
        assert from_memory[0].seats[FAULTY].illegal_actions < faulty.illegal_actions
        # ListRecords' summaries: the same seats as the records.
        by_id = {r.record_id: r for r in listed}
        assert [list(by_id[i].seats) for i in ids] == [list(r.seats) for r in from_memory]
        # The tournament's record file (records/<match>.json) and its text form.
        doc = json.loads(record_files.dumps(record_files.record_document(from_memory, mid)))
        seats = doc["records"][-1]["seats"]
        assert [{c: s[c] for c in (*COUNTS, "notes")} for s in seats] == [
            {c: getattr(s, c) if c != "notes" else list(s.notes) for c in (*COUNTS, "notes")}
            for s in match.seats
        ]
        assert record_files.records_from_document(doc) == from_memory
        text = record_files.record_text(last)
        assert f'[Seat{FAULTY}Notes "{", ".join(faulty.notes)}"]' in text
        # From the database, once the match left memory: the same records, the same bytes.
        await evicted(srv, mid)
        stored = [(await stub.GetRecord(ms.GetRecordRequest(record_id=i))).record for i in ids]
        assert [r.SerializeToString() for r in stored] == [
            r.SerializeToString() for r in from_memory
        ]
        again = (await stub.ListRecords(ms.ListRecordsRequest(match_id=mid))).records
        assert list(again) == list(listed)

    run_with_server(body, ":memory:", keep_finished_s=1.0)


def test_a_record_stored_without_the_counts_reads_as_zero() -> None:
    """A record written by an older server (its seats: seat, side, name, version only;
    one without version) converts: counts 0, no notes; the same bytes as before."""
    seats: list[Any] = [
        {"seat": 0, "side": 0, "name": "old", "version": "1.0"},
        {"seat": 1, "side": 1, "name": "older"},
    ]
    record: GameRecord = {
        "format": "cirulla-record/1",
        "record_id": "m-g1",
        "match_id": "m",
        "room_id": "",
        "game_number": 1,
        "options": {},
        "config": {
            "preset": "standard",
            "overrides": {},
            "options": {},
            "best_of": 1,
            "move_limit_ms": 0,
            "game_bank_ms": 0,
            "timeout_policy": "play_default_action",
            "first_dealer": None,
            "disconnect_grace_ms": 0,
        },
        "first_dealer": 0,
        "decks": [],
        "seats": seats,
        "actions": [],
        "events": [],
        "deals": [],
        "result": {
            "type": "GameEnded",
            "game_number": 1,
            "winner": 0,
            "totals": [11, 3],
            "cappotto": False,
            "reason": "target",
            "forfeit_seat": None,
            "deals": 2,
            "games_won": [1, 0],
        },
        "start_time": "2025-01-01T00:00:00.000+00:00",
        "finish_time": "2025-01-01T00:10:00.000+00:00",
    }
    store = Store(":memory:")
    store.save_record(record)
    loaded = store.get_record("m-g1")
    assert loaded is not None
    pb = record_pb(loaded)
    expected = [
        match_pb2.SeatInfo(seat=0, side=0, name="old", version="1.0"),
        match_pb2.SeatInfo(seat=1, side=1, name="older"),
    ]
    assert list(pb.seats) == expected
    assert list(game_summary_pb(record_summary(loaded)).seats) == expected
    assert "Notes" not in record_files.record_text(pb)
    dict_seats = record_files.record_dict(pb)["seats"]
    assert isinstance(dict_seats, list)
    assert [s["illegal_actions"] for s in dict_seats if isinstance(s, dict)] == [0, 0]
