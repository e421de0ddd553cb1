"""protobuf <-> server domain, the live streams: events, views, decisions and the other
messages of a Play or Spectate stream, with the hand-written framing that sends a batch
without copying its messages.

Names: ``X_pb`` builds a protobuf message (``convert.settings`` has the conventions).
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, cast

from google.protobuf.message import Message

from cirulla import wire
from cirulla.rules.cards import WILD
from cirulla.rules.events import (
    BY_CLASS,
    CardPlayed,
    DealerBonus,
    DealScored,
    DealStarted,
    Declared,
    Event,
    HandDealt,
    LastTake,
    Redeal,
    RoundDealt,
)
from cirulla.rules.options import seats_of_side
from cirulla.rules.scoring import DealScoreDoc, SideScoreDoc
from cirulla.server.convert import framing
from cirulla.server.convert.settings import POLICY_PB, legal_parts, settings_pb
from cirulla.server.documents import GameResultDoc, SeatSummary
from cirulla.server.messages import (
    AcceptedMsg,
    ClockState,
    CommandListMsg,
    DecisionMsg,
    Disconnected,
    EventMsg,
    GameEnded,
    GoodbyeMsg,
    MatchResultMsg,
    NewGameMsg,
    Reconnected,
    RejectedMsg,
    SeatPublic,
    ServerMsg,
    TimedOut,
    ViewMsg,
    WelcomeMsg,
)
from cirulla.server.recordkeeping import result_doc
from cirulla.v1 import (
    events_pb2,
    game_pb2,
    match_pb2,
    match_service_pb2,
    play_pb2,
)
from cirulla.version import PROTOCOL_VERSION, __version__
from cirulla.wire import CARD_MESSAGES, cards_to_proto, options_to_proto

SERVER_NAME = "cirulla-server"
CAPABILITIES = (
    "hello",
    "submit_action",
    "submit_action.notation",
    "list_commands",
    "quit",
    "resume",
    "batch",
    "auto_play_forced",
)


def _score_pb(
    score: SideScoreDoc,
    side: int,
    seats: list[int],
    game_total: int,
    cappotto: bool,
    counts: list[int] | None = None,
) -> game_pb2.SideScore:
    card_count, coin_count, primiera_value = counts or (0, 0, 0)
    return game_pb2.SideScore(
        side=side,
        seats=seats,
        card_count=card_count,
        coin_count=coin_count,
        primiera_value=primiera_value,
        cards=score["cards"],
        coins=score["coins"],
        settebello=score["settebello"],
        primiera=score["primiera"],
        scope=score["scope"],
        grande=score["grande"],
        piccola=score["piccola"],
        total=score["total"],
        game_total=game_total,
        cappotto=cappotto,
    )


def deal_result_pb(
    game_number: int,
    deal: int,
    score: DealScoreDoc,
    totals: list[int],
    players: int,
    counts: list[list[int]] | None = None,
) -> events_pb2.DealResult:
    """``counts``: per side [card_count, coin_count, primiera_value] (records before they
    were kept have none: the fields stay 0)."""
    cap = score.get("cappotto")
    out = events_pb2.DealResult(game_number=game_number, deal_number=deal, totals=totals)
    for side, s in enumerate(score["sides"]):
        side_counts = counts[side] if counts and side < len(counts) else None
        out.scores.append(
            _score_pb(s, side, seats_of_side(side, players), totals[side], cap == side, side_counts)
        )
    if cap is not None:
        out.cappotto_side = cap
    return out


def game_result_pb(g: GameEnded | GameResultDoc) -> events_pb2.GameResult:
    d = result_doc(g) if isinstance(g, GameEnded) else g
    out = events_pb2.GameResult(
        game_number=d["game_number"],
        totals=d["totals"],
        cappotto=d["cappotto"],
        reason=wire.GAME_END_REASONS_PB.get(d["reason"], events_pb2.GAME_END_REASON_UNSPECIFIED),
        deals=d["deals"],
        games_won=d["games_won"],
    )
    winner, forfeit_seat = d.get("winner"), d.get("forfeit_seat")
    if winner is not None:
        out.winner_side = winner
    if forfeit_seat is not None:
        out.forfeit_seat = forfeit_seat
    return out


# One builder per event type, keyed by class; the field of Event.body it fills is the
# registry's (cirulla.rules.events.BY_CLASS[cls].wire).
_Builder = Callable[[Any, EventMsg, int], Message]
_T = TypeVar("_T")


def _deal_started(e: DealStarted, msg: EventMsg, players: int) -> Message:
    return events_pb2.DealStarted(
        deal_number=e.deal,
        dealer=e.dealer,
        table=cards_to_proto(e.table),
        hand_sizes=e.hand_sizes,
        stock_count=msg.extras.get("stock_count", 0),
    )


def _hand_dealt(e: HandDealt, msg: EventMsg, players: int) -> Message:
    return events_pb2.HandDealt(seat=e.seat, round=e.round, cards=cards_to_proto(e.hand))


def _redeal(e: Redeal, msg: EventMsg, players: int) -> Message:
    return events_pb2.Redeal(
        deal_number=e.deal,
        dealer=e.dealer,
        table=cards_to_proto(e.table),
        attempt=msg.extras.get("attempt", 1),
    )


def _dealer_bonus(e: DealerBonus, msg: EventMsg, players: int) -> Message:
    return events_pb2.DealerBonus(
        dealer=e.dealer, side=e.side, cards=cards_to_proto(e.cards), scope=e.scope
    )


def _declared(e: Declared, msg: EventMsg, players: int) -> Message:
    d = events_pb2.Declaration(
        seat=e.seat,
        side=e.side,
        kind=wire.DECLARATION_KINDS_PB[e.kind],
        cards=cards_to_proto(e.cards),
        scope=e.points,
    )
    if e.wild_value is not None:
        d.wild_value = e.wild_value
    return d


def _card_played(e: CardPlayed, msg: EventMsg, players: int) -> Message:
    p = events_pb2.CardPlayed(
        seat=e.seat,
        side=e.side,
        card=CARD_MESSAGES[e.card],
        captured=cards_to_proto(e.captured),
        scopa=e.scopa,
        ace_sweep=e.ace_sweep,
        notation=msg.extras.get("notation", ""),
        by_timeout=msg.extras.get("by_timeout", False),
    )
    if e.card == WILD and e.value != 7:  # 7H counted as a named value
        p.wild_value = e.value
    return p


def _round_dealt(e: RoundDealt, msg: EventMsg, players: int) -> Message:
    return events_pb2.RoundDealt(round=e.round, hand_sizes=e.hand_sizes, stock_count=e.stock)


def _last_take(e: LastTake, msg: EventMsg, players: int) -> Message:
    lt = events_pb2.LastTake(cards=cards_to_proto(e.cards))
    if e.side is not None:
        lt.side = e.side
    return lt


def _deal_scored(e: DealScored, msg: EventMsg, players: int) -> Message:
    return deal_result_pb(
        msg.game_number,
        e.deal,
        e.score.to_dict(),
        list(e.totals),
        players,
        msg.extras.get("counts"),
    )


def _game_ended(e: GameEnded, msg: EventMsg, players: int) -> Message:
    return game_result_pb(e)


def _timed_out(e: TimedOut, msg: EventMsg, players: int) -> Message:
    return events_pb2.Timeout(seat=e.seat, policy=POLICY_PB[e.policy])


def _disconnected(e: Disconnected, msg: EventMsg, players: int) -> Message:
    return events_pb2.PlayerDisconnected(seat=e.seat, grace_ms=e.grace_ms)


def _reconnected(e: Reconnected, msg: EventMsg, players: int) -> Message:
    return events_pb2.PlayerReconnected(seat=e.seat)


#: Every event type that goes on the wire, and the builder of its Event.body message.
EVENT_BUILDERS: dict[type[Event], _Builder] = {
    DealStarted: _deal_started,
    HandDealt: _hand_dealt,
    Redeal: _redeal,
    DealerBonus: _dealer_bonus,
    Declared: _declared,
    CardPlayed: _card_played,
    RoundDealt: _round_dealt,
    LastTake: _last_take,
    DealScored: _deal_scored,
    GameEnded: _game_ended,
    TimedOut: _timed_out,
    Disconnected: _disconnected,
    Reconnected: _reconnected,
}


def event_pb(msg: EventMsg, players: int) -> events_pb2.Event:
    out = events_pb2.Event(
        sequence=msg.sequence, game_number=msg.game_number, deal_number=msg.deal_number
    )
    if msg.private_to is not None:
        out.private_to_seat = msg.private_to
    e = msg.event
    build = EVENT_BUILDERS.get(type(e))
    if build is not None:
        getattr(out, BY_CLASS[type(e)].wire).CopyFrom(build(e, msg, players))
    return out


def seat_infos_pb(seats: Sequence[SeatPublic | SeatSummary]) -> list[match_pb2.SeatInfo]:
    """Seats of a match, record or room: ``SeatPublic`` values, or seat documents (which
    also carry the fault counts and notes): a match summary's, or a record's made into
    them (``convert.records.record_seats``: its counts when its game ended). A room's
    seat documents become ``SeatPublic`` values first (``convert.records``)."""
    out = []
    for s in seats:
        if isinstance(s, SeatPublic):
            info = match_pb2.SeatInfo(
                seat=s.seat, side=s.side, name=s.name, version=s.version, connected=s.connected
            )
        else:
            info = match_pb2.SeatInfo(
                seat=s["seat"],
                side=s["side"],
                name=s["name"],
                version=s.get("version", ""),
                connected=s.get("connected", False),
                notes=s.get("notes", []),
                timeouts=s.get("timeouts", 0),
                illegal_actions=s.get("illegal_actions", 0),
                forfeits=s.get("forfeits", 0),
                disconnects=s.get("disconnects", 0),
            )
        out.append(info)
    return out


@functools.lru_cache(maxsize=4096)
def _seat_state(
    seat: int, side: int, name: str, hand_count: int, declared: int, connected: bool
) -> game_pb2.SeatState:
    return game_pb2.SeatState(
        seat=seat,
        side=side,
        name=name,
        hand_count=hand_count,
        declared_cards=cards_to_proto(declared),
        connected=connected,
    )


@functools.lru_cache(maxsize=4096)
def _side_state(
    players: int, side: int, captured: int, scope: int, total: int
) -> game_pb2.SideState:
    """A side's pile changes only when it captures: one message serves many views."""
    return game_pb2.SideState(
        side=side,
        seats=seats_of_side(side, players),
        captured=cards_to_proto(captured),
        scope=scope,
        game_total=total,
    )


