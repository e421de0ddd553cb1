"""A record file's dict (``records.record_dict``, what a tournament writes after every
game) written by the converters made per message type is the dict of the plan's loop it
replaced, key for key and in the same order: the same file, byte for byte.

The loop is kept here as the reference. Records of whole matches (2, 3 and 4 players,
every kind of event), and messages with what records hold little of: 64-bit integers,
unknown enum values, unset optionals and oneofs, timestamps (left to json_format),
repeated enums; the converters made by several threads at once.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
from google.protobuf import json_format
from google.protobuf.message import Message

from cirulla.server import records
from cirulla.server.records import Document, _json_dict, _plan
from cirulla.v1 import events_pb2, match_pb2, match_service_pb2
from tests.protocol.test_records import finished_records


def _loop_dict(message: Message) -> Document:
    """The plan's loop, as ``records._message_dict`` was (the reference)."""
    plan = _plan(message.DESCRIPTOR)
    if plan is None:
        return _json_dict(message)
    out: Document = {}
    for name, kind, presence, repeated, enum_names in plan:
        if presence and not message.HasField(name):
            continue
        value = getattr(message, name)
        if kind == "plain":
            out[name] = list(value) if repeated else value
        elif kind == "message":
            out[name] = [_loop_dict(v) for v in value] if repeated else _loop_dict(value)
        elif kind == "enum":
            out[name] = (
                [enum_names.get(v, v) for v in value] if repeated else enum_names.get(value, value)
            )
        else:
            out[name] = [str(v) for v in value] if repeated else str(value)
    return out


def _same(message: Message) -> None:
    got = records._message_dict(message)
    assert json.dumps(got) == json.dumps(_loop_dict(message))  # the keys' order too
    assert got == json_format.MessageToDict(
        message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )


@pytest.fixture(scope="module")
def games() -> list[Any]:
    return [
        *finished_records(players=2, seed=5),
        *finished_records(players=3, seed=6),
        *finished_records(players=4, best_of=3, seed=7),
    ]


def test_records_of_whole_matches_are_the_loops_dicts(games: list[Any]) -> None:
    kinds = set()
    for game in games:
        _same(game)
        assert records.dumps(records.record_dict(game)) == records.dumps(_loop_dict(game))
        kinds |= {e.WhichOneof("body") for e in game.events}
    assert {"card_played", "hand_dealt", "deal_started", "deal_scored", "game_over"} <= kinds
    doc = records.record_document(games[-3:], games[-1].match_id)
    expected = {"match_id": games[-1].match_id, "records": [_loop_dict(g) for g in games[-3:]]}
    assert records.dumps(doc) == records.dumps(expected)


def test_messages_with_what_records_hold_little_of() -> None:
    event = events_pb2.Event(sequence=(1 << 63) + 5, game_number=2, deal_number=3)
    _same(event)  # no body set: no body key
    event.private_to_seat = 0  # an optional set to its default: written
    event.card_played.seat = 1
    event.card_played.scopa = True
    _same(event)
    record = match_pb2.Record(record_id="r", game_number=1)
    record.events.append(event)
    record.result.reason = 999  # an enum value the .proto does not name: its number
    record.result.totals.extend([0, 51])
    _same(record)  # timestamps unset (message fields: left out), seats empty
    record.start_time.FromSeconds(1_765_000_000)
    _same(record)
    response = match_service_pb2.PlayResponse()
    for body in ("welcome", "decision_request", "event", "goodbye", "match_result"):
        getattr(response, body).SetInParent()
        _same(response)


def test_converters_made_by_several_threads_at_once(
    games: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(records, "_CONVERTERS", {})
    monkeypatch.setattr(records, "_NAMES", {})
    monkeypatch.setattr(records, "_NAMESPACE", dict(records._NAMESPACE))
    expected = records.dumps(_loop_dict(games[0]))
    got: list[str] = []
    barrier = threading.Barrier(4)

    def write() -> None:
        barrier.wait()
        got.append(records.dumps(records.record_dict(games[0])))

    threads = [threading.Thread(target=write) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == [expected] * 4
