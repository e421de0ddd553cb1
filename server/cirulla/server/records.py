"""The one record file format, and its compact text form.

A game record on disk is the protocol's own ``cirulla.v1.Record`` as protobuf JSON
(field names as in the .proto, every field present even when it holds its default, so
seat 0 and side 0 are written out). ``cirulla tournament`` writes it from GetRecord,
``cirulla replay --export`` writes it from the database, and ``cirulla replay`` reads
it back. A file with several games of one match holds ``{"match_id": ..., "records":
[...]}``. Only public protocol types are involved, so a record written by any client
of the server can be replayed.

The text form (``cirulla replay --show``) is for people, like PGN for chess: a header,
one line per action, each deal's score lines, and the result.
"""

from __future__ import annotations

import json
import keyword
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypedDict, cast

from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from cirulla import wire
from cirulla.rules.scoring import SCORE_ITEMS
from cirulla.server.documents import RECORD_FORMAT, Json
from cirulla.v1 import events_pb2, match_pb2

if TYPE_CHECKING:
    from google._upb._message import Descriptor as UpbDescriptor

#: A record file's content (``record_document``): protobuf JSON of one or more records.
Document = dict[str, Json]


class Score(Protocol):
    """A side's score items (``cirulla.v1.SideScore`` and the like)."""

    cards: int
    coins: int
    settebello: int
    primiera: int
    scope: int
    grande: int
    piccola: int
    total: int


class ReplayAction(TypedDict):
    seat: int
    code: int
    notation: str


class ReplayScore(TypedDict):
    sides: list[dict[str, int]]
    cappotto: int | None


class ReplayDeal(TypedDict):
    deal: int
    score: ReplayScore
    totals: list[int]


class ReplayResult(TypedDict):
    reason: str
    winner: int | None
    totals: list[int]
    cappotto: bool


class ReplayInput(TypedDict):
    """A public record in the shape ``replay.replay`` checks (the fields of the server's
    own ``documents.GameRecord`` that a replay reads)."""

    format: str
    record_id: str
    #: ``Options.to_dict()``: rule option values, passed on as ``Options(**options)``.
    options: dict[str, Any]
    decks: list[list[int]]
    first_dealer: int
    actions: list[ReplayAction]
    deals: list[ReplayDeal]
    result: ReplayResult


def record_dict(record: match_pb2.Record) -> Document:
    """One record as a JSON-ready dict: proto field names, default values written.

    The same dict as protobuf's ``json_format.MessageToDict`` with those two settings
    (tests compare them on real games), several times faster: a tournament writes a
    record of a few hundred events after every game, and the library's generic printer
    cost more CPU than playing the game over gRPC.
    """
    return _message_dict(record)


def _json_dict(message: Message) -> Document:
    return json_format.MessageToDict(
        message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )


# How each field of a message type is written, worked out once per type: (name, kind,
# presence, repeated, enum names). A type with anything but plain scalars, enums and
# messages (well-known types such as Timestamp, maps, bytes, floats) is left to
# json_format (``None``), which knows their special JSON forms.
_Plan = tuple[tuple[str, str, bool, bool, Mapping[int, str]], ...]
_PLANS: dict[str, _Plan | None] = {}
_PLAIN = {
    FieldDescriptor.TYPE_BOOL: "plain",
    FieldDescriptor.TYPE_STRING: "plain",
    FieldDescriptor.TYPE_INT32: "plain",
    FieldDescriptor.TYPE_UINT32: "plain",
    FieldDescriptor.TYPE_SINT32: "plain",
    FieldDescriptor.TYPE_FIXED32: "plain",
    FieldDescriptor.TYPE_SFIXED32: "plain",
    FieldDescriptor.TYPE_INT64: "int64",
    FieldDescriptor.TYPE_UINT64: "int64",
    FieldDescriptor.TYPE_SINT64: "int64",
    FieldDescriptor.TYPE_FIXED64: "int64",
    FieldDescriptor.TYPE_SFIXED64: "int64",
    FieldDescriptor.TYPE_ENUM: "enum",
    FieldDescriptor.TYPE_MESSAGE: "message",
}


