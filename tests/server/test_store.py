"""The server's SQLite store never overwrites (issue 12, minor: ids restarting at ``m-1-``
with ``INSERT OR REPLACE`` would have replaced an old record silently)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from cirulla.server.store import Store


def record(record_id: str, text: str) -> dict[str, object]:
    """The columns the store indexes, and ``note`` to tell two versions apart."""
    return {
        "record_id": record_id,
        "match_id": "m-1-ab",
        "room_id": "",
        "game_number": 1,
        "finish_time": "2026-12-01T00:00:00.000+00:00",
        "note": text,
    }


def summary(match_id: str, status: str) -> dict[str, object]:
    return {
        "match_id": match_id,
        "room_id": "",
        "create_time": "2026-12-01T00:00:00.000+00:00",
        "status": status,
    }


def test_a_record_id_already_stored_is_refused_and_the_old_record_kept(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite3")
    store.save_record(record("m-1-ab-g1", "first"))
    with pytest.raises(sqlite3.IntegrityError):
        store.save_record(record("m-1-ab-g1", "second"))
    kept = store.get_record("m-1-ab-g1")
    assert kept is not None and kept["note"] == "first"
    assert len(store.list_records()) == 1


def test_a_match_id_already_stored_is_refused_and_the_old_match_kept(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite3")
    assert store.insert_match(summary("m-1-ab", "MATCH_STATUS_FINISHED"))
    assert not store.insert_match(summary("m-1-ab", "MATCH_STATUS_WAITING"))
    kept = store.get_match("m-1-ab")
    assert kept is not None and kept["status"] == "MATCH_STATUS_FINISHED"
    assert store.count_matches() == 1


def test_finished_games_are_written_off_the_event_loop() -> None:
    """Issue 12, under load: the end of a game must not stall every other match while its
    record is built and written. SQLite's own statement trace says which thread wrote."""
    import asyncio
    import random
    import threading

    from cirulla.server.client import play_seat, random_choice
    from cirulla.v1 import match_service_pb2 as ms
    from cirulla.v1 import match_settings_pb2, rules_pb2
    from tests.server_harness import serving

    writers: list[str] = []

    async def main() -> None:
        async with serving(":memory:") as (stub, srv, _channel):
            srv.hub.store._db.set_trace_callback(
                lambda sql: (
                    writers.append(threading.current_thread().name)
                    if sql.startswith("INSERT INTO records")
                    else None
                )
            )
            rules = rules_pb2.Rules(overrides=rules_pb2.RuleOptions(players=2, target=11))
            settings = match_settings_pb2.MatchSettings(rules=rules, seed=4)
            created = await stub.CreateMatch(ms.CreateMatchRequest(settings=settings))
            rng = random.Random(4)
            await asyncio.gather(
                *(
                    play_seat(stub, created.match.match_id, t.token, random_choice(rng))
                    for t in created.seat_tokens
                )
            )
            listed = await stub.ListRecords(ms.ListRecordsRequest(match_id=created.match.match_id))
            assert len(listed.records) == 1
            loop_thread = threading.current_thread().name
            assert writers and loop_thread not in writers

    asyncio.run(main())
    assert all(name.startswith("cirulla-records") for name in writers), writers


def test_recent_records_read_back_the_same_as_decoded_from_the_file(tmp_path: Path) -> None:
    """Reads of a record just written come from memory, not its JSON: what they give must
    be exactly what a reader of the database file gets (tuples, int keys and the like
    would differ after a JSON round trip)."""
    import asyncio
    import random

    from cirulla.server.client import play_seat, random_choice
    from cirulla.server.convert.records import game_summary_pb, record_pb
    from cirulla.server.documents import record_summary
    from cirulla.v1 import match_service_pb2 as ms
    from cirulla.v1 import match_settings_pb2, rules_pb2
    from tests.server_harness import serving

    db = tmp_path / "s.sqlite3"

    async def main() -> tuple[ms.GetRecordResponse, ms.ListRecordsResponse, str]:
        async with serving(db) as (stub, srv, _channel):
            rules = rules_pb2.Rules(overrides=rules_pb2.RuleOptions(players=3, target=11))
            settings = match_settings_pb2.MatchSettings(rules=rules, seed=6, best_of=3)
            created = await stub.CreateMatch(ms.CreateMatchRequest(settings=settings))
            match_id = created.match.match_id
            rng = random.Random(6)
            await asyncio.gather(
                *(
                    play_seat(stub, match_id, t.token, random_choice(rng))
                    for t in created.seat_tokens
                )
            )
            listed = await stub.ListRecords(ms.ListRecordsRequest(match_id=match_id))
            first = listed.records[-1].record_id
            assert first in srv.hub.store._recent  # served from memory
            got = await stub.GetRecord(ms.GetRecordRequest(record_id=first))
            return got, listed, match_id

    got, listed, match_id = asyncio.run(main())
    cold = Store(db)  # a new reader: nothing in memory, everything decoded from the file
    assert not cold._recent
    decoded = cold.get_record(got.record.record_id)
    assert decoded is not None
    assert record_pb(decoded) == got.record
    assert [
        game_summary_pb(record_summary(r)) for r in cold.list_records(match_id=match_id)
    ] == list(listed.records)


def test_the_recent_records_kept_in_memory_are_bounded(tmp_path: Path) -> None:
    from cirulla.server.store import RECENT_RECORDS

    store = Store(tmp_path / "s.sqlite3")
    for n in range(RECENT_RECORDS + 5):
        store.save_record(record(f"m-1-ab-g{n}", f"game {n}"))
    assert len(store._recent) == RECENT_RECORDS
    assert "m-1-ab-g0" not in store._recent
    oldest = store.get_record("m-1-ab-g0")  # from the file
    assert oldest is not None and oldest["note"] == "game 0"
    assert [r["note"] for r in store.list_records(limit=3)] == [
        f"game {n}" for n in (RECENT_RECORDS + 4, RECENT_RECORDS + 3, RECENT_RECORDS + 2)
    ]
