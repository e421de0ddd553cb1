"""Record-keeping: what a game keeps as it is played, and the record built from it.

``GameRun`` is one game with everything its record needs; ``note_event`` keeps the
per-deal bookkeeping (dealers, redeals, scored deals) as events are published and returns
the extra fields the event carries on the wire and in the record; ``game_record`` builds
the replayable record (``documents.GameRecord``) of a finished game. Building reads only
what no longer changes once the game is over, so it may run on another thread.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TypedDict, Unpack

from cirulla.rules import Game, Options
from cirulla.rules.actions import DeclarationKind
from cirulla.rules.cards import CARD_NAMES
from cirulla.rules.events import (
    EVENT_TYPES,
    CardPlayed,
    DealScored,
    DealStarted,
    Event,
    Redeal,
    field_names,
)
from cirulla.server.documents import (
    RECORD_FORMAT,
    GameRecord,
    GameResultDoc,
    RecordAction,
    RecordDeal,
    RecordSeat,
    SeatSummary,
    event_entry,
)
from cirulla.server.match_config import MatchConfig, options_doc, public_config
from cirulla.server.messages import EventExtras, EventMsg, GameEnded

try:  # the records' JSON writer (convert/_recordjson.c), when it was built
    from cirulla.server.convert import _recordjson as _native
except ImportError:  # no C compiler: records are written by json.dumps
    _native = None  # type: ignore[assignment]  # every use tests `_native is None`


def _setup_native() -> None:
    """The cards' names and the event types the native writer writes: every registered
    one whose entry is ``Event.to_dict``'s (the rules' and the server's events; a field
    that needs another conversion, a ``DealScore``, makes its entries Python's)."""
    if _native is not None:
        types = {t.cls: field_names(t.cls) for t in EVENT_TYPES if t.cls.to_dict is Event.to_dict}
        _native.setup(CARD_NAMES, types, DeclarationKind)


_setup_native()


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


@dataclass(slots=True)
class GameRun:
    """One game of the match, with everything its record needs."""

    number: int
    game: Game
    first_dealer: int
    start_time: str
    events: list[EventMsg] = field(default_factory=list)
    actions: list[RecordAction] = field(default_factory=list)
    deals: list[RecordDeal] = field(default_factory=list)
    redeals: dict[int, int] = field(default_factory=dict)
    dealers: dict[int, int] = field(default_factory=dict)
    cur_deal: int = 0
    result: GameEnded | None = None
    record_id: str = ""


def finished_run(runs: Sequence[GameRun], record_id: str) -> GameRun | None:
    """The finished game of ``runs`` (a match's) whose record is ``record_id`` (None: no
    such game, or not finished)."""
    for run in runs:
        if run.record_id == record_id and run.result is not None:
            return run
    return None


def note_event(run: GameRun, event: Event, *, by_timeout: bool, notation: str) -> EventExtras:
    """Keep ``run``'s deal bookkeeping up to date with ``event``; return the event's extra
    fields (redeal attempt, stock count, score counts, how a card was played)."""
    extras: EventExtras = {}
    if type(event) is CardPlayed:  # most events: tested first
        extras["by_timeout"] = by_timeout
        extras["notation"] = notation
    elif isinstance(event, Redeal):
        run.cur_deal = event.deal
        run.redeals[event.deal] = run.redeals.get(event.deal, 0) + 1
        extras["attempt"] = run.redeals[event.deal]
    elif isinstance(event, DealStarted):
        run.cur_deal = event.deal
        run.dealers[event.deal] = event.dealer
        extras["stock_count"] = 40 - 4 - sum(event.hand_sizes)
    elif isinstance(event, DealScored):
        # SideScore.card_count, coin_count, primiera_value per side.
        counts = [list(c) for c in event.score.counts()]
        extras["counts"] = counts
        run.deals.append(
            {
                "deal": event.deal,
                "dealer": run.dealers.get(event.deal, run.game.dealer),
                "decks": run.redeals.get(event.deal, 0) + 1,
                "score": event.score.to_dict(),
                "totals": list(event.totals),
                "counts": counts,
            }
        )
    return extras