def _plan(descriptor: Descriptor | UpbDescriptor) -> _Plan | None:
    # (upb's own Descriptor class: the stubs do not unify it with descriptor.Descriptor)
    name = descriptor.full_name
    if name in _PLANS:
        return _PLANS[name]
    plan: _Plan | None = None
    if not name.startswith("google.protobuf.") and not descriptor.GetOptions().map_entry:
        fields = []
        for field in descriptor.fields:
            kind = _PLAIN.get(field.type)
            nested = field.message_type
            if kind is None or (
                kind == "message" and (nested is None or nested.GetOptions().map_entry)
            ):
                break
            enum_type = field.enum_type
            enum_names = (
                {v.number: v.name for v in enum_type.values}
                if kind == "enum" and enum_type is not None
                else {}
            )
            repeated = field.is_repeated
            fields.append(
                (field.name, kind, field.has_presence and not repeated, repeated, enum_names)
            )
        else:
            plan = tuple(fields)
    _PLANS[name] = plan
    return plan


def _message_dict(message: Message) -> Document:
    """``message`` as protobuf JSON's dict: its fields in the order the .proto declares
    them, by its type's converter (``_converter``)."""
    return _converter(message.DESCRIPTOR)(message)


#: The converters made so far, by message type: each a function of its own, written from
#: the type's plan (``_source``), which calls the converters of the types it holds.
_CONVERTERS: dict[str, Callable[[Message], Document]] = {}
#: Their globals: ``_json_dict``, the converters (``c_N``) and the enums' names (``e_N``).
_NAMESPACE: dict[str, object] = {"_json_dict": _json_dict, "str": str, "list": list}
#: The global name of each type's converter in ``_NAMESPACE``.
_NAMES: dict[str, str] = {}
#: Held while converters are made (one thread makes a type's, and the types it holds).
_MAKING = threading.RLock()


def _converter(descriptor: Descriptor | UpbDescriptor) -> Callable[[Message], Document]:
    """The function turning a message of this type into its dict (``_plan``'s loop
    written out once per type: no loop over the plan, no test of each field's kind at
    every message; a tournament's runner writes ~1,500 messages per record)."""
    found = _CONVERTERS.get(descriptor.full_name)
    if found is not None:
        return found
    with _MAKING:  # (the runner writes records on several threads)
        return _make_converter(descriptor)


def _make_converter(descriptor: Descriptor | UpbDescriptor) -> Callable[[Message], Document]:
    """(under ``_MAKING``) ``_converter``'s, made now if it is not yet."""
    name = descriptor.full_name
    found = _CONVERTERS.get(name)
    if found is not None:
        return found
    plan = _plan(descriptor)
    if plan is None:
        _CONVERTERS[name] = _json_dict
        _NAMES[name] = "_json_dict"
        return _json_dict
    _NAMES[name] = f"c_{len(_NAMES)}"  # before its fields': a type may hold itself
    nested = {
        field.name: field.message_type
        for field in descriptor.fields
        if field.message_type is not None
    }
    for inner in nested.values():
        if inner.full_name not in _NAMES:
            _make_converter(inner)
    exec(_source(descriptor, plan, nested), _NAMESPACE)  # our own text, from descriptors
    function = cast(Callable[[Message], Document], _NAMESPACE[_NAMES[name]])
    _CONVERTERS[name] = function
    return function


