"""protobuf <-> server domain, what is kept: match and room summaries, game summaries and
whole records (the records' own format is ``cirulla.server.documents``).

Names: ``X_pb`` builds a protobuf message (``convert.settings`` has the conventions).
"""

from __future__ import annotations

from datetime import datetime

from google.protobuf.timestamp_pb2 import Timestamp

from cirulla import wire
from cirulla.rules import Options
from cirulla.server.convert.live import deal_result_pb, event_pb, game_result_pb, seat_infos_pb
from cirulla.server.convert.settings import settings_pb
from cirulla.server.documents import (
    GameRecord,
    MatchSummary,
    RecordSeat,
    RecordSummary,
    RoomSummary,
    SeatSummary,
    record_events,
)
from cirulla.server.messages import SeatPublic
from cirulla.v1 import (
    match_pb2,
    match_settings_pb2,
)
from cirulla.wire import CARD_MESSAGES, options_to_proto

_STATUS_PB: dict[str, match_pb2.MatchStatus] = {
    "waiting": match_pb2.MATCH_STATUS_WAITING,
    "in_progress": match_pb2.MATCH_STATUS_IN_PROGRESS,
    "finished": match_pb2.MATCH_STATUS_FINISHED,
    "aborted": match_pb2.MATCH_STATUS_ABORTED,
}


def timestamp_pb(iso: str) -> Timestamp:
    ts = Timestamp()
    if iso:
        ts.FromDatetime(datetime.fromisoformat(iso))
    return ts


def record_seats(seats: list[RecordSeat]) -> list[SeatSummary]:
    """A record's seats as seat documents: who played, and their counts and notes so far
    in the match when the game ended (no live stream any more). A record written before
    the counts were kept has none: 0, no notes."""
    return [
        {
            "seat": s["seat"],
            "side": s["side"],
            "name": s["name"],
            "version": s.get("version", ""),
            "connected": False,
            "timeouts": s.get("timeouts", 0),
            "illegal_actions": s.get("illegal_actions", 0),
            "forfeits": s.get("forfeits", 0),
            "disconnects": s.get("disconnects", 0),
            "notes": s.get("notes", []),
        }
        for s in seats
    ]


def match_pb(summary: MatchSummary) -> match_pb2.Match:
    games = [game_result_pb(g) for g in summary["games"]]
    out = match_pb2.Match(
        match_id=summary["match_id"],
        settings=settings_pb(summary["config"]),
        status=_STATUS_PB[summary["status"]],
        seats=seat_infos_pb(summary["seats"]),
        current_game=summary["current_game"],
        games=games,
        room_id=summary["room_id"],
        create_time=timestamp_pb(summary["create_time"]),
        abort_reason=summary.get("abort_reason", ""),
    )
    if summary["status"] == "finished":
        res = match_pb2.MatchResult(
            match_id=summary["match_id"], games_won=summary["games_won"], games=games
        )
        winner = summary.get("winner")
        if winner is not None:
            res.winner_side = winner
        out.result.CopyFrom(res)
    return out


def game_summary_pb(record: RecordSummary) -> match_pb2.GameSummary:
    return match_pb2.GameSummary(
        record_id=record["record_id"],
        match_id=record["match_id"],
        room_id=record["room_id"],
        game_number=record["game_number"],
        seats=seat_infos_pb(record_seats(record["seats"])),
        result=game_result_pb(record["result"]),
        finish_time=timestamp_pb(record["finish_time"]),
    )


def record_pb(record: GameRecord) -> match_pb2.Record:
    out, players = record_header_pb(record)
    _add_deals(out, record, players)
    out.events.extend([event_pb(m, players) for m in record_events(record)])
    record_tail_pb(record, out)
    return out


def record_header_pb(record: GameRecord) -> tuple[match_pb2.Record, int]:
    """The record's fields before its deals (1 to 7), and its number of players
    (``recordframing`` writes the rest of a record still in memory)."""
    options = Options(**record["options"])
    out = match_pb2.Record(
        record_id=record["record_id"],
        match_id=record["match_id"],
        room_id=record["room_id"],
        game_number=record["game_number"],
        settings=settings_pb(record["config"]),
        rules=options_to_proto(options),
        seats=seat_infos_pb(record_seats(record["seats"])),
    )
    return out, options.players


def record_tail_pb(record: GameRecord, out: match_pb2.Record) -> None:
    """The record's fields after its events (10 to 12), set on ``out`` (each present,
    even when empty, as Record's keyword arguments made them)."""
    out.result.CopyFrom(game_result_pb(record["result"]))
    out.start_time.CopyFrom(timestamp_pb(record["start_time"]))
    out.finish_time.CopyFrom(timestamp_pb(record["finish_time"]))


def _add_deals(out: match_pb2.Record, record: GameRecord, players: int) -> None:
    """Record.deals: each deal's decks, actions and result."""
    decks = record["decks"]
    at = 0
    deal_infos = {d["deal"]: d for d in record["deals"]}
    deal_numbers = sorted({a["deal"] for a in record["actions"]} | set(deal_infos))
    for deal in deal_numbers:
        info = deal_infos.get(deal)
        n_decks = info["decks"] if info else len(decks) - at
        dr = match_pb2.DealRecord(deal_number=deal, dealer=info["dealer"] if info else 0)
        for deck in decks[at : at + n_decks]:
            dr.decks.append(match_settings_pb2.DeckOrder(cards=[CARD_MESSAGES[c] for c in deck]))
        at += n_decks
        for a in record["actions"]:
            if a["deal"] == deal:
                dr.actions.append(
                    match_pb2.ActionRecord(
                        decision_id=a["decision_id"],
                        seat=a["seat"],
                        action=wire.action_to_proto(a["code"]),
                        notation=wire.notation(a["code"]),
                        elapsed_ms=a["elapsed_ms"],
                        by_timeout=a["by_timeout"],
                        rejected_attempts=a["rejected_attempts"],
                        auto_played=a.get("auto_played", False),
                    )
                )
        if info:
            dr.result.CopyFrom(
                deal_result_pb(
                    record["game_number"],
                    deal,
                    info["score"],
                    info["totals"],
                    players,
                    info.get("counts"),
                )
            )
        out.deals.append(dr)


def room_pb(summary: RoomSummary) -> match_pb2.Room:
    return match_pb2.Room(
        room_id=summary["room_id"],
        display_name=summary["display_name"],
        settings=settings_pb(summary["config"]),
        seats=seat_infos_pb(
            [
                SeatPublic(s["seat"], s["side"], s["name"], "", s["connected"])
                for s in summary["seats"]
            ]
        ),
        current_match_id=summary["current_match_id"],
        history=[game_summary_pb(r) for r in summary["history"]],
        create_time=timestamp_pb(summary["create_time"]),
    )