def view_pb(msg: ViewMsg, out: game_pb2.View | None = None) -> game_pb2.View:
    """The wire view; fills ``out`` in place when given (no copy into the parent)."""
    v = msg.view
    players = v.options.players
    if out is None:
        out = game_pb2.View()
    out.players = players
    out.game_number = msg.game_number
    out.deal_number = v.deal
    out.round = v.round
    out.dealer = v.dealer
    out.hand.extend(cards_to_proto(v.hand))
    out.table.extend(cards_to_proto(v.table))
    out.stock_count = v.stock
    out.event_sequence = msg.sequence
    if v.seat is not None:
        out.seat = v.seat
    if v.to_move is not None:
        out.to_move = v.to_move
    if v.wild_value:
        out.wild_value = v.wild_value
    if v.last_taker is not None:
        out.last_taker_side = v.last_taker
    seats = msg.seats
    out.seats.extend(
        [
            _seat_state(
                s,
                seats[s].side,
                seats[s].name,
                v.hand_sizes[s],
                v.declared[s],
                seats[s].connected,
            )
            for s in range(players)
        ]
    )
    out.sides.extend(
        [
            _side_state(players, side, v.captured[side], v.scope[side], v.totals[side])
            for side in range(v.options.sides)
        ]
    )
    return out


