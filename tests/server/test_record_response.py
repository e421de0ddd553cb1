"""GetRecord of a game still in memory (``convert.records.record_response``: its events'
bytes taken from their stream frames, the record's JSON not decoded) answers the very
bytes of the long way (``record_pb`` of the record as the store reads it back), and only
for the record this process wrote from that game.

Whole matches of 2, 3 and 4 players through the session (declarations, a drop and a
resume, a redeal, a dealer bonus, last takes: every kind of event, private hands
included), with the native stream writer and with the Python one; through gRPC, the
answer before the match leaves memory is the one after; a record pruned, or no longer
among the store's recent ones, is read the long way (or refused) as before.
"""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

import pytest

from cirulla.rules.events import HandDealt
from cirulla.server import service
from cirulla.server.client import play_seat, random_choice
from cirulla.server.convert.recordframing import record_response
from cirulla.server.convert.records import record_pb
from cirulla.server.documents import GameRecord
from cirulla.server.recordkeeping import finished_run, record_text
from cirulla.server.session import MatchSession
from cirulla.server.store import RECENT_RECORDS, Store
from cirulla.v1 import match_service_pb2 as ms
from cirulla.v1 import match_settings_pb2, rules_pb2
from tests.server.test_evict import evicted
from tests.server.test_framing_native import _python_writer
from tests.server.test_record_text import _played
from tests.server_harness import run_with_server

FINISH = "2026-12-07T08:00:00.000+00:00"


def _stored(session: MatchSession) -> Store:
    """A store holding every finished game of ``session``, written as the hub's writer
    thread writes them (``record_text``, ``save_record_text``)."""
    store = Store(":memory:")
    for run in session.runs:
        shell, text = record_text(run, **session.record_fields(finish=FINISH))
        store.save_record_text(shell, text)
    return store


def _check_match(session: MatchSession) -> set[str]:
    """Every game's answer both ways; the kinds of events seen."""
    store = _stored(session)
    kinds: set[str] = set()
    for run in session.runs:
        record_id = run.record_id
        assert finished_run(session.runs, record_id) is run
        shell = store.record_shell(record_id)
        assert shell is not None and shell["events"] == [] and shell["actions"] == []
        fast = record_response(shell, run.actions, run.events)
        long_way = store.get_record(record_id)  # decoded from its JSON, as before
        assert long_way is not None
        expected = ms.GetRecordResponse(record=record_pb(long_way)).SerializeToString()
        assert fast == expected
        assert ms.GetRecordResponse.FromString(fast).record == record_pb(long_way)
        # once decoded, the shell is the whole record: the same answer
        again = store.record_shell(record_id)
        assert again is long_way
        assert record_response(again, run.actions, run.events) == expected
        kinds |= {type(m.event).__name__ for m in run.events}
        # private hands are in the record (it shows every hand), each to its seat
        hands = [m for m in run.events if type(m.event) is HandDealt]
        assert hands and all(m.private_to == m.event.seat for m in hands)
    return kinds


@pytest.mark.parametrize(("players", "seed"), [(2, 0), (2, 7), (2, 39), (3, 1), (4, 2)])
def test_a_record_from_memory_is_the_stored_records_bytes(players: int, seed: int) -> None:
    """Byte for byte over every game of whole matches (seed 7: a dealer bonus, 39: a
    redeal), the events framed by the native writer when it is built."""
    kinds = _check_match(_played(players, seed))
    assert {"HandDealt", "CardPlayed", "RoundDealt", "DealStarted", "LastTake"} <= kinds
    assert {"DealScored", "GameEnded", "Disconnected", "Reconnected"} <= kinds


@pytest.mark.parametrize(("players", "seed"), [(2, 39), (4, 2)])
def test_the_same_with_the_python_stream_writer(
    monkeypatch: pytest.MonkeyPatch, players: int, seed: int
) -> None:
    """Played with every native entry point of the stream writer off (no C compiler)."""
    _python_writer(monkeypatch)
    _check_match(_played(players, seed))


def test_every_field_of_an_action_is_written_as_protobuf_writes_it() -> None:
    """Actions with what in-process games leave at zero (a timeout, a forced move played
    for the seat or not said, rejected attempts, milliseconds and decision ids past one
    varint byte, past 32 bits), a deal without actions, one with no scored result."""
    session = _played(2, 6)
    store = _stored(session)
    run = session.runs[0]
    record = store.get_record(run.record_id)
    assert record is not None
    actions: list[Any] = []
    for n, a in enumerate(record["actions"]):
        changed = dict(a)
        changed["decision_id"] = a["decision_id"] + (1 << 33 if n % 5 == 0 else 300 * n)
        changed["elapsed_ms"] = [0, 1, 200, 1 << 20, 1 << 40][n % 5]
        changed["by_timeout"] = n % 3 == 0
        changed["rejected_attempts"] = n % 4
        if n % 7 == 0:
            del changed["auto_played"]  # (a record written before the option)
        else:
            changed["auto_played"] = n % 2 == 0
        actions.append(changed)
    last = max(a["deal"] for a in actions)
    actions.append({**actions[-1], "deal": last + 2})  # a deal no scored deal names
    changed_record: Any = {**record, "actions": actions}
    expected = ms.GetRecordResponse(record=record_pb(changed_record)).SerializeToString()
    assert record_response(record, actions, run.events) == expected
    no_deals: Any = {**record, "deals": [], "actions": actions}
    expected = ms.GetRecordResponse(record=record_pb(no_deals)).SerializeToString()
    assert record_response(no_deals, actions, run.events) == expected


