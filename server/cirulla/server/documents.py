"""The JSON documents the server keeps and serves: a match's summary, a game's record (the
record format's one home: its name, its shape, how its events are written and read back),
a record's summary (lists, room histories) and a room's summary.

They are built by the session and the hub, stored as JSON by ``store``, turned into
protobuf by ``convert`` and read back by ``replay``; these types say, in one place, what
each holds. Keys marked ``NotRequired`` are missing from documents written by older
servers (a database outlives its server), so readers use ``.get`` for them. An event in a
record stays a plain dict: its keys depend on its type (``cirulla.rules.events``).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, NotRequired, TypedDict

from cirulla.rules import CirullaError
from cirulla.rules.cards import CARD_NAMES, names_of
from cirulla.rules.events import BY_NAME, CardPlayed, HandDealt, RoundDealt, field_names
from cirulla.rules.options import OptionValue
from cirulla.rules.scoring import DealScoreDoc
from cirulla.server.messages import EXTRA_KEYS, EventExtras, EventMsg

#: A JSON value, as ``json.dumps`` writes it and ``json.loads`` gives it back.
Json = None | bool | int | float | str | list["Json"] | dict[str, "Json"]

#: The name and version of the record document (``GameRecord["format"]``).
RECORD_FORMAT = "cirulla-record/1"
#: The keys an event entry of a record holds besides the event's own fields and its wire
#: extras (``event_entry``).
EVENT_ENTRY_KEYS = {"sequence", "deal", "private_to", "type"}
#: The wire extras an event entry may hold (an event's own field of the same name wins).
_EXTRA_KEYS = tuple(k for k in EXTRA_KEYS if k not in EVENT_ENTRY_KEYS)


class PublicConfig(TypedDict):
    """The settings anyone may see: the deck source (seed, decks) is left out."""

    preset: str
    overrides: dict[str, OptionValue]
    options: dict[str, Any]
    best_of: int
    move_limit_ms: int
    game_bank_ms: int
    increment_ms: NotRequired[int]
    margin_ms: NotRequired[int]
    timeout_policy: str
    first_dealer: int | None
    disconnect_grace_ms: int


class GameResultDoc(TypedDict):
    """How a game ended (``GameEnded.to_dict()``)."""

    type: str
    game_number: int
    winner: int | None
    totals: list[int]
    cappotto: bool
    reason: str
    forfeit_seat: int | None
    deals: int
    games_won: list[int]


class SeatSummary(TypedDict):
    """A seat in a match summary: who plays it and what went wrong so far."""

    seat: int
    side: int
    name: str
    version: str
    connected: bool
    timeouts: int
    illegal_actions: int
    forfeits: int
    disconnects: int
    notes: list[str]


class MatchSummary(TypedDict):
    """Public summary of a match (never tokens, seeds or hidden cards)."""

    match_id: str
    room_id: str
    status: str
    create_time: str
    config: PublicConfig
    seats: list[SeatSummary]
    current_game: int
    games: list[GameResultDoc]
    games_won: list[int]
    winner: int | None
    abort_reason: str
    deal_group: NotRequired[str]
    deal_group_size: NotRequired[int]


class RecordSeat(TypedDict):
    """A seat in a record: who played it, and what went wrong so far in the match when
    the game ended (``SeatSummary``'s counts and notes then; for a one-game match, that
    game's). The counts and notes are missing from records written before they were
    kept: read them with ``.get`` (missing: 0, no notes)."""

    seat: int
    side: int
    name: str
    version: str
    timeouts: NotRequired[int]
    illegal_actions: NotRequired[int]
    forfeits: NotRequired[int]
    disconnects: NotRequired[int]
    notes: NotRequired[list[str]]


class RecordAction(TypedDict):
    """One accepted action of a game, in the order played."""

    decision_id: int
    seat: int
    code: int
    notation: str
    elapsed_ms: int
    by_timeout: bool
    rejected_attempts: int
    deal: int
    #: Played for the seat, unasked: its only legal action (Hello.auto_play_forced).
    #: Absent from records written before the option existed.
    auto_played: NotRequired[bool]


class RecordDeal(TypedDict):
    """One scored deal: its dealer, how many decks it took (redeals), score and totals."""

    deal: int
    dealer: int
    decks: int
    score: DealScoreDoc
    totals: list[int]
    counts: list[list[int]]


class GameRecord(TypedDict):
    """The replayable record of a finished game: holds every hidden card."""

    format: str
    record_id: str
    match_id: str
    room_id: str
    deal_group: NotRequired[str]
    game_number: int
    options: dict[str, Any]
    config: PublicConfig
    first_dealer: int
    decks: list[list[int]]
    seats: list[RecordSeat]
    actions: list[RecordAction]
    events: list[dict[str, Any]]
    deals: list[RecordDeal]
    result: GameResultDoc
    start_time: str
    finish_time: str


class RecordSummary(TypedDict):
    """What lists and room histories show of a record (no cards)."""

    record_id: str
    match_id: str
    room_id: str
    game_number: int
    seats: list[RecordSeat]
    result: GameResultDoc
    finish_time: str


class RoomSeat(TypedDict):
    seat: int
    side: int
    name: str
    connected: bool


class RoomSummary(TypedDict):
    room_id: str
    display_name: str
    config: PublicConfig
    seats: list[RoomSeat]
    current_match_id: str
    history: list[RecordSummary]
    create_time: str


def record_summary(record: GameRecord) -> RecordSummary:
    """What lists and room histories show of a record (no cards)."""
    return {
        "record_id": record["record_id"],
        "match_id": record["match_id"],
        "room_id": record["room_id"],
        "game_number": record["game_number"],
        "seats": record["seats"],
        "result": record["result"],
        "finish_time": record["finish_time"],
    }


def event_entry(msg: EventMsg) -> dict[str, Any]:
    """A published event as its record keeps it: ``Event.to_dict()`` with its sequence,
    deal, receiver (None: public) and wire extras; ``record_events`` reads it back."""
    e = msg.event
    if type(e) is CardPlayed:
        # Most of a record's events: the same dict as the general case below, key for
        # key and in order, without ``to_dict``'s look-ups per field (a record is built
        # on the writer thread, and holds the interpreter's lock while it is).
        return {
            "sequence": msg.sequence,
            "deal": msg.deal_number,
            "private_to": msg.private_to,
            **msg.extras,
            "type": "CardPlayed",
            "seat": e.seat,
            "side": e.side,
            "card": CARD_NAMES[e.card],
            "value": e.value,
            "captured": names_of(e.captured),
            "scopa": e.scopa,
            "ace_sweep": e.ace_sweep,
        }
    if type(e) is HandDealt:  # the next most frequent (a hand per seat per round)
        return {
            "sequence": msg.sequence,
            "deal": msg.deal_number,
            "private_to": msg.private_to,
            **msg.extras,
            "type": "HandDealt",
            "seat": e.seat,
            "round": e.round,
            "hand": names_of(e.hand),
        }
    if type(e) is RoundDealt:
        return {
            "sequence": msg.sequence,
            "deal": msg.deal_number,
            "private_to": msg.private_to,
            **msg.extras,
            "type": "RoundDealt",
            "round": e.round,
            "hand_sizes": e.hand_sizes,
            "stock": e.stock,
        }
    return {
        "sequence": msg.sequence,
        "deal": msg.deal_number,
        "private_to": msg.private_to,
        **msg.extras,
        **e.to_dict(),
    }


def record_events(record: GameRecord) -> list[EventMsg]:
    """The record's events as the session published them (private ones included).

    The record stores each event as ``Event.to_dict()`` plus its sequence, deal, receiver
    and wire extras; reading them back into ``EventMsg`` values lets GetRecord encode
    them with the very code that encoded the live stream.
    """
    out = []
    for n, entry in enumerate(record.get("events", []), 1):
        registered = BY_NAME.get(entry.get("type", ""))
        if registered is None:
            raise ValueError(f"record event {n}: unknown type {entry.get('type')!r}")
        cls = registered.cls
        names = field_names(cls)
        try:
            event = cls.from_dict(entry)
        except (KeyError, TypeError, ValueError, CirullaError) as exc:
            raise ValueError(f"record event {n} ({cls.__name__}): {exc}") from None
        extras = _extras(entry, names)
        out.append(
            EventMsg(
                entry["sequence"],
                record["game_number"],
                entry.get("deal", 0),
                event,
                entry.get("private_to"),
                extras,
            )
        )
    return out


def _extras(entry: dict[str, Any], names: Collection[str]) -> EventExtras:
    """The wire extras of a record's event entry (``EventExtras``: the keys
    ``note_event`` writes), leaving out the event's own fields."""
    extras: EventExtras = {}
    for key in _EXTRA_KEYS:
        if key in entry and key not in names:
            extras[key] = entry[key]
    return extras
