"""One match on the server: seats and tokens, its games, the open decision, clocks, and
who receives what.

This is the referee. Every action goes through the rules core's checked ``Game.apply``;
every event is delivered only where ``event.visible_to(receiver)`` allows, so the hiding
rule lives in the core and is applied here in exactly one method (``_publish``). The
session speaks in ``messages`` values; the servicer converts them to protobuf.

An accepted move is acknowledged first and delivered (events, next decision) one event
loop step later, so the mover's round trip does not wait for the fan-out; every entry
point (and ``status``) settles first, so nothing outside ever sees a move half delivered.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from cirulla.rules import Action, Game, IllegalActionError, Options
from cirulla.rules.errors import DeckError
from cirulla.rules.events import DealScored, DealStarted, Event, GameOver, Redeal
from cirulla.rules.game import DeckSource
from cirulla.rules.match import match_winner
from cirulla.server.clock import SeatClock, TimeControl
from cirulla.server.errors import AlreadyExists, FailedPrecondition, Rejection, Unauthenticated
from cirulla.server.messages import (
    AcceptedMsg,
    ClockState,
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
    TimedOut,
    ViewMsg,
    WelcomeMsg,
)
from cirulla.server.replay import RECORD_FORMAT

log = logging.getLogger("cirulla.server")

POLICIES = ("play_default_action", "forfeit_game")


def new_seat_token() -> str:
    """A secret seat token (192 bits, hex): only letters and digits, so it can never start
    with "-" and be read as an option by a command line that receives it."""
    return secrets.token_hex(24)


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


@dataclass
class MatchConfig:
    """Settings of a match, already validated (``convert`` builds it from the request)."""

    options: Options
    preset: str = "standard"
    overrides: dict[str, Any] = field(default_factory=dict)
    best_of: int = 1
    time: TimeControl = field(default_factory=TimeControl)
    timeout_policy: str = "play_default_action"
    seed: int | None = None
    decks: list[list[int]] | None = None
    first_dealer: int | None = None
    disconnect_grace_ms: int = 0  # 0 = the server default


class Connection:
    """One live stream: a seat's Play call (``seat`` set) or a spectator (``seat`` None).

    The domain puts messages on ``queue``; the stream's writer takes them off in order.
    The queue is bounded: a client that stops reading its stream while messages keep
    coming is disconnected (``on_overflow``), never buffered without limit.
    """

    def __init__(self, seat: int | None = None, *, limit: int = 0) -> None:
        self.seat = seat
        self.queue: asyncio.Queue[Any] = asyncio.Queue()
        self.limit = limit  # 0 = unbounded
        self.session: MatchSession | None = None
        self.room: Any = None
        self.closed = False
        self.quit = False
        self.overflowed = False
        #: Called once when the queue overflows: the stream's owner ends the call.
        self.on_overflow: Callable[[Connection], None] | None = None

    def send(self, msg: Any) -> None:
        if self.closed:
            return
        if self.limit and self.queue.qsize() >= self.limit:
            self.closed = True
            self.overflowed = True
            if self.on_overflow is not None:
                self.on_overflow(self)
            return
        self.queue.put_nowait(msg)

    def close(self, reason: str, message: str = "") -> None:
        if not self.closed:
            self.queue.put_nowait(GoodbyeMsg(reason, message))
            self.closed = True


@dataclass
class Seat:
    name: str = ""
    version: str = ""
    conn: Connection | None = None
    joined: bool = False
    disconnected_at: float | None = None
    timeouts: int = 0
    forfeits: int = 0
    disconnects: int = 0
    illegal: int = 0
    #: Streams of this seat ended for breaking the protocol (e.g. an undecodable frame).
    protocol_errors: int = 0

    def faults(self) -> dict[str, int]:
        """The typed counts of SeatInfo (what programs read; ``notes`` is for people)."""
        return {
            "timeouts": self.timeouts,
            "illegal_actions": self.illegal,
            "forfeits": self.forfeits,
            "disconnects": self.disconnects,
        }

    def notes(self) -> list[str]:
        out = []
        if self.timeouts:
            out.append(f"timeout: {self.timeouts}")
        if self.forfeits:
            out.append("forfeit")
        if self.disconnects:
            out.append("disconnected")
        if self.illegal:
            out.append(f"illegal actions: {self.illegal}")
        if self.protocol_errors:
            out.append(f"protocol errors: {self.protocol_errors}")
        return out


@dataclass
class Decision:
    id: int
    seat: int
    codes: list[int]
    rejected: int = 0
    timer: asyncio.TimerHandle | None = None


@dataclass
class GameRun:
    """One game of the match, with everything its record needs."""

    number: int
    game: Game
    first_dealer: int
    start_time: str
    events: list[EventMsg] = field(default_factory=list)
    actions: list[dict[str, Any]] = field(default_factory=list)
    deals: list[dict[str, Any]] = field(default_factory=list)
    redeals: dict[int, int] = field(default_factory=dict)
    dealers: dict[int, int] = field(default_factory=dict)
    cur_deal: int = 0
    result: GameEnded | None = None
    record_id: str = ""


class MatchSession:
    def __init__(
        self,
        match_id: str,
        config: MatchConfig,
        *,
        room_id: str = "",
        default_grace_ms: int = 30_000,
        on_record: Callable[[Callable[[], dict[str, Any]]], None] | None = None,
        on_change: Callable[[MatchSession], None] | None = None,
        on_finished: Callable[[MatchSession], None] | None = None,
        close_on_finish: bool = True,
        deal_group: str = "",
        deal_group_size: int = 0,
    ) -> None:
        self.match_id = match_id
        self.room_id = room_id
        #: Twins sharing deck orders (CreateMatchRequest.deal_group); see dealgroups.py.
        self.deal_group = deal_group
        self.deal_group_size = deal_group_size
        self.config = config
        self.options = config.options
        n = self.options.players
        self.tokens = [new_seat_token() for _ in range(n)]
        self.seats = [Seat() for _ in range(n)]
        self.clocks = [SeatClock(config.time) for _ in range(n)]
        self.spectators: set[Connection] = set()
        self._status = "waiting"
        self.abort_reason = ""
        self.create_time = now_iso()
        self.grace_ms = config.disconnect_grace_ms or default_grace_ms
        self.seed = config.seed if config.seed is not None or config.decks else secrets.randbits(63)
        self.deck_source = DeckSource(self.seed if config.decks is None else None, config.decks)
        self.games_won = [0] * self.options.sides
        self.runs: list[GameRun] = []
        self.results: list[GameEnded] = []
        self.winner: int | None = None
        self.sequence = 0
        self.decision_counter = 0
        self.decision: Decision | None = None
        self._undelivered: tuple[GameRun, list[Event], bool, str] | None = None
        self._public: tuple[SeatPublic, ...] | None = None
        self._on_record = on_record
        self._on_change = on_change
        self._on_finished = on_finished
        self.close_on_finish = close_on_finish

    # ------------------------------------------------------------------ queries

    @property
    def status(self) -> str:
        """waiting, in_progress, finished or aborted, counting a move still being delivered."""
        self.settle()
        return self._status

    @status.setter
    def status(self, value: str) -> None:
        self._status = value

    @property
    def run(self) -> GameRun | None:
        return self.runs[-1] if self.runs else None

    def seat_public(self) -> tuple[SeatPublic, ...]:
        """Kept until a seat joins or leaves: every decision's view carries it."""
        if self._public is None:
            self._public = tuple(
                SeatPublic(i, self.options.side_of(i), s.name, s.version, s.conn is not None)
                for i, s in enumerate(self.seats)
            )
        return self._public

    def seat_for_token(self, token: str) -> int:
        if not token:
            raise Unauthenticated("Hello.seat_token is empty: send the token from CreateMatch")
        seat = token_seat(self.tokens, token)
        if seat is None:
            raise Unauthenticated(f"Hello.seat_token is not a token of match {self.match_id}")
        return seat

    def summary(self) -> dict[str, Any]:
        """Public summary (JSON-able): never tokens, seeds or hidden cards."""
        self.settle()
        return {
            "match_id": self.match_id,
            "room_id": self.room_id,
            "status": self.status,
            "create_time": self.create_time,
            "config": public_config(self.config),
            "seats": [
                {
                    **dataclasses.asdict(s),
                    **self.seats[s.seat].faults(),
                    "notes": self.seats[s.seat].notes(),
                }
                for s in self.seat_public()
            ],
            "current_game": len(self.runs),
            "games": [g.to_dict() for g in self.results],
            "games_won": list(self.games_won),
            "winner": self.winner,
            "abort_reason": self.abort_reason,
            "deal_group": self.deal_group,
            "deal_group_size": self.deal_group_size,
        }

    # ------------------------------------------------------------------ joining

    def attach(
        self,
        seat: int,
        conn: Connection,
        *,
        name: str,
        version: str,
        resume_after: int | None = None,
        takeover: bool = False,
        welcome: bool = True,
    ) -> None:
        """Give ``seat`` to the stream ``conn`` and bring it up to date."""
        self.settle()
        if self.status in ("finished", "aborted"):
            raise FailedPrecondition(f"match {self.match_id} is {self.status}")
        slot = self.seats[seat]
        if slot.conn is not None and slot.conn is not conn:
            if not takeover:
                raise AlreadyExists(
                    f"seat {seat} of match {self.match_id} already has a live stream "
                    "(reconnect with Hello.resume set to take it over)"
                )
            slot.conn.close("replaced", "another stream took over this seat")
        was_disconnected = slot.disconnected_at is not None
        slot.conn = conn
        self._public = None
        slot.joined = True
        slot.disconnected_at = None
        slot.name = name or slot.name or f"seat {seat}"
        slot.version = version or slot.version
        conn.seat = seat
        conn.session = self
        if welcome:
            conn.send(
                WelcomeMsg(
                    seat,
                    self.options.side_of(seat),
                    self.match_id,
                    self.room_id,
                    self.config,
                    self.seat_public(),
                    resume_after is not None,
                )
            )
        log.info(
            "seat_joined match=%s seat=%d name=%r resumed=%s",
            self.match_id,
            seat,
            slot.name,
            resume_after is not None,
        )
        if self.status == "waiting":
            if all(s.joined for s in self.seats):
                self._start()
            self._changed()
            return
        if was_disconnected:
            # The others get it live; ``conn`` gets it once, as the last of its missed
            # events: welcome, new_game, missed events in order, view (docs/protocol.md).
            self._publish([Reconnected(seat)], exclude=conn)
        self._catch_up(conn, seat, resume_after or 0)
        if self.decision is not None and self.decision.seat == seat:
            self._schedule_timer()
            conn.send(self._decision_msg(self.decision))
        self._changed()

    def detach(self, conn: Connection, *, quit: bool = False) -> None:
        """The stream ``conn`` ended (``quit``: with an orderly Quit)."""
        self.settle()
        if conn.seat is None:
            self.spectators.discard(conn)
            return
        slot = self.seats[conn.seat]
        if slot.conn is not conn:
            return
        slot.conn = None
        self._public = None
        if self.status != "in_progress":
            if self.status == "waiting":
                slot.joined = False
            self._changed()
            return
        slot.disconnected_at = time.monotonic()
        slot.disconnects += 1
        log.info("seat_disconnected match=%s seat=%d quit=%s", self.match_id, conn.seat, quit)
        self._publish([Disconnected(conn.seat, self.grace_ms)])
        if self.decision is not None and self.decision.seat == conn.seat:
            self._schedule_timer()
        self._changed()

    def add_spectator(self, conn: Connection, after_sequence: int = 0) -> None:
        self.settle()
        conn.session = self
        self.spectators.add(conn)
        conn.send(
            WelcomeMsg(
                None, None, self.match_id, self.room_id, self.config, self.seat_public(), False
            )
        )
        if self.runs:
            self._catch_up(conn, None, after_sequence)
        if self.status == "finished":
            conn.send(self._result_msg())
            conn.close("match_finished")
        elif self.status == "aborted":
            conn.close("aborted", self.abort_reason or f"match {self.match_id} was aborted")

    def _catch_up(self, conn: Connection, seat: int | None, after: int) -> None:
        run = self.run
        if run is None:
            return
        conn.send(self._new_game_msg(run))
        for msg in run.events:
            if msg.sequence > after and msg.event.visible_to(seat):
                conn.send(msg)
        conn.send(self._view_msg(run, seat))

    # ------------------------------------------------------------------ games

    def _start(self) -> None:
        self.status = "in_progress"
        log.info("match_started match=%s players=%d", self.match_id, self.options.players)
        self._new_game()

    def _new_game(self) -> None:
        prev = self.run
        if prev is None:
            first = self.config.first_dealer
        else:
            first = (prev.game.dealer + 1) % self.options.players
        events: list[Event] = []
        try:
            game = Game(
                self.options, deck_source=self.deck_source, first_dealer=first, events=events
            )
        except DeckError as exc:
            self._out_of_decks(exc)
            return
        # The dealer of deal 1 is the game's first dealer (a redeal keeps the dealer).
        run = GameRun(len(self.runs) + 1, game, game.dealer, now_iso())
        self.runs.append(run)
        for clock in self.clocks:
            clock.reset_game()
        msg = self._new_game_msg(run)
        for slot in self.seats:
            if slot.conn is not None:
                slot.conn.send(msg)
        for spec in self.spectators:
            spec.send(msg)
        self._publish(events)
        self._after_move(run)

    def _after_move(self, run: GameRun) -> None:
        game = run.game
        if game.winner is not None:
            self._finish_game(run, "cappotto" if game.cappotto else "target", game.winner)
            return
        if self.spectators:
            view = self._view_msg(run, None)
            for spec in self.spectators:
                spec.send(view)
        self._open_decision(run)

    def _open_decision(self, run: GameRun) -> None:
        seat = run.game.to_move
        assert seat is not None
        self.decision_counter += 1
        decision = Decision(self.decision_counter, seat, run.game.legal_codes())
        self.decision = decision
        self.clocks[seat].start()
        conn = self.seats[seat].conn
        if conn is not None:
            conn.send(self._decision_msg(decision))
        self._schedule_timer()

    def _schedule_timer(self) -> None:
        decision = self.decision
        if decision is None:
            return
        if decision.timer is not None:
            decision.timer.cancel()
            decision.timer = None
        deadlines = []
        clock_deadline = self.clocks[decision.seat].deadline()
        if clock_deadline is not None:
            deadlines.append(clock_deadline)
        gone = self.seats[decision.seat].disconnected_at
        if gone is not None:
            deadlines.append(gone + self.grace_ms / 1000)
        if deadlines:
            loop = asyncio.get_running_loop()
            decision.timer = loop.call_at(min(deadlines), self._timeout, decision.id)

    def _timeout(self, decision_id: int) -> None:
        self.settle()
        decision = self.decision
        run = self.run
        if decision is None or decision.id != decision_id or run is None:
            return
        seat = decision.seat
        self.seats[seat].timeouts += 1
        policy = self.config.timeout_policy
        log.info("timeout match=%s seat=%d policy=%s", self.match_id, seat, policy)
        self._publish([TimedOut(seat, policy)])
        if policy == "forfeit_game":
            self.clocks[seat].stop()
            self.decision = None
            self.seats[seat].forfeits += 1
            self._finish_game(run, "forfeit", self._forfeit_winner(run, seat), forfeit_seat=seat)
        else:
            self._play(run, decision, decision.codes[0], by_timeout=True)
        self._changed()

    def _forfeit_winner(self, run: GameRun, seat: int) -> int:
        """The forfeiting side loses; among the others the best total wins (ties: seat order)."""
        loser = self.options.side_of(seat)
        n = self.options.players
        order = [self.options.side_of((seat + k) % n) for k in range(1, n)]
        others = [s for s in dict.fromkeys(order) if s != loser]
        return max(others, key=lambda s: (run.game.totals[s], -others.index(s)))

    def _finish_game(
        self, run: GameRun, reason: str, winner: int, forfeit_seat: int | None = None
    ) -> None:
        if self.decision is not None and self.decision.timer is not None:
            self.decision.timer.cancel()
        self.decision = None
        self.games_won[winner] += 1
        ended = GameEnded(
            run.number,
            winner,
            tuple(run.game.totals),
            run.game.cappotto,
            reason,
            forfeit_seat,
            run.game.deal_no,
            tuple(self.games_won),
        )
        run.result = ended
        self.results.append(ended)
        self._publish([ended])
        log.info(
            "game_over match=%s game=%d winner_side=%d totals=%s reason=%s",
            self.match_id,
            run.number,
            winner,
            list(run.game.totals),
            reason,
        )
        run.record_id = f"{self.match_id}-g{run.number}"
        if self._on_record is not None:
            # Built (and written) later, off the event loop: the finished run no longer
            # changes, and the seats and finish time are taken now.
            self._on_record(
                functools.partial(self.record, run, seats=self.seat_public(), finish=now_iso())
            )
        match_won_by = match_winner(self.games_won, self.config.best_of)
        if match_won_by is not None:
            self.winner = match_won_by
            self._finish_match()
        else:
            self._changed()
            self._new_game()

    def _finish_match(self) -> None:
        self.status = "finished"
        log.info(
            "match_over match=%s winner_side=%s games_won=%s",
            self.match_id,
            self.winner,
            self.games_won,
        )
        result = self._result_msg()
        for conn in self._receivers():
            conn.send(result)
            if self.close_on_finish:
                conn.close("match_finished", "the match is over")
        self._changed()
        if self._on_finished is not None:
            self._on_finished(self)

    def abort(self, reason: str, message: str) -> None:
        """Stop the match: every stream gets Goodbye ``reason`` with ``message``.

        ``server_shutdown`` only says goodbye (the status is left as it was); any other
        reason ends a waiting or running match for good as ``aborted``, with no result,
        and keeps ``message`` as the abort reason.
        """
        self.settle()
        decision = self.decision
        if decision is not None and decision.timer is not None:
            decision.timer.cancel()
            decision.timer = None
        ended = self.status in ("waiting", "in_progress") and reason != "server_shutdown"
        if ended:
            if decision is not None:
                self.clocks[decision.seat].stop()
                self.decision = None
            self.status = "aborted"
            self.abort_reason = message
            log.info("match_aborted match=%s reason=%r", self.match_id, message)
        for conn in self._receivers():
            conn.close(reason, message)
        if ended:
            self._changed()

    def _out_of_decks(self, exc: DeckError) -> None:
        """Explicit deck orders ran out: the match cannot go on, so it ends as aborted."""
        self.abort(
            "aborted",
            f"MatchSettings.deck_orders ran out: {exc}. Give one deck order per deal, plus "
            "one per void deal, for every game of the match",
        )

    def _receivers(self) -> list[Connection]:
        return [s.conn for s in self.seats if s.conn is not None] + list(self.spectators)

    # ------------------------------------------------------------------ actions

    def submit(self, conn: Connection, decision_id: int, choice: Any) -> None:
        """A SubmitAction from ``conn``: accept it, or reject it and change nothing.

        ``choice`` is a legal action index (int), a notation (str), an ``Action``, or the
        exception raised while decoding the message (reported as malformed).
        """
        self.settle()
        try:
            self._submit(conn, decision_id, choice)
        except (Rejection, ValueError) as exc:
            from cirulla.server.errors import reject_reason_for

            reason, rule = reject_reason_for(exc)
            seat = conn.seat
            decision = self.decision
            # An index outside the list is a rejected action like any other: counted.
            if reason in ("illegal", "index_out_of_range") and seat is not None:
                self.seats[seat].illegal += 1
                if decision is not None and decision.seat == seat:
                    decision.rejected += 1
            open_id = decision.id if decision is not None and decision.seat == seat else None
            clock = self._clock_state(seat) if open_id is not None and seat is not None else None
            log.debug(
                "rejected match=%s seat=%s reason=%s rule=%s", self.match_id, seat, reason, rule
            )
            conn.send(
                RejectedMsg(
                    decision_id, reason, rule, str(getattr(exc, "message", exc)), clock, open_id
                )
            )

    def _submit(self, conn: Connection, decision_id: int, choice: Any) -> None:
        seat = conn.seat
        decision = self.decision
        run = self.run
        if seat is None or conn.session is not self or self.seats[seat].conn is not conn:
            raise Rejection("not_your_turn", "turn", "this stream does not hold a seat")
        if decision is None or run is None or self.status != "in_progress":
            raise Rejection("not_your_turn", "turn", "no decision is open in this match")
        if decision.seat != seat:
            raise Rejection(
                "not_your_turn", "turn", f"it is seat {decision.seat}'s turn, not seat {seat}'s"
            )
        if decision_id != decision.id:
            raise Rejection(
                "stale_decision",
                "decision_id",
                f"decision_id {decision_id} is not the open decision {decision.id}",
            )
        if isinstance(choice, Exception):
            raise choice
        if isinstance(choice, bool) or choice is None:
            raise Rejection(
                "invalid",
                "choice",
                "SubmitAction.choice is empty: set legal_action_index, action or notation",
            )
        if isinstance(choice, int):
            if not 0 <= choice < len(decision.codes):
                raise Rejection(
                    "index_out_of_range",
                    "legal_action_index",
                    f"SubmitAction.legal_action_index: {choice} is outside the valid range "
                    f"0..{len(decision.codes) - 1} (decision {decision.id} offers "
                    f"{len(decision.codes)} legal actions)",
                )
            code = decision.codes[choice]
        else:
            action = Action.parse(choice) if isinstance(choice, str) else choice
            code = action.to_int()
            if code not in decision.codes:
                raise IllegalActionError(*run.game.explain_illegal(action))
        self._play(run, decision, code, by_timeout=False)

    def _play(self, run: GameRun, decision: Decision, code: int, *, by_timeout: bool) -> None:
        seat = decision.seat
        try:
            events = run.game.apply(code, seat)
        except DeckError as exc:  # the move ended a deal and no deck order is left
            self._out_of_decks(exc)
            return
        if decision.timer is not None:
            decision.timer.cancel()
        elapsed = self.clocks[seat].stop(answered=not by_timeout)
        self.decision = None
        index = decision.codes.index(code)
        text = str(Action.from_int(code))
        run.actions.append(
            {
                "decision_id": decision.id,
                "seat": seat,
                "code": code,
                "notation": text,
                "elapsed_ms": elapsed,
                "by_timeout": by_timeout,
                "rejected_attempts": decision.rejected,
                "deal": run.cur_deal,
            }
        )
        self._undelivered = (run, events, by_timeout, text)
        conn = self.seats[seat].conn
        if conn is not None and not by_timeout:
            conn.send(AcceptedMsg(decision.id, index, elapsed))
            # The mover's stream writer was woken first, so it sends AcceptedMsg before
            # this runs; anything else reaching the session earlier settles it itself.
            asyncio.get_running_loop().call_soon(self.settle)
        else:
            self.settle()

    def settle(self) -> None:
        """Deliver the last accepted move (its events, then the next decision) if pending."""
        pending = self._undelivered
        if pending is None:
            return
        self._undelivered = None
        run, events, by_timeout, text = pending
        self._publish(events, by_timeout=by_timeout, notation=text)
        self._after_move(run)

    # ------------------------------------------------------------------ delivery

    def _publish(
        self,
        events: list[Event],
        *,
        by_timeout: bool = False,
        notation: str = "",
        exclude: Connection | None = None,
    ) -> None:
        """Number, store and deliver events: each receiver gets only what it may see."""
        run = self.run
        if run is None:
            return
        game = run.game
        for event in events:
            if isinstance(event, GameOver):
                continue  # the session publishes GameEnded with the reason instead
            extras: dict[str, Any] = {}
            if isinstance(event, Redeal):
                run.cur_deal = event.deal
                run.redeals[event.deal] = run.redeals.get(event.deal, 0) + 1
                extras["attempt"] = run.redeals[event.deal]
            elif isinstance(event, DealStarted):
                run.cur_deal = event.deal
                run.dealers[event.deal] = event.dealer
                extras["stock_count"] = 40 - 4 - sum(event.hand_sizes)
            elif isinstance(event, DealScored):
                # SideScore.card_count, coin_count, primiera_value per side.
                extras["counts"] = [list(c) for c in event.score.counts()]
                run.deals.append(
                    {
                        "deal": event.deal,
                        "dealer": run.dealers.get(event.deal, game.dealer),
                        "decks": run.redeals.get(event.deal, 0) + 1,
                        "score": event.score.to_dict(),
                        "totals": list(event.totals),
                        "counts": extras["counts"],
                    }
                )
            elif type(event).__name__ == "CardPlayed":
                extras["by_timeout"] = by_timeout
                extras["notation"] = notation
            self.sequence += 1
            private = getattr(event, "seat", None) if not event.visible_to(None) else None
            msg = EventMsg(self.sequence, run.number, run.cur_deal, event, private, extras)
            run.events.append(msg)
            for seat, slot in enumerate(self.seats):
                if slot.conn is not None and slot.conn is not exclude and event.visible_to(seat):
                    slot.conn.send(msg)
            if event.visible_to(None):
                for spec in self.spectators:
                    spec.send(msg)

    def _new_game_msg(self, run: GameRun) -> NewGameMsg:
        return NewGameMsg(
            run.number,
            self.options,
            self.seat_public(),
            run.first_dealer,
            tuple(self.games_won)
            if run.result is None
            else tuple(
                w - (1 if i == run.result.winner else 0) for i, w in enumerate(self.games_won)
            ),
            self.config.best_of,
        )

    def _view_msg(self, run: GameRun, seat: int | None) -> ViewMsg:
        return ViewMsg(run.game.view(seat), run.number, self.sequence, self.seat_public())

    def _clock_state(self, seat: int) -> ClockState:
        move, bank = self.clocks[seat].left()
        return ClockState(move, bank, self.clocks[seat].increment_ms())

    def _decision_msg(self, decision: Decision) -> DecisionMsg:
        run = self.run
        assert run is not None
        return DecisionMsg(
            decision.id,
            self._view_msg(run, decision.seat),
            tuple(decision.codes),
            self._clock_state(decision.seat),
            0,
        )

    def _result_msg(self) -> MatchResultMsg:
        return MatchResultMsg(
            self.match_id, self.winner, tuple(self.games_won), tuple(self.results)
        )

    def _changed(self) -> None:
        if self._on_change is not None:
            self._on_change(self)

    # ------------------------------------------------------------------ records

    def record(
        self,
        run: GameRun,
        *,
        seats: tuple[SeatPublic, ...] | None = None,
        finish: str | None = None,
    ) -> dict[str, Any]:
        """The replayable record of a finished game (JSON-able; holds every hidden card).

        Reads only what no longer changes once the game is over (plus ``seats`` and
        ``finish`` when given), so it may run in another thread.
        """
        assert run.result is not None
        return {
            "format": RECORD_FORMAT,
            "record_id": run.record_id,
            "match_id": self.match_id,
            "room_id": self.room_id,
            "deal_group": self.deal_group,
            "game_number": run.number,
            "options": self.options.to_dict(),
            "config": public_config(self.config),
            "first_dealer": run.first_dealer,
            "decks": [list(d) for d in run.game.decks_used],
            "seats": [
                {"seat": s.seat, "side": s.side, "name": s.name, "version": s.version}
                for s in (seats if seats is not None else self.seat_public())
            ],
            "actions": run.actions,
            "events": [
                {
                    "sequence": m.sequence,
                    "deal": m.deal_number,
                    "private_to": m.private_to,
                    **m.extras,
                    **m.event.to_dict(),
                }
                for m in run.events
            ],
            "deals": run.deals,
            "result": run.result.to_dict(),
            "start_time": run.start_time,
            "finish_time": finish or now_iso(),
        }


def token_seat(tokens: list[str], token: str) -> int | None:
    """The seat whose token is ``token`` (compared in constant time, any characters)."""
    given = token.encode("utf-8", "surrogatepass")
    for seat, t in enumerate(tokens):
        if secrets.compare_digest(t.encode(), given):
            return seat
    return None


def public_config(config: MatchConfig) -> dict[str, Any]:
    """The settings anyone may see: the deck source (seed, decks) is left out."""
    return {
        "preset": config.preset,
        "overrides": dict(config.overrides),
        "options": config.options.to_dict(),
        "best_of": config.best_of,
        "move_limit_ms": config.time.move_limit_ms,
        "game_bank_ms": config.time.game_bank_ms,
        "increment_ms": config.time.increment_ms,
        "margin_ms": config.time.margin_ms,
        "timeout_policy": config.timeout_policy,
        "first_dealer": config.first_dealer,
        "disconnect_grace_ms": config.disconnect_grace_ms,
    }
