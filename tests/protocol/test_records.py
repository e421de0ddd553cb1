"""The one record file format: written from GetRecord, replayed, shown as text."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

from cirulla.server import records
from cirulla.server.replay import replay, replay_document
from cirulla.v1 import match_service_pb2 as ms
from tests.server.test_play import play_match, settings
from tests.server_harness import serving

CIRULLA = [sys.executable, "-m", "cirulla"]


def finished_records(players: int, best_of: int = 1, seed: int = 3) -> list:
    async def main() -> list:
        async with serving(":memory:") as (stub, _srv, _ch):
            resp, _logs = await play_match(stub, settings(players, best_of=best_of, seed=seed))
            listed = await stub.ListRecords(ms.ListRecordsRequest(match_id=resp.match.match_id))
            return [
                (await stub.GetRecord(ms.GetRecordRequest(record_id=s.record_id))).record
                for s in listed.records
            ]

    return asyncio.run(main())


def test_record_file_keeps_defaults_and_replays(tmp_path: Path) -> None:
    games = finished_records(players=4, best_of=3)
    doc = records.record_document(games, games[0].match_id)
    assert len(doc["records"]) == len(games) >= 2
    first = doc["records"][0]
    # seat 0 / side 0 and zero counters are written, not left out
    assert first["seats"][0]["seat"] == 0 and first["seats"][0]["side"] == 0
    assert "timeouts" in first["seats"][0]
    assert all("rejected_attempts" in a for d in first["deals"] for a in d["actions"])
    path = tmp_path / "match.json"
    path.write_text(records.dumps(doc))
    reports = replay_document(json.loads(path.read_text()))
    assert [r.ok for r in reports] == [True] * len(games), [r.mismatches for r in reports]
    assert all(r.actions > 0 and r.deals_checked >= 1 for r in reports)
    done = subprocess.run([*CIRULLA, "replay", str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count(": OK;") == len(games)


def test_tampered_record_file_is_a_mismatch(tmp_path: Path) -> None:
    (game,) = finished_records(players=2)
    doc = records.record_dict(game)
    doc["deals"][0]["result"]["scores"][0]["scope"] += 1
    path = tmp_path / "bad.json"
    path.write_text(records.dumps(doc))
    done = subprocess.run([*CIRULLA, "replay", str(path)], capture_output=True, text=True)
    assert done.returncode == 1
    assert "mismatch: deal 1: recorded score" in done.stdout
    path.write_text('{"record_id": "x", "deals": [{"decks": [{"cards": [{"rank": 99}]}]}]}')
    done = subprocess.run([*CIRULLA, "replay", str(path)], capture_output=True, text=True)
    assert done.returncode != 0 and "Traceback" not in done.stdout + done.stderr
    assert "record 1" in done.stdout + done.stderr or "malformed" in done.stdout


def test_text_form_lists_every_action_and_score(tmp_path: Path) -> None:
    (game,) = finished_records(players=2)
    text = records.record_text(game)
    action_lines = [line for line in text.splitlines() if ". seat " in line]
    assert len(action_lines) == sum(len(d.actions) for d in game.deals)
    assert text.count("Deal ") == len(game.deals)
    for deal in game.deals:
        for s in deal.result.scores:
            assert f"= {s.total}  (game {s.game_total})" in text
    assert text.rstrip().splitlines()[-1].startswith("Result: side ")
    path = tmp_path / "g.json"
    path.write_text(records.dumps(records.record_dict(game)))
    shown = subprocess.run(
        [*CIRULLA, "replay", "--show", str(path)], capture_output=True, text=True
    )
    assert shown.returncode == 0 and shown.stdout == text


def test_replay_input_matches_the_database_record() -> None:
    async def main() -> tuple:
        async with serving(":memory:") as (stub, srv, _ch):
            resp, _ = await play_match(stub, settings(3, seed=9))
            listed = await stub.ListRecords(ms.ListRecordsRequest(match_id=resp.match.match_id))
            rid = listed.records[0].record_id
            full = await stub.GetRecord(ms.GetRecordRequest(record_id=rid))
            return full.record, srv.hub.store.get_record(rid)

    public, internal = asyncio.run(main())
    mine = records.replay_input(public)
    for key in ("options", "decks", "first_dealer", "record_id"):
        assert mine[key] == internal[key], key
    assert [a["code"] for a in mine["actions"]] == [a["code"] for a in internal["actions"]]
    assert replay(mine).ok


def test_record_dict_is_what_protobuf_json_writes() -> None:
    """The fast record writer gives protobuf's own JSON mapping, field for field: 64-bit
    integers as strings, enums by name, timestamps, defaults written, unset optionals left
    out (2, 3 and 4 players, a forfeit-free match of three games)."""
    from google.protobuf import json_format

    games = [
        *finished_records(players=2, seed=5),
        *finished_records(players=3, seed=6),
        *finished_records(players=4, best_of=3, seed=7),
    ]
    for game in games:
        expected = json_format.MessageToDict(
            game, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
        )
        assert records.record_dict(game) == expected
    first = records.record_dict(games[0])
    assert isinstance(first["events"][0]["sequence"], str)  # uint64: a JSON string
    assert first["start_time"].endswith("Z")
    # and the file is compact, one line, read back to the same records
    text = records.dumps(records.record_document(games[-1:]))
    assert text.count("\n") == 1
    assert records.records_from_document(json.loads(text)) == games[-1:]


def test_json_that_is_no_record_is_one_line_not_a_mismatch(tmp_path: Path) -> None:
    """`cirulla replay` of a JSON file that is no record (a list, another document) says
    so in one line, exit 2: a list was a traceback, an object a `MISMATCH` report."""
    for n, content in enumerate(("[1]", '{"not": "a record"}', '"text"')):
        path = tmp_path / f"other-{n}.json"
        path.write_text(content)
        for show in ([], ["--show"]):
            done = subprocess.run(
                [sys.executable, "-m", "cirulla", "replay", *show, str(path)],
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert done.returncode == 2 and done.stdout == "", done.stdout + done.stderr
            assert done.stderr == (
                f"cirulla replay: {path}: not a record file: JSON, but neither the protocol's "
                "Record (a tournament's records/*.json, replay --export) nor a "
                "cirulla-record/1 document\n"
            )


def test_a_database_that_is_not_one_or_an_out_that_cannot_be_written_is_one_line(
    tmp_path: Path,
) -> None:
    """`replay --list --db FILE` of a file that is no database was a traceback (OSError)."""
    garbage = tmp_path / "garbage.txt"
    garbage.write_text("not a database\n")
    cases = [
        (["--list", "--db", str(garbage)], f"database {garbage}: file is not a database"),
        (["--export", "x", "--db", str(garbage)], f"database {garbage}: file is not a database"),
    ]
    for argv, words in cases:
        done = subprocess.run(
            [sys.executable, "-m", "cirulla", "replay", *argv],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 2, done.stdout + done.stderr
        assert done.stderr == f"cirulla replay: {words}\n"
