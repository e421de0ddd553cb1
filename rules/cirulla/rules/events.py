"""Events: what applying an action (or dealing) made happen, in the order it happened.

Every event is public except ``HandDealt``, which only its holder may see: ``visible_to``
is the single place that decides, so the referee filters with it and nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from cirulla.rules.actions import DeclarationKind
from cirulla.rules.cards import CARD_NAMES, names_of, parse_card, parse_mask
from cirulla.rules.scoring import DealScore, SideScore


@dataclass(frozen=True, slots=True)
class Event:
    def visible_to(self, seat: int | None) -> bool:
        """Whether ``seat`` (``None`` = spectator) may see this event."""
        return True

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, object] = {"type": type(self).__name__}
        for name in field_names(type(self)):
            value = getattr(self, name)
            if name in _MASK_FIELDS:
                value = names_of(value)
            elif name == "card":
                value = CARD_NAMES[value]
            elif isinstance(value, DeclarationKind):
                value = value.label
            elif isinstance(value, DealScore):
                value = value.to_dict()
            out[name] = value
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Event:
        """The inverse of ``to_dict`` for this event type (records are stored as dicts).

        Raises ``KeyError``/``ValueError`` naming nothing beyond the field; callers add
        which record and event they were reading.
        """
        return cls(**{name: _field_from_dict(name, data[name]) for name in field_names(cls)})


_FIELD_NAMES: dict[type[Event], tuple[str, ...]] = {}


def field_names(cls: type[Event]) -> tuple[str, ...]:
    """An event type's field names, in order (``dataclasses.fields`` rebuilds its tuple
    at every call: records convert hundreds of events a game)."""
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in fields(cls))
    return names


_MASK_FIELDS = {"table", "cards", "captured", "hand"}
_KINDS = {k.label: k for k in DeclarationKind}


def _field_from_dict(name: str, value: Any) -> object:
    if name in _MASK_FIELDS:
        return parse_mask(value)
    if name == "card":
        return parse_card(value)
    if name == "kind":
        return _KINDS[value]
    if name == "score":
        sides = tuple(
            SideScore(**{k: v for k, v in side.items() if k != "total"}) for side in value["sides"]
        )
        return DealScore(sides, value["cappotto"])
    if isinstance(value, list):
        return tuple(value)
    return value


@dataclass(frozen=True, slots=True)
class DealStarted(Event):
    """A deal's table is face up; hands are dealt privately (``HandDealt``)."""

    deal: int
    dealer: int
    table: int
    hand_sizes: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Redeal(Event):
    """Two or more aces on the table: the deal is void and dealt again by the same dealer."""

    deal: int
    dealer: int
    table: int


@dataclass(frozen=True, slots=True)
class HandDealt(Event):
    """Private: the cards ``seat`` received for round ``round``."""

    seat: int
    round: int
    hand: int

    def visible_to(self, seat: int | None) -> bool:
        return seat == self.seat


@dataclass(frozen=True, slots=True)
class RoundDealt(Event):
    """Public side of a new round: every hand refilled, ``stock`` cards left."""

    round: int
    hand_sizes: tuple[int, ...]
    stock: int


@dataclass(frozen=True, slots=True)
class DealerBonus(Event):
    dealer: int
    side: int
    cards: int
    scope: int


@dataclass(frozen=True, slots=True)
class Declared(Event):
    """The three declared cards become public until played."""

    seat: int
    side: int
    kind: DeclarationKind
    cards: int
    wild_value: int | None
    points: int


@dataclass(frozen=True, slots=True)
class CardPlayed(Event):
    seat: int
    side: int
    card: int
    value: int
    captured: int
    scopa: bool
    ace_sweep: bool


@dataclass(frozen=True, slots=True)
class LastTake(Event):
    """End of deal: the table goes to the last taker (``side`` None if nobody ever took)."""

    side: int | None
    cards: int


@dataclass(frozen=True, slots=True)
class DealScored(Event):
    deal: int
    score: DealScore
    totals: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class GameOver(Event):
    winner: int
    totals: tuple[int, ...]
    cappotto: bool


# ---------------------------------------------------------------------- the registry


@dataclass(frozen=True, slots=True)
class EventType:
    """One event type as every layer names it: the record's ``type`` (the class name), the
    protocol's field of ``Event.body`` (events.proto; ``""``: never sent as itself), the
    native core's ``EV_*`` code
    (engine.h; 0: the native core never emits it) and the text protocol's event word
    (``""``: not an ``event`` line, e.g. a private hand, sent as the ``hand`` command).

    Adding an event type is: its class, one entry here (``register``), its protobuf
    builder (``cirulla.server.convert.live``) and its text line
    (``cirulla.bots.text.protocol``); tests/rules/test_event_registry.py fails until each
    consumer knows it.
    """

    cls: type[Event]
    wire: str
    native: int = 0
    text: str = ""

    @property
    def name(self) -> str:
        return self.cls.__name__


#: Every registered event type, in registration order.
EVENT_TYPES: list[EventType] = []
BY_CLASS: dict[type[Event], EventType] = {}
BY_NAME: dict[str, EventType] = {}
BY_WIRE: dict[str, EventType] = {}
BY_NATIVE: dict[int, EventType] = {}


def register(entry: EventType) -> EventType:
    """Add ``entry`` to the registry (the rules' events below; the server registers the
    events it adds, ``cirulla.server.messages``). Names, wire fields and codes are unique."""
    clashes = (
        entry.cls in BY_CLASS
        or entry.name in BY_NAME
        or (entry.wire and entry.wire in BY_WIRE)
        or (entry.native and entry.native in BY_NATIVE)
    )
    if clashes:
        raise ValueError(f"event type {entry.name} ({entry.wire}) is already registered")
    EVENT_TYPES.append(entry)
    BY_CLASS[entry.cls] = entry
    BY_NAME[entry.name] = entry
    if entry.wire:
        BY_WIRE[entry.wire] = entry
    if entry.native:
        BY_NATIVE[entry.native] = entry
    return entry


for _entry in (
    EventType(DealStarted, "deal_started", 1, "deal"),
    EventType(Redeal, "redeal", 2, "redeal"),
    EventType(HandDealt, "hand_dealt", 3),
    EventType(RoundDealt, "round_dealt", 4, "round"),
    EventType(DealerBonus, "dealer_bonus", 5, "bonus"),
    EventType(Declared, "declaration", 6, "declare"),
    EventType(CardPlayed, "card_played", 7, "play"),
    EventType(LastTake, "last_take", 8, "lasttake"),
    EventType(DealScored, "deal_scored", 9, "scored"),
    # on the wire the server's GameEnded (which adds why the game ended) stands for it
    EventType(GameOver, "", 10),
):
    register(_entry)