def result_doc(ended: GameEnded) -> GameResultDoc:
    """``GameEnded`` as a document (lists, not tuples: the same once in JSON)."""
    return {
        "type": "GameEnded",
        "game_number": ended.game_number,
        "winner": ended.winner,
        "totals": list(ended.totals),
        "cappotto": ended.cappotto,
        "reason": ended.reason,
        "forfeit_seat": ended.forfeit_seat,
        "deals": ended.deals,
        "games_won": list(ended.games_won),
    }


class RecordFields(TypedDict):
    """What a record takes from its match (``game_record``, ``record_text``)."""

    match_id: str
    room_id: str
    deal_group: str
    options: Options
    config: MatchConfig
    #: The seats as the match's summary showed them when the game ended (their counts
    #: and notes so far in the match).
    seats: Sequence[SeatSummary]
    finish: str


def record_seat(seat: SeatSummary) -> RecordSeat:
    """A seat as its game's record keeps it: who played it, and its counts and notes
    (so far in the match) as ``seat``, taken when the game ended, shows them."""
    return {
        "seat": seat["seat"],
        "side": seat["side"],
        "name": seat["name"],
        "version": seat["version"],
        "timeouts": seat["timeouts"],
        "illegal_actions": seat["illegal_actions"],
        "forfeits": seat["forfeits"],
        "disconnects": seat["disconnects"],
        "notes": list(seat["notes"]),
    }


def game_record(
    run: GameRun,
    *,
    match_id: str,
    room_id: str,
    deal_group: str,
    options: Options,
    config: MatchConfig,
    seats: Sequence[SeatSummary],
    finish: str,
    entries: bool = True,
) -> GameRecord:
    """The replayable record of the finished game ``run`` (JSON-able; every hidden card);
    without ``entries``, its actions and events left empty (``record_text``)."""
    assert run.result is not None
    record_seats = [record_seat(s) for s in seats]
    return {
        "format": RECORD_FORMAT,
        "record_id": run.record_id,
        "match_id": match_id,
        "room_id": room_id,
        "deal_group": deal_group,
        "game_number": run.number,
        "options": options_doc(options),
        "config": public_config(config),
        "first_dealer": run.first_dealer,
        "decks": [list(d) for d in run.game.decks_used],
        "seats": record_seats,
        "actions": run.actions if entries else [],
        "events": [event_entry(m) for m in run.events] if entries else [],
        "deals": run.deals,
        "result": result_doc(run.result),
        "start_time": run.start_time,
        "finish_time": finish,
    }


def _dumps(value: object) -> str:
    """JSON as the store writes a record: compact, ASCII, no cycle check."""
    return json.dumps(value, separators=(",", ":"), check_circular=False)


def _entry_json(msg: EventMsg) -> str:
    return _dumps(event_entry(msg))


#: Between a record's seats and its deals when its entries are left out.
_NO_ENTRIES = ',"actions":[],"events":[],'


def record_text(
    run: GameRun, *, python: bool = False, **fields: Unpack[RecordFields]
) -> tuple[GameRecord, str]:
    """The record of ``run`` as the store keeps it: its JSON text (the very text of
    ``game_record``'s dict through the store's ``json.dumps``), and the record without
    its actions and events (the fields a record's summary and row show).

    The actions and events (nearly all of a record) are written by the native writer
    (``convert/_recordjson.c``) from the event objects, never built as dicts: building and
    encoding them cost ~2 ms of CPU per record, holding the interpreter's lock. Without
    it (or with ``python``), by ``json.dumps`` as before.
    """
    shell = game_record(run, entries=False, **fields)
    head, found, tail = _dumps(shell).partition(_NO_ENTRIES)
    assert found, "a record's keys are in game_record's order"
    if _native is None or python:
        actions = _dumps(run.actions)
        events = _dumps([event_entry(m) for m in run.events])
    else:
        actions = _native.flat(run.actions, _dumps)
        events = _native.events(run.events, _entry_json)
    return shell, f'{head},"actions":{actions},"events":{events},{tail}'
