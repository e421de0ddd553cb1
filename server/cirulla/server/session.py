"""One match on the server: its seats, its games and how they end.

This is the referee. Every action goes through the rules core's checked ``Game.apply``.
The session keeps the match's flow (joining, games, moves, the end of a game and of the
match, aborts) and leaves each other job to a module of its own:

- ``decisions``: the open decision, the seats' clocks and timers, what a submission means,
  who wins a forfeited game;
- ``admission``: which seat a token opens, a stream taking its seat (the Hello's name and
  version fixed at the first);
- ``publishing``: the events numbered, kept and delivered, and the messages built for
  each receiver (``connections.Delivery``: who receives what, the hiding rule);
- ``recordkeeping``: each game's bookkeeping and its replayable record;
- ``connections``, ``match_config``: the seats and tokens, a live stream, the settings.
  The session speaks in ``messages`` values; the servicer converts them to protobuf.

An accepted move is acknowledged first and delivered (events, next decision) one event
loop step later, so the mover's round trip does not wait for the fan-out. ``settle()``
delivers such a pending move; every entry point of the session calls it first, and a
caller that reads ``status`` or other state from outside calls it explicitly (reading
never sends anything).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import secrets
import time
import weakref
from collections.abc import Callable, Sequence

from cirulla.logs import quote
from cirulla.rules import Game
from cirulla.rules.decks import DeckSource
from cirulla.rules.errors import DeckError
from cirulla.rules.events import Event
from cirulla.rules.match import match_winner
from cirulla.server import metrics
from cirulla.server.admission import admit, seat_of_token
from cirulla.server.connections import Connection, Seat, new_seat_token
from cirulla.server.convert import framing
from cirulla.server.decisions import (
    COUNTED,
    ByIndex,
    Choice,
    Decision,
    Turns,
    chosen_code,
    forfeit_winner,
)
from cirulla.server.documents import GameRecord, MatchSummary
from cirulla.server.errors import FailedPrecondition, Rejection
from cirulla.server.match_config import MatchConfig, public_config
from cirulla.server.messages import (
    AcceptedMsg,
    Disconnected,
    GameEnded,
    MatchResultMsg,
    Reconnected,
    SeatPublic,
    TimedOut,
)
from cirulla.server.publishing import Publisher
from cirulla.server.recordkeeping import (
    GameRun,
    RecordFields,
    game_record,
    now_iso,
    record_text,
    result_doc,
)

log = logging.getLogger("cirulla.server")

#: Writes a finished game's record when called (on the hub's writer thread): the record
#: without its actions and events, and its whole JSON text (``recordkeeping.record_text``).
RecordBuilder = Callable[[], tuple[GameRecord, str]]


#: An action's notation: every move's record entry and card_played event carry it.
_notation = framing.notation


def _weak_timeout(session: MatchSession) -> Callable[[int], None]:
    """``session._timeout`` without a strong reference to the session.

    The timer's callback lives on the session itself (in ``Turns``): a bound method there
    would make every session a reference cycle, which only the garbage collector's full
    collections free, and those stop the event loop for a time that grows with
    everything the server holds (docs/performance-log.md, "The match server"). Without the
    cycle an evicted match is freed as soon as the hub lets go of it."""
    ref = weakref.ref(session)

    def on_timeout(decision_id: int) -> None:
        live = ref()
        if live is not None:
            live._timeout(decision_id)

    return on_timeout


class MatchSession:
    def __init__(
        self,
        match_id: str,
        config: MatchConfig,
        *,
        room_id: str = "",
        default_grace_ms: int = 30_000,
        on_record: Callable[[RecordBuilder], None] | None = None,
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
        self.turns = Turns(config.time, n, _weak_timeout(self))
        self.out = Publisher(match_id, room_id, config, self.seats)
        self.delivery = self.out.delivery
        #: waiting, in_progress, finished or aborted (``settle()`` first for a move still
        #: being delivered).
        self.status = "waiting"
        self.abort_reason = ""
        self.create_time = now_iso()
        self.grace_ms = config.disconnect_grace_ms or default_grace_ms
        self.seed = config.seed if config.seed is not None or config.decks else secrets.randbits(63)
        self.deck_source = DeckSource(self.seed if config.decks is None else None, config.decks)
        self.games_won = [0] * self.options.sides
        self.runs: list[GameRun] = []
        self.results: list[GameEnded] = []
        self.winner: int | None = None
        self._undelivered: tuple[GameRun, Sequence[Event], bool, str] | None = None
        self._on_record = on_record
        self._on_change = on_change
        self._on_finished = on_finished
        self.close_on_finish = close_on_finish

    # ------------------------------------------------------------------ queries

    def settled_status(self) -> str:
        """``status`` once a move still being delivered is delivered (it may end the match):
        what a caller outside the session reads."""
        self.settle()
        return self.status

    @property
    def decision(self) -> Decision | None:
        """The open decision, if any."""
        return self.turns.decision

    @property
    def spectators(self) -> set[Connection]:
        return self.delivery.spectators

    @property
    def run(self) -> GameRun | None:
        return self.runs[-1] if self.runs else None

    @property
    def sequence(self) -> int:
        """The sequence number of the match's last event."""
        return self.out.sequence

    def seat_public(self) -> tuple[SeatPublic, ...]:
        return self.out.seat_public()

    def seat_for_token(self, token: str) -> int:
        return seat_of_token(
            self.tokens, token, created_by="CreateMatch", holder=f"match {self.match_id}"
        )

    def summary(self) -> MatchSummary:
        """Public summary (JSON-able): never tokens, seeds or hidden cards."""
        self.settle()
        return {
            "match_id": self.match_id,
            "room_id": self.room_id,
            "status": self.status,
            "create_time": self.create_time,
            "config": public_config(self.config),
            "seats": [self.seats[s.seat].summary(s) for s in self.seat_public()],
            "current_game": len(self.runs),
            "games": [result_doc(g) for g in self.results],
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
        was_disconnected = admit(
            slot, seat, conn, name=name, version=version, takeover=takeover, match_id=self.match_id
        )
        self.out.seats_changed()
        conn.session = self
        if welcome:
            conn.send(self.out.welcome_msg(seat, resumed=resume_after is not None))
        log.info(
            "seat_joined match=%s seat=%d name=%s resumed=%s",
            self.match_id,
            seat,
            quote(slot.name),
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
            self.out.publish(self.run, [Reconnected(seat)], exclude=conn)
        self._catch_up(conn, seat, resume_after or 0)
        decision, run = self.turns.open_for(seat), self.run
        if decision is not None and run is not None:
            self._schedule_timer()
            conn.send(self.out.decision_msg(run, decision, self.turns.clock_state(seat)))
        self._changed()

    def detach(self, conn: Connection, *, quit: bool = False) -> None:
        """The stream ``conn`` ended (``quit``: with an orderly Quit)."""
        self.settle()
        if conn.seat is None:
            self.delivery.spectators.discard(conn)
            return
        slot = self.seats[conn.seat]
        if slot.conn is not conn:
            return
        slot.conn = None
        self.out.seats_changed()
        if self.status != "in_progress":
            if self.status == "waiting":
                slot.joined = False
            self._changed()
            return
        slot.disconnected_at = time.monotonic()
        slot.disconnects += 1
        log.info("seat_disconnected match=%s seat=%d quit=%s", self.match_id, conn.seat, quit)
        self.out.publish(self.run, [Disconnected(conn.seat, self.grace_ms)])
        if self.turns.open_for(conn.seat) is not None:
            self._schedule_timer()
        self._changed()

    def add_spectator(self, conn: Connection, after_sequence: int = 0) -> None:
        self.settle()
        conn.session = self
        self.delivery.spectators.add(conn)
        conn.send(self.out.welcome_msg(None))
        if self.runs:
            self._catch_up(conn, None, after_sequence)
        if self.status == "finished":
            conn.send(self._result_msg())
            conn.close("match_finished")
        elif self.status == "aborted":
            conn.close("aborted", self.abort_reason or f"match {self.match_id} was aborted")

    def _catch_up(self, conn: Connection, seat: int | None, after: int) -> None:
        self.out.catch_up(conn, self.run, seat, after, self.games_won)

    # ------------------------------------------------------------------ games

    def _start(self) -> None:
        self.status = "in_progress"
        metrics.match_started()
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
        self.turns.reset_game()
        self.delivery.to_all(self.out.new_game_msg(run, self.games_won))
        self.out.publish(run, events)
        self._after_move(run)

    def _after_move(self, run: GameRun) -> None:
        """The game goes on after a move (or a deal): it ends, or its next decision opens
        (and may be played at once: ``Hello.auto_play_forced``)."""
        game = run.game
        if game.winner is not None:
            self._finish_game(run, "cappotto" if game.cappotto else "target", game.winner)
            return
        if self.delivery.spectators:
            self.delivery.to_spectators(self.out.view_msg(run, None))
        # The next decision opens (in this frame: a move's path has many calls already).
        seat = game.to_move
        assert seat is not None
        codes = game.legal_codes()
        decision = self.turns.open(seat, codes)
        slot = self.seats[seat]
        conn = slot.conn
        if conn is not None:
            if len(codes) == 1 and conn.auto_play_forced:
                # Nothing to choose, and the seat asked not to be asked
                # (Hello.auto_play_forced): a forced move is public (its last card, a single
                # capture), so playing it now reveals nothing, and saves the seat's stream
                # two messages.
                self._play(run, decision, codes[0], by_timeout=False, auto=True)
                return
            turns = self.turns
            conn.send(self.out.decision_msg(run, decision, turns.clock_state(seat)))
            if turns.unlimited and slot.disconnected_at is None:
                return  # no deadline: no timer (``Turns.schedule``)
        self._schedule_timer()

    def _schedule_timer(self) -> None:
        decision = self.turns.decision
        if decision is not None:
            self.turns.schedule(self.seats[decision.seat].disconnected_at, self.grace_ms)

    def _timeout(self, decision_id: int) -> None:
        self.settle()
        decision = self.turns.decision
        run = self.run
        if decision is None or decision.id != decision_id or run is None:
            return
        seat = decision.seat
        self.seats[seat].timeouts += 1
        metrics.timed_out()
        policy = self.config.timeout_policy
        log.info("timeout match=%s seat=%d policy=%s", self.match_id, seat, policy)
        self.out.publish(run, [TimedOut(seat, policy)])
        if policy == "forfeit_game":
            self.turns.clocks[seat].stop()
            self.turns.decision = None
            self.seats[seat].forfeits += 1
            metrics.forfeited()
            winner = forfeit_winner(self.options, run.game.totals, seat)
            self._finish_game(run, "forfeit", winner, forfeit_seat=seat)
        else:
            self._play(run, decision, decision.codes[0], by_timeout=True)
        self._changed()

    def _finish_game(
        self, run: GameRun, reason: str, winner: int, forfeit_seat: int | None = None
    ) -> None:
        self.turns.drop(stop_clock=False)
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
        metrics.game_finished(reason)
        self.out.publish(run, [ended])
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
            self._on_record(functools.partial(record_text, run, **self.record_fields()))
        match_won_by = match_winner(self.games_won, self.config.best_of)
        if match_won_by is not None:
            self.winner = match_won_by
            self._finish_match()
        else:
            self._changed()
            self._new_game()

    def _finish_match(self) -> None:
        self.status = "finished"
        metrics.match_finished()
        log.info(
            "match_over match=%s winner_side=%s games_won=%s",
            self.match_id,
            self.winner,
            self.games_won,
        )
        result = self._result_msg()
        for conn in self.delivery.receivers():
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
        self.turns.cancel_timer()
        ended = self.status in ("waiting", "in_progress") and reason != "server_shutdown"
        if ended:
            self.turns.drop(stop_clock=True)
            metrics.match_aborted(was_running=self.status == "in_progress")
            self.status = "aborted"
            self.abort_reason = message
            log.info("match_aborted match=%s reason=%s", self.match_id, quote(message))
        self.delivery.close_all(reason, message)
        if ended:
            self._changed()

    def _out_of_decks(self, exc: DeckError) -> None:
        """Explicit deck orders ran out: the match cannot go on, so it ends as aborted."""
        self.abort(
            "aborted",
            f"MatchSettings.deck_orders ran out: {exc}. Give one deck order per deal, plus "
            "one per void deal, for every game of the match",
        )

    # ------------------------------------------------------------------ actions

    def submit(self, conn: Connection, decision_id: int, choice: Choice) -> None:
        """A SubmitAction from ``conn``: accept it, or reject it and change nothing.

        ``choice`` is an index into the legal actions, an action, or ``Unreadable`` (a
        choice that could not be decoded: rejected as INVALID once the turn is checked).
        """
        self.settle()
        try:
            self._submit(conn, decision_id, choice)
        except (Rejection, ValueError) as exc:
            _reject(self, conn, decision_id, exc)

    def submit_index(self, conn: Connection, decision_id: int, index: int) -> None:
        """``submit(conn, decision_id, ByIndex(index))``, what a bot sends at every
        decision: when it is the open decision's seat answering it with an index in range,
        played at once (the checks of ``_submit`` and ``chosen_code`` in one test);
        anything else goes the long way, to the same rejection."""
        if self._undelivered is not None:
            self.settle()
        decision = self.turns.decision
        seat = conn.seat
        if (
            decision is None
            or decision.seat != seat
            or decision.id != decision_id
            or not 0 <= index < len(decision.codes)
            or self.seats[seat].conn is not conn
            or conn.session is not self
            or self.status != "in_progress"
            or not self.runs
        ):
            self.submit(conn, decision_id, ByIndex(index))
            return
        try:
            self._play(self.runs[-1], decision, decision.codes[index], by_timeout=False)
        except (Rejection, ValueError) as exc:
            _reject(self, conn, decision_id, exc)

    def _submit(self, conn: Connection, decision_id: int, choice: Choice) -> None:
        seat = conn.seat
        run = self.run
        if seat is None or conn.session is not self or self.seats[seat].conn is not conn:
            raise Rejection("not_your_turn", "turn", "this stream does not hold a seat")
        if run is None or self.status != "in_progress":
            raise Rejection("not_your_turn", "turn", "no decision is open in this match")
        decision = self.turns.check_turn(seat, decision_id)
        self._play(run, decision, chosen_code(decision, run.game, choice), by_timeout=False)

    def _play(
        self, run: GameRun, decision: Decision, code: int, *, by_timeout: bool, auto: bool = False
    ) -> None:
        seat = decision.seat
        try:
            events = run.game.apply(code, seat)
        except DeckError as exc:  # the move ended a deal and no deck order is left
            self._out_of_decks(exc)
            return
        elapsed = self.turns.close(decision, answered=not by_timeout)
        metrics.decision(decision.opened_at, answered=not by_timeout and not auto)
        index = decision.codes.index(code)
        text = _notation(code)
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
                "auto_played": auto,
            }
        )
        conn = self.seats[seat].conn
        if conn is not None and not by_timeout and not auto:
            framed = framing.accepted_frame(decision.id, index, elapsed)
            conn.send(AcceptedMsg(decision.id, index, elapsed, framed))
            if not conn.batches:
                # The mover's stream writer was woken first, so it sends AcceptedMsg before
                # this runs; anything else reaching the session earlier settles it itself.
                self._undelivered = (run, events, by_timeout, text)
                asyncio.get_running_loop().call_soon(self.settle)
                return
        # (A mover that reads batches gets the acceptance and the move in one message.)
        # Delivered now: ``settle`` of the move without keeping it pending first.
        self.out.publish(run, events, by_timeout=by_timeout, notation=text)
        self._after_move(run)

    def settle(self) -> None:
        """Deliver the last accepted move (its events, then the next decision) if pending."""
        pending = self._undelivered
        if pending is None:
            return
        self._undelivered = None
        run, events, by_timeout, text = pending
        # (``_publish``: ``run`` is the current game, the move's own)
        self.out.publish(run, events, by_timeout=by_timeout, notation=text)
        self._after_move(run)

    # ------------------------------------------------------------------ messages

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
    ) -> GameRecord:
        """The replayable record of a finished game (``recordkeeping.game_record``); may
        run in another thread."""
        return game_record(run, **self.record_fields(seats, finish))

    def record_fields(
        self, seats: tuple[SeatPublic, ...] | None = None, finish: str | None = None
    ) -> RecordFields:
        """What a record of this match takes from it now: seats (with counts), finish time."""
        return {
            "match_id": self.match_id,
            "room_id": self.room_id,
            "deal_group": self.deal_group,
            "options": self.options,
            "config": self.config,
            "seats": [self.seats[s.seat].summary(s) for s in seats or self.seat_public()],
            "finish": finish or now_iso(),
        }


def _reject(
    session: MatchSession, conn: Connection, decision_id: int, exc: Rejection | ValueError
) -> None:
    """``conn``'s submission for ``decision_id`` refused with ``exc``: its answer, and the
    seat's illegal actions counted (``decisions.COUNTED``)."""
    seat = conn.seat
    rejected = session.turns.rejected(seat, decision_id, exc)
    if rejected.reason in COUNTED and seat is not None:
        session.seats[seat].illegal += 1
        metrics.illegal_action()
    log.debug(
        "rejected match=%s seat=%s reason=%s rule=%s",
        session.match_id,
        seat,
        rejected.reason,
        rejected.rule,
    )
    conn.send(rejected)