def _clock_pb(clock: ClockState | None) -> game_pb2.Clock:
    out = game_pb2.Clock()
    if clock is not None:
        if clock.move_left_ms is not None:
            out.move_time_left_ms = clock.move_left_ms
        if clock.bank_left_ms is not None:
            out.bank_time_left_ms = clock.bank_left_ms
        if clock.increment_ms is not None:
            out.increment_ms = clock.increment_ms
    return out


def decision_pb(
    msg: DecisionMsg, out: play_pb2.DecisionRequest | None = None
) -> play_pb2.DecisionRequest:
    """The DecisionRequest; fills ``out`` in place when given (no copy into the parent)."""
    if out is None:
        out = play_pb2.DecisionRequest()
    out.decision_id = msg.decision_id
    assert msg.view is not None, "a framed decision is written from its bytes"
    view_pb(msg.view, out.view)
    add = out.legal_actions.add
    for i, code in enumerate(msg.legal_codes):
        action, text = legal_parts(code)
        add(index=i, action=action, notation=text)
    out.clock.SetInParent()
    clock = msg.clock
    if clock is not None:
        if clock.move_left_ms is not None:
            out.clock.move_time_left_ms = clock.move_left_ms
        if clock.bank_left_ms is not None:
            out.clock.bank_time_left_ms = clock.bank_left_ms
        if clock.increment_ms is not None:
            out.clock.increment_ms = clock.increment_ms
    out.default_action_index = msg.default_index
    return out