def _source(
    descriptor: Descriptor | UpbDescriptor,
    plan: _Plan,
    nested: Mapping[str, Descriptor | UpbDescriptor],
) -> str:
    """The converter of a type with ``plan``: ``_message_dict``'s loop over the plan,
    unrolled (the same keys in the same order, the same values). A field of a oneof of
    several fields is tested with one ``WhichOneof`` per oneof (what ``HasField`` of
    each member would say, one call instead of one per member)."""
    oneofs: dict[str, str] = {}  # a field's oneof -> its variable
    lines = [f"def {_NAMES[descriptor.full_name]}(m):"]
    for oneof in descriptor.oneofs:
        if len(oneof.fields) > 1:
            variable = f"w{len(oneofs)}"
            lines.append(f"    {variable} = m.WhichOneof({oneof.name!r})")
            for field in oneof.fields:
                oneofs[field.name] = variable
    lines.append("    out = {}")
    for name, kind, presence, repeated, enum_names in plan:
        get = f"m.{name}" if name.isidentifier() and not keyword.iskeyword(name) else None
        get = get or f"getattr(m, {name!r})"
        if kind == "plain":
            value = f"list({get})" if repeated else get
        elif kind == "message":
            inner = _NAMES[nested[name].full_name]
            value = f"[{inner}(v) for v in {get}]" if repeated else f"{inner}({get})"
        elif kind == "enum":
            enum = f"e_{len(_NAMESPACE)}"
            _NAMESPACE[enum] = enum_names
            value = (
                f"[{enum}.get(v, v) for v in {get}]" if repeated else f"{enum}.get({get}, {get})"
            )
        else:  # 64-bit integers are strings in protobuf JSON
            value = f"[str(v) for v in {get}]" if repeated else f"str({get})"
        if not presence:
            lines.append(f"    out[{name!r}] = {value}")
        elif name in oneofs:
            lines.append(f"    if {oneofs[name]} == {name!r}:")
            lines.append(f"        out[{name!r}] = {value}")
        else:
            lines.append(f"    if m.HasField({name!r}):")
            lines.append(f"        out[{name!r}] = {value}")
    lines.append("    return out")
    return "\n".join(lines) + "\n"


def record_document(records: Sequence[match_pb2.Record], match_id: str = "") -> Document:
    """The content of a record file: one record, or the games of one match."""
    if len(records) == 1:
        return record_dict(records[0])
    return {
        "match_id": match_id or (records[0].match_id if records else ""),
        "records": [record_dict(r) for r in records],
    }


def dumps(doc: Document) -> str:
    """JSON text of a record document, compact (``jq .`` shows it indented); refuses NaN
    and infinities (not JSON). Indented JSON is written by Python's slow pure-Python
    encoder: for a record of a few hundred events it cost five times the compact one."""
    return json.dumps(doc, separators=(",", ":"), allow_nan=False) + "\n"


def is_public_document(doc: object) -> bool:
    """A record file (not the database's internal ``cirulla-record/1`` document)."""
    if not isinstance(doc, dict) or "format" in doc:
        return False
    return "records" in doc or ("record_id" in doc and "deals" in doc)


def records_from_document(doc: Mapping[str, object]) -> list[match_pb2.Record]:
    """Parse a record file's content; ValueError names what is wrong."""
    items = doc.get("records", [doc])
    if not isinstance(items, list) or not items:
        raise ValueError("record file: 'records' must be a non-empty list")
    out = []
    for n, item in enumerate(items, 1):
        try:
            out.append(json_format.ParseDict(item, match_pb2.Record()))
        except json_format.ParseError as exc:
            raise ValueError(f"record {n}: {exc}") from None
    return out