def test_a_frame_that_is_not_an_event_is_not_taken() -> None:
    """An event without its frame, or whose frame is not PlayResponse.event, is written
    by protobuf: the answer does not depend on what ``framed`` holds."""
    session = _played(2, 5)
    store = _stored(session)
    run = session.runs[0]
    shell = store.record_shell(run.record_id)
    assert shell is not None
    expected = record_response(shell, run.actions, run.events)
    for m in run.events[::3]:
        m.framed = None
    for m in run.events[1::3]:
        m.framed = b"\x12" + (m.framed or b"\x00")[1:]  # another field's tag
    assert record_response(shell, run.actions, run.events) == expected


def test_only_records_this_store_wrote_and_keeps_recent_have_a_shell() -> None:
    """A record pruned, pushed out of the recent ones, written by ``save_record`` (a
    whole dict) or by another process (the same file, a new store): no shell from text;
    GetRecord then reads it the long way, or says it was pruned."""
    session = _played(2, 11)
    store = _stored(session)
    first = session.runs[0].record_id
    assert store.record_shell(first) is not None
    store.prune_records("retention test", keep=0)
    assert store.record_shell(first) is None
    assert store.get_record(first) is None and store.pruned(first) == "retention test"

    store = _stored(session)
    record = store.get_record(first)
    assert record is not None
    other = Store(":memory:")
    other.save_record({**record, "record_id": "other-g1"})
    assert other.record_shell("other-g1") is other.get_record("other-g1")  # decoded: whole
    for n in range(RECENT_RECORDS):
        other.save_record({**record, "record_id": f"filler-{n}-g1"})
    assert other.record_shell("other-g1") is None


def test_listing_reads_summaries_without_decoding_the_records() -> None:
    """ListRecords' rows (``shells``): the summaries of the records as decoded; the recent
    records' JSON left as text."""
    session = _played(3, 4)
    store = _stored(session)
    shells = store.list_records(match_id=session.match_id, shells=True)
    assert all(not isinstance(e, dict) for e in store._recent.values())  # not decoded
    whole = store.list_records(match_id=session.match_id)
    assert [s["record_id"] for s in shells] == [r["record_id"] for r in whole]
    for shell, record in zip(shells, whole, strict=True):
        assert {**shell, "actions": [], "events": []} == {**record, "actions": [], "events": []}
        assert json.loads(json.dumps(shell)) == shell  # as JSON reads it back


def test_grpc_answers_the_same_before_and_after_the_match_leaves_memory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Through gRPC: while the match is in memory GetRecord answers from it (the fast
    path taken), after its eviction from the database; the same record, the same bytes."""
    calls: list[str] = []

    def spy(record: GameRecord, actions: Any, events: Any) -> bytes:
        calls.append(record["record_id"])
        return record_response(record, actions, events)

    monkeypatch.setattr(service, "record_response", spy)

    async def body(stub: Any, srv: Any) -> None:
        settings = match_settings_pb2.MatchSettings(
            rules=rules_pb2.Rules(overrides=rules_pb2.RuleOptions(players=2, target=11)),
            seed=3,
            best_of=3,
        )
        created = await stub.CreateMatch(ms.CreateMatchRequest(settings=settings))
        mid = created.match.match_id
        await asyncio.gather(
            *(
                play_seat(stub, mid, t.token, random_choice(random.Random(t.seat)))
                for t in created.seat_tokens
            )
        )
        listed = await stub.ListRecords(ms.ListRecordsRequest(match_id=mid))
        ids = sorted(r.record_id for r in listed.records)
        assert len(ids) >= 2
        before = [await stub.GetRecord(ms.GetRecordRequest(record_id=i)) for i in ids]
        assert calls == ids  # from memory
        await evicted(srv, mid)
        after = [await stub.GetRecord(ms.GetRecordRequest(record_id=i)) for i in ids]
        assert calls == ids  # from the database
        assert [a.SerializeToString() for a in after] == [b.SerializeToString() for b in before]
        assert after == before
        again = await stub.ListRecords(ms.ListRecordsRequest(match_id=mid))
        assert again == listed

    run_with_server(body, ":memory:", keep_finished_s=1.0)