_REJECT_PB: dict[str, play_pb2.RejectReason] = {
    "stale_decision": play_pb2.REJECT_REASON_STALE_DECISION,
    "not_your_turn": play_pb2.REJECT_REASON_NOT_YOUR_TURN,
    "index_out_of_range": play_pb2.REJECT_REASON_INDEX_OUT_OF_RANGE,
    "invalid": play_pb2.REJECT_REASON_INVALID,
    "illegal": play_pb2.REJECT_REASON_ILLEGAL,
}
_GOODBYE_PB: dict[str, play_pb2.GoodbyeReason] = {
    "client_quit": play_pb2.GOODBYE_REASON_CLIENT_QUIT,
    "match_finished": play_pb2.GOODBYE_REASON_MATCH_FINISHED,
    "server_shutdown": play_pb2.GOODBYE_REASON_SERVER_SHUTDOWN,
    "replaced": play_pb2.GOODBYE_REASON_REPLACED,
    "protocol_error": play_pb2.GOODBYE_REASON_PROTOCOL_ERROR,
    "aborted": play_pb2.GOODBYE_REASON_ABORTED,
}


def welcome_pb(msg: WelcomeMsg) -> play_pb2.Welcome:
    out = play_pb2.Welcome(
        server_name=SERVER_NAME,
        server_version=__version__,
        protocol_version=PROTOCOL_VERSION,
        capabilities=CAPABILITIES,
        match_id=msg.match_id,
        room_id=msg.room_id,
        settings=settings_pb(msg.settings),
        seats=seat_infos_pb(msg.seats),
        resumed=msg.resumed,
    )
    if msg.seat is not None:
        out.seat = msg.seat
        out.side = msg.side or 0
    return out


def new_game_pb(msg: NewGameMsg) -> play_pb2.NewGame:
    return play_pb2.NewGame(
        game_number=msg.game_number,
        rules=options_to_proto(msg.options),
        seats=seat_infos_pb(msg.seats),
        dealer=msg.dealer,
        games_won=msg.games_won,
        best_of=msg.best_of,
    )


def match_result_pb(msg: MatchResultMsg) -> match_pb2.MatchResult:
    out = match_pb2.MatchResult(
        match_id=msg.match_id, games_won=msg.games_won, games=[game_result_pb(g) for g in msg.games]
    )
    if msg.winner is not None:
        out.winner_side = msg.winner
    return out


