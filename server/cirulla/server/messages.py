"""What the match domain sends to a connection, before it becomes protobuf.

The domain (sessions, rooms) speaks in these plain values so it can decide *who* gets
*what* without knowing the wire format; ``convert`` is the only place that turns them into
``cirulla.v1`` messages. Server-side events (timeouts, disconnects, a game's end with its
reason) are rules ``Event`` subclasses so they share ``visible_to`` and ``to_dict``.

Every message is read-only once made (one object may sit on several streams' queues).
The ones every decision makes (``EventMsg``, ``DecisionMsg``, ``AcceptedMsg``) are not
``frozen`` dataclasses all the same: a frozen one's ``__init__`` sets each field through
``object.__setattr__``, four times the cost of a plain one (about 1.5 us a message, four
or five messages a decision; docs/performance-log.md, "The match server").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, TypedDict

from cirulla.rules import Options, View
from cirulla.rules.events import Event, EventType, register

if TYPE_CHECKING:  # only the annotation: the config's module need not load first
    from cirulla.server.match_config import MatchConfig

# ---------------------------------------------------------------------- server events


@dataclass(frozen=True, slots=True)
class TimedOut(Event):
    seat: int
    policy: str  # "forfeit_game" | "play_default_action"


@dataclass(frozen=True, slots=True)
class Disconnected(Event):
    seat: int
    grace_ms: int


@dataclass(frozen=True, slots=True)
class Reconnected(Event):
    seat: int


@dataclass(frozen=True, slots=True)
class GameEnded(Event):
    """Replaces the core's ``GameOver`` on the wire: adds why the game ended."""

    game_number: int
    winner: int | None
    totals: tuple[int, ...]
    cappotto: bool
    reason: str  # "target" | "cappotto" | "forfeit" | "aborted"
    forfeit_seat: int | None
    deals: int
    games_won: tuple[int, ...]


# The events the server adds to the rules core's, in the one registry (rules.events).
for _entry in (
    EventType(GameEnded, "game_over", 0, "gameover"),
    EventType(TimedOut, "timeout", 0, "timeout"),
    EventType(Disconnected, "player_disconnected", 0, "disconnected"),
    EventType(Reconnected, "player_reconnected", 0, "reconnected"),
):
    register(_entry)


# ---------------------------------------------------------------------- outgoing messages


@dataclass(frozen=True, slots=True)
class SeatPublic:
    seat: int
    side: int
    name: str
    version: str
    connected: bool


@dataclass(frozen=True, slots=True)
class WelcomeMsg:
    seat: int | None
    side: int | None
    match_id: str
    room_id: str
    settings: MatchConfig
    seats: tuple[SeatPublic, ...]
    resumed: bool


@dataclass(frozen=True, slots=True)
class NewGameMsg:
    game_number: int
    options: Options
    seats: tuple[SeatPublic, ...]
    dealer: int
    games_won: tuple[int, ...]
    best_of: int


class EventExtras(TypedDict, total=False):
    """What an event carries on the wire and in its record besides its own fields
    (``recordkeeping.note_event``): each only on the events it concerns."""

    #: Redeal: the how-many-th deck of its deal.
    attempt: int
    #: DealStarted: cards left in the stock.
    stock_count: int
    #: DealScored: per side [card_count, coin_count, primiera_value].
    counts: list[list[int]]
    #: CardPlayed: played for the seat by the timeout policy, and the action's notation.
    by_timeout: bool
    notation: str


#: The keys of ``EventExtras``, as a record's event entry may hold them.
ExtraKey = Literal["attempt", "stock_count", "counts", "by_timeout", "notation"]
EXTRA_KEYS: tuple[ExtraKey, ...] = ("attempt", "stock_count", "counts", "by_timeout", "notation")


@dataclass(slots=True)
class EventMsg:  # read-only: not frozen for speed (the module's docstring)
    sequence: int
    game_number: int
    deal_number: int
    event: Event
    private_to: int | None = None
    extras: EventExtras = field(default_factory=lambda: EventExtras())
    #: Its serialized PlayResponse, written once when it was published (the events of
    #: every round: ``convert.framing.event_frame``), for every seat that gets it: the
    #: other fields' encoding, so left out of comparisons.
    framed: bytes | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class ViewMsg:
    view: View
    game_number: int
    sequence: int
    seats: tuple[SeatPublic, ...]


@dataclass(frozen=True, slots=True)
class ClockState:
    move_left_ms: int | None
    bank_left_ms: int | None
    increment_ms: int | None = None


@dataclass(slots=True)
class DecisionMsg:  # read-only: not frozen for speed (the module's docstring)
    """A seat's decision request. The session's own carry their bytes (``framed``: the
    serialized PlayResponse, written from the game's state when the decision opened,
    ``convert.framing.decision_frame``) and no ``view``; one built from a ``ViewMsg`` is
    written when it is sent."""

    decision_id: int
    view: ViewMsg | None
    legal_codes: tuple[int, ...]
    clock: ClockState
    default_index: int = 0
    framed: bytes | None = None


@dataclass(slots=True)
class AcceptedMsg:  # read-only: not frozen for speed (the module's docstring)
    decision_id: int
    index: int
    elapsed_ms: int
    #: Its serialized PlayResponse when the session wrote it as it made it
    #: (``convert.framing.accepted_frame``): the other fields' encoding.
    framed: bytes | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class RejectedMsg:
    decision_id: int
    reason: str  # stale_decision | not_your_turn | index_out_of_range | invalid | illegal
    rule: str
    message: str
    clock: ClockState | None
    open_decision_id: int | None


@dataclass(frozen=True, slots=True)
class MatchResultMsg:
    match_id: str
    winner: int | None
    games_won: tuple[int, ...]
    games: tuple[GameEnded, ...]


@dataclass(frozen=True, slots=True)
class CommandListMsg:
    commands: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class GoodbyeMsg:
    reason: str  # client_quit | match_finished | server_shutdown | replaced | protocol_error
    message: str


#: Every message a match puts on a stream's queue (``connections.Connection``), in the
#: order the stream's writer (``service``) and ``convert.live`` tell them apart.
ServerMsg = (
    WelcomeMsg
    | NewGameMsg
    | EventMsg
    | ViewMsg
    | DecisionMsg
    | AcceptedMsg
    | RejectedMsg
    | MatchResultMsg
    | CommandListMsg
    | GoodbyeMsg
)
