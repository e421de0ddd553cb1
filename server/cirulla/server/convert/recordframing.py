"""GetRecord's answer for a game still in memory, written as protobuf bytes (``framing``'s
way) from what the game kept, not decoded from the record's JSON.

A tournament asks for every record right after its game. The long way (``records.
record_pb`` of the stored record) decodes the record's JSON, makes an event object of
every entry and a protobuf message of every event, deal and action again: some 5 ms of
the server's CPU per game of ~165 decisions, as much as a third of what its decisions
cost. While the match is still in memory its game has all of it at hand: every event's
bytes were written once, when it was published, for the streams (``EventMsg.framed``:
PlayResponse.event holds the same Event message as Record.events, so the record's entry
is the frame with Record.events' tag), and the actions are the record's own dicts.

``record_response`` writes the very bytes of ``GetRecordResponse{record_pb(record)}``
(tests/server/test_record_response.py compares them over whole matches of 2, 3 and 4
players, with the native stream writer and the Python one): the record's header and tail
by protobuf, its deals here by hand (each action's own part cached by code), the events
from their frames (one without a frame, ``GameEnded``, by protobuf).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from cirulla import wire
from cirulla.server.convert.framing import _card_entries, message_field, uint_field, varint
from cirulla.server.convert.live import deal_result_pb, event_pb
from cirulla.server.convert.records import record_header_pb, record_tail_pb
from cirulla.server.documents import GameRecord, RecordAction
from cirulla.server.messages import EventMsg
from cirulla.v1 import match_pb2, match_settings_pb2
from cirulla.v1 import match_service_pb2 as ms

_RECORD = match_pb2.Record.DESCRIPTOR.fields_by_name
_DEAL = match_pb2.DealRecord.DESCRIPTOR.fields_by_name
_ACTION = match_pb2.ActionRecord.DESCRIPTOR.fields_by_name
#: GetRecordResponse.record's and Record.events' tags (length-delimited: number << 3 | 2),
#: and PlayResponse.event's, with which an event's stream frame begins.
_RESPONSE_RECORD = bytes([ms.GetRecordResponse.DESCRIPTOR.fields_by_name["record"].number << 3 | 2])
_RECORD_EVENT = bytes([_RECORD["events"].number << 3 | 2])
_PLAY_EVENT = ms.PlayResponse.DESCRIPTOR.fields_by_name["event"].number << 3 | 2
#: Record.deals, DealRecord's fields and ActionRecord's (match.proto), by number.
_DEALS = _RECORD["deals"].number
_DEAL_NUMBER, _DEALER = _DEAL["deal_number"].number, _DEAL["dealer"].number
_DECKS, _ACTIONS, _RESULT = _DEAL["decks"].number, _DEAL["actions"].number, _DEAL["result"].number
_DECISION_ID, _SEAT = _ACTION["decision_id"].number, _ACTION["seat"].number
_ELAPSED, _REJECTED = _ACTION["elapsed_ms"].number, _ACTION["rejected_attempts"].number
#: ActionRecord's bools when true (a varint field holding 1).
_BY_TIMEOUT = bytes([_ACTION["by_timeout"].number << 3, 1])
_AUTO_PLAYED = bytes([_ACTION["auto_played"].number << 3, 1])
#: DeckOrder.cards' number: a deck is its cards' entries in the deck's order.
_DECK_CARDS = match_settings_pb2.DeckOrder.DESCRIPTOR.fields_by_name["cards"].number


@functools.lru_cache(maxsize=8192)
def _action_part(code: int) -> bytes:
    """ActionRecord.action and .notation of ``code`` (``wire``'s, serialized by protobuf
    once per code)."""
    action = wire.action_to_proto(code).SerializeToString()
    text = wire.notation(code).encode()
    return message_field(_ACTION["action"].number, action) + (
        message_field(_ACTION["notation"].number, text) if text else b""
    )


def _action_record(a: RecordAction) -> bytes:
    """DealRecord.actions' entry of ``a`` (as ``records._add_deals``' ActionRecord)."""
    body = b"".join(
        (
            uint_field(_DECISION_ID, a["decision_id"]),
            uint_field(_SEAT, a["seat"]),
            _action_part(a["code"]),
            uint_field(_ELAPSED, a["elapsed_ms"]),
            _BY_TIMEOUT if a["by_timeout"] else b"",
            uint_field(_REJECTED, a["rejected_attempts"]),
            _AUTO_PLAYED if a.get("auto_played", False) else b"",
        )
    )
    return message_field(_ACTIONS, body)


def _deals(record: GameRecord, actions: list[RecordAction], players: int) -> bytes:
    """Record.deals (as ``records._add_deals`` builds them) of ``record`` with ``actions``."""
    cards = _card_entries(_DECK_CARDS)
    decks = record["decks"]
    at = 0
    deal_infos = {d["deal"]: d for d in record["deals"]}
    by_deal: dict[int, list[bytes]] = {}
    for a in actions:
        by_deal.setdefault(a["deal"], []).append(_action_record(a))
    out = []
    for deal in sorted(by_deal.keys() | deal_infos.keys()):
        info = deal_infos.get(deal)
        n_decks = info["decks"] if info else len(decks) - at
        parts = [uint_field(_DEAL_NUMBER, deal), uint_field(_DEALER, info["dealer"] if info else 0)]
        parts += [
            message_field(_DECKS, b"".join([cards[c] for c in deck]))
            for deck in decks[at : at + n_decks]
        ]
        at += n_decks
        parts += by_deal.get(deal, ())
        if info:
            game, score, totals = record["game_number"], info["score"], info["totals"]
            result = deal_result_pb(game, deal, score, totals, players, info.get("counts"))
            parts.append(message_field(_RESULT, result.SerializeToString()))
        out.append(message_field(_DEALS, b"".join(parts)))
    return b"".join(out)


def record_response(
    record: GameRecord, actions: list[RecordAction], events: Sequence[EventMsg]
) -> bytes:
    """The serialized ``GetRecordResponse{record: record_pb(record)}`` of a record whose
    actions are ``actions`` and whose events are ``events``, the game's published
    messages (``record``'s own actions and events are not read: they may be empty):
    its fields in field-number order, as protobuf writes them."""
    head, players = record_header_pb(record)
    tail = match_pb2.Record()
    record_tail_pb(record, tail)
    parts = [head.SerializeToString(), _deals(record, actions, players)]
    for m in events:
        frame = m.framed
        if frame is None or frame[0] != _PLAY_EVENT:  # (GameEnded: protobuf writes it)
            body = event_pb(m, players).SerializeToString()
            parts.append(_RECORD_EVENT + varint(len(body)) + body)
        else:
            parts.append(_RECORD_EVENT + frame[1:])
    parts.append(tail.SerializeToString())
    body = b"".join(parts)
    return _RESPONSE_RECORD + varint(len(body)) + body