# Messages sent to several streams (events, spectator views, new game, result) are the
# same object on every queue: encode each once. Keyed by identity; the entry keeps the
# message alive so the id cannot be reused while it is cached.
_SHARED = (EventMsg, ViewMsg, NewGameMsg, MatchResultMsg)
_ENCODED: OrderedDict[tuple[int, str], tuple[ServerMsg, object]] = OrderedDict()
_ENCODED_MAX = 1024


def _encoded(msg: ServerMsg, kind: str, build: Callable[[], _T]) -> _T:
    key = (id(msg), kind)
    hit = _ENCODED.get(key)
    if hit is not None and hit[0] is msg:
        return cast(_T, hit[1])
    out = build()
    _ENCODED[key] = (msg, out)
    if len(_ENCODED) > _ENCODED_MAX:
        _ENCODED.popitem(last=False)
    return out


def play_response(msg: ServerMsg, players: int) -> match_service_pb2.PlayResponse:
    """The PlayResponse for one domain message of a seat's stream (shared, read-only)."""
    if isinstance(msg, _SHARED):
        return _encoded(msg, "play", lambda: _play_response(msg, players))
    return _play_response(msg, players)


#: The serialized PlayResponse of shared messages (``_SHARED``), by identity, each entry
#: keeping its message alive (as ``_ENCODED``); oldest out first.
_PLAY_BYTES: dict[int, tuple[ServerMsg, bytes]] = {}
_SHARED_TYPES = frozenset(_SHARED)


def play_response_bytes(msg: ServerMsg, players: int) -> bytes:
    """The serialized PlayResponse of one domain message; a message sent to several
    streams (an event) is serialized once. The messages of every move (a decision, an
    acceptance, a played card) are written from cached bytes (``framing``)."""
    if type(msg) is EventMsg and msg.framed is not None:
        return msg.framed
    if type(msg) is DecisionMsg:
        return msg.framed if msg.framed is not None else framing.decision_response(msg)
    if type(msg) is AcceptedMsg:
        return msg.framed if msg.framed is not None else framing.accepted_response(msg)
    if type(msg) not in _SHARED_TYPES:
        return _play_response(msg, players).SerializeToString()
    if type(msg) is EventMsg and msg.private_to is not None:
        return _shared_bytes(msg, players)  # one receiver: nothing to share
    key = id(msg)
    hit = _PLAY_BYTES.get(key)
    if hit is not None and hit[0] is msg:
        return hit[1]
    out = _shared_bytes(msg, players)
    _PLAY_BYTES[key] = (msg, out)
    if len(_PLAY_BYTES) > _ENCODED_MAX:
        del _PLAY_BYTES[next(iter(_PLAY_BYTES))]
    return out


def _shared_bytes(msg: ServerMsg, players: int) -> bytes:
    if type(msg) is EventMsg:
        framed = framing.event_response(msg)
        if framed is not None:
            return framed
    return _play_response(msg, players).SerializeToString()


# PlayResponse.batch is field 11 and PlayResponseBatch.responses field 1, both
# length-delimited: a batch is written from its parts' bytes without copying messages.
_BATCH_TAG = bytes([11 << 3 | 2])
_RESPONSE_TAG = bytes([1 << 3 | 2])


#: A batch entry's tag and length, for lengths under 16384 (a decision is ~1 KB).
_ENTRY_HEADS = tuple(_RESPONSE_TAG + framing.varint(n) for n in range(16384))
#: The messages whose bytes were written when they were made (``framed``, if not None).
_FRAMED = frozenset((EventMsg, DecisionMsg, AcceptedMsg))


def play_responses(msgs: Sequence[ServerMsg], players: int) -> bytes:
    """One serialized stream message for consecutive domain messages: a batch unless
    there is one (the bytes of ``PlayResponse(batch=PlayResponseBatch(...))``). When
    every one was written as it was made (``framed``: a move's acceptance, events and
    next decision), in one native call (``framing.batch``)."""
    whole = framing.batch(msgs)
    return whole if whole is not None else python_play_responses(msgs, players)