def replay_input(record: match_pb2.Record) -> ReplayInput:
    """A public record in the shape ``cirulla.server.replay.replay`` checks.

    Raises ValueError (a ``wire.WireError``) naming the field of a malformed record.
    """
    options = wire.options_from_proto(record.rules, field="record.rules")
    decks: list[list[int]] = []
    actions: list[ReplayAction] = []
    deals: list[ReplayDeal] = []
    for d, deal in enumerate(record.deals):
        for k, deck in enumerate(deal.decks):
            decks.append(wire.cards_from_proto(deck.cards, f"deals[{d}].decks[{k}].cards"))
        for a, act in enumerate(deal.actions):
            action = wire.action_from_proto(act.action, f"deals[{d}].actions[{a}].action")
            actions.append({"seat": act.seat, "code": action.to_int(), "notation": act.notation})
        if deal.HasField("result"):
            res = deal.result
            deals.append(
                {
                    "deal": deal.deal_number,
                    "score": {
                        "sides": [_side_score(s) for s in res.scores],
                        "cappotto": res.cappotto_side if res.HasField("cappotto_side") else None,
                    },
                    "totals": list(res.totals),
                }
            )
    result = record.result
    return {
        "format": RECORD_FORMAT,
        "record_id": record.record_id,
        "options": options.to_dict(),
        "decks": decks,
        "first_dealer": record.deals[0].dealer if record.deals else 0,
        "actions": actions,
        "deals": deals,
        "result": {
            "reason": wire.GAME_END_REASON_NAMES.get(result.reason, ""),
            "winner": result.winner_side if result.HasField("winner_side") else None,
            "totals": list(result.totals),
            "cappotto": result.cappotto,
        },
    }


def _side_score(s: Score) -> dict[str, int]:
    out: dict[str, int] = {name: getattr(s, name) for name in SCORE_ITEMS}
    out["total"] = s.total
    return out


# ---------------------------------------------------------------------- text form


def side_label(record: match_pb2.Record, side: int) -> str:
    names = [s.name or f"seat {s.seat}" for s in record.seats if s.side == side]
    return f"side {side} ({', '.join(names)})" if names else f"side {side}"


def score_line(score: Score) -> str:
    """``cards 1 coins 0 settebello 1 primiera 1 scope 2 grande 0 piccola 0 = 5``"""
    items = " ".join(f"{name} {getattr(score, name)}" for name in SCORE_ITEMS)
    return f"{items} = {score.total}"


def record_text(record: match_pb2.Record) -> str:
    """The game for people: header, one line per action, score lines, result."""
    lines = [
        f'[Record "{record.record_id}"]',
        f'[Match "{record.match_id}"]',
        f'[Game "{record.game_number}"]',
    ]
    for s in record.seats:
        lines.append(f'[Seat{s.seat} "{s.name or "?"}" side {s.side}]')
        if s.notes:  # what went wrong so far in the match, as the game ended
            lines.append(f'[Seat{s.seat}Notes "{", ".join(s.notes)}"]')
    rules = ", ".join(
        f"{k}={v}" for k, v in wire.options_from_proto(record.rules).to_dict().items()
    )
    lines.append(f'[Rules "{rules}"]')
    if record.HasField("finish_time"):
        lines.append(f'[Finished "{record.finish_time.ToJsonString()}"]')
    lines.append("")
    for deal in record.deals:
        lines.append(f"Deal {deal.deal_number}, dealer seat {deal.dealer}")
        for n, act in enumerate(deal.actions, 1):
            flags = " (timeout)" if act.by_timeout else " (forced)" if act.auto_played else ""
            lines.append(f"  {n:>2}. seat {act.seat}: {act.notation}{flags}")
        if deal.HasField("result"):
            for side_score in deal.result.scores:
                lines.append(
                    f"  {side_label(record, side_score.side)}: {score_line(side_score)}"
                    f"  (game {side_score.game_total})"
                )
            if deal.result.HasField("cappotto_side"):
                lines.append(f"  cappotto by side {deal.result.cappotto_side}")
    lines.append("")
    lines.append(result_line(record.result, record))
    return "\n".join(lines) + "\n"


def result_line(result: events_pb2.GameResult, record: match_pb2.Record | None = None) -> str:
    reason = wire.GAME_END_REASON_NAMES.get(result.reason, "unknown")
    totals = "-".join(str(t) for t in result.totals)
    if result.HasField("winner_side"):
        who = side_label(record, result.winner_side) if record else f"side {result.winner_side}"
        return f"Result: {who} wins {totals} ({reason}, {result.deals} deals)"
    return f"Result: no winner {totals} ({reason}, {result.deals} deals)"