def python_play_responses(msgs: Sequence[ServerMsg], players: int) -> bytes:
    """``play_responses`` in Python: the reference, and the writer of any message not
    framed when it was made."""
    if len(msgs) == 1:
        return play_response_bytes(msgs[0], players)
    parts: list[bytes] = []
    append = parts.append
    heads = _ENTRY_HEADS
    for msg in msgs:
        part = msg.framed if type(msg) in _FRAMED else None  # type: ignore[union-attr]
        if part is None:
            part = play_response_bytes(msg, players)
        size = len(part)
        append(heads[size] if size < 16384 else _RESPONSE_TAG + framing.varint(size))
        append(part)
    inner = b"".join(parts)
    return _BATCH_TAG + framing.varint(len(inner)) + inner


def _play_response(msg: ServerMsg, players: int) -> match_service_pb2.PlayResponse:
    R = match_service_pb2.PlayResponse
    if isinstance(msg, EventMsg):
        return R(event=event_pb(msg, players))
    if isinstance(msg, DecisionMsg):
        if msg.framed is not None:
            return R.FromString(msg.framed)
        out = R()
        decision_pb(msg, out.decision_request)
        return out
    if isinstance(msg, AcceptedMsg):
        return R(
            action_accepted=play_pb2.ActionAccepted(
                decision_id=msg.decision_id, legal_action_index=msg.index, elapsed_ms=msg.elapsed_ms
            )
        )
    if isinstance(msg, RejectedMsg):
        rej = play_pb2.ActionRejected(
            decision_id=msg.decision_id,
            reason=_REJECT_PB[msg.reason],
            rule=msg.rule,
            message=msg.message,
            clock=_clock_pb(msg.clock),
        )
        if msg.open_decision_id is not None:
            rej.open_decision_id = msg.open_decision_id
        return R(action_rejected=rej)
    if isinstance(msg, ViewMsg):
        return R(view=view_pb(msg))
    if isinstance(msg, NewGameMsg):
        return R(new_game=new_game_pb(msg))
    if isinstance(msg, WelcomeMsg):
        return R(welcome=welcome_pb(msg))
    if isinstance(msg, MatchResultMsg):
        return R(match_result=match_result_pb(msg))
    if isinstance(msg, CommandListMsg):
        return R(command_list=play_pb2.CommandList(commands=msg.commands))
    if isinstance(msg, GoodbyeMsg):
        return R(goodbye=play_pb2.Goodbye(reason=_GOODBYE_PB[msg.reason], message=msg.message))
    raise TypeError(f"no PlayResponse for {type(msg).__name__}")


def spectate_response(msg: ServerMsg, players: int) -> match_service_pb2.SpectateResponse | None:
    """The SpectateResponse for a domain message; None for messages spectators never get."""
    if isinstance(msg, _SHARED):
        return _encoded(msg, "spectate", lambda: _spectate_response(msg, players))
    return _spectate_response(msg, players)


def _spectate_response(msg: ServerMsg, players: int) -> match_service_pb2.SpectateResponse | None:
    R = match_service_pb2.SpectateResponse
    if isinstance(msg, EventMsg):
        return R(event=event_pb(msg, players))
    if isinstance(msg, ViewMsg):
        return R(view=view_pb(msg))
    if isinstance(msg, NewGameMsg):
        return R(new_game=new_game_pb(msg))
    if isinstance(msg, WelcomeMsg):
        return R(welcome=welcome_pb(msg))
    if isinstance(msg, MatchResultMsg):
        return R(match_result=match_result_pb(msg))
    if isinstance(msg, GoodbyeMsg):
        return R(goodbye=play_pb2.Goodbye(reason=_GOODBYE_PB[msg.reason], message=msg.message))
    return None
