"""What a match sends: its events, numbered, kept and delivered by the hiding rule, and
the messages built for one receiver (a new game, a view, a decision, the catch-up of a
stream that joins late).

``Publisher`` is the session's voice: the session decides what happens and when, the
publisher turns it into ``messages`` values and hands them to ``connections.Delivery``
(who receives what). It keeps the match's event sequence number and the seats' public
part, which every view carries.
"""

from __future__ import annotations

from collections.abc import Sequence

from cirulla.rules.events import CardPlayed, Event, GameOver
from cirulla.server.connections import Connection, Delivery, Seat
from cirulla.server.convert import framing
from cirulla.server.convert.dealframing import deal_frame
from cirulla.server.decisions import Decision
from cirulla.server.match_config import MatchConfig
from cirulla.server.messages import (
    ClockState,
    DecisionMsg,
    EventExtras,
    EventMsg,
    NewGameMsg,
    SeatPublic,
    ViewMsg,
    WelcomeMsg,
)
from cirulla.server.recordkeeping import GameRun, note_event

#: A played card is seen by every seat and spectator (its type keeps ``Event.visible_to``):
#: a move's events that are all played cards go to every stream unfiltered
#: (``Delivery.events``' ``everyone``).
_CARD_PLAYED_PUBLIC = CardPlayed.visible_to is Event.visible_to


class Publisher:
    """Numbers, keeps and delivers a match's events; builds the messages it sends."""

    __slots__ = (
        "_public",
        "_wire",
        "config",
        "delivery",
        "match_id",
        "options",
        "room_id",
        "seats",
        "sequence",
    )

    def __init__(self, match_id: str, room_id: str, config: MatchConfig, seats: list[Seat]) -> None:
        self.match_id = match_id
        self.room_id = room_id
        self.config = config
        self.options = config.options
        self.seats = seats
        self.delivery = Delivery(seats)
        #: The sequence number of the match's last event.
        self.sequence = 0
        self._public: tuple[SeatPublic, ...] | None = None
        self._wire: tuple[framing.SeatWire, ...] = ()

    def seats_changed(self) -> None:
        """A seat joined or left: its public part is built anew."""
        self._public = None

    def seat_public(self) -> tuple[SeatPublic, ...]:
        """Kept until a seat joins or leaves: every decision's view carries it."""
        if self._public is None:
            self._public = tuple(
                SeatPublic(i, self.options.side_of(i), s.name, s.version, s.conn is not None)
                for i, s in enumerate(self.seats)
            )
            self._wire = framing.seat_wire(self._public)
        return self._public

    def publish(
        self,
        run: GameRun | None,
        events: Sequence[Event],
        *,
        by_timeout: bool = False,
        notation: str = "",
        exclude: Connection | None = None,
    ) -> None:
        """Number, keep (on ``run``) and deliver events: each receiver gets only what it
        may see."""
        if run is None:
            return
        published: list[EventMsg] = []
        number = run.number
        sequence = self.sequence
        everyone = _CARD_PLAYED_PUBLIC
        write_card = framing.native_card_played  # the native writer, if built
        for event in events:
            if type(event) is CardPlayed and write_card is not None:
                # every move's event, in one call (``note_event``'s extras, ``event_frame``'s
                # writer; public: ``_CARD_PLAYED_PUBLIC``)
                sequence += 1
                deal = run.cur_deal
                card = write_card(event, sequence, number, deal, None, notation, by_timeout)
                extras: EventExtras = {"by_timeout": by_timeout, "notation": notation}
                published.append(EventMsg(sequence, number, deal, event, None, extras, card))
                continue
            everyone = False
            if isinstance(event, GameOver):
                continue  # the session publishes GameEnded with the reason instead
            extras = note_event(run, event, by_timeout=by_timeout, notation=notation)
            sequence += 1
            private = None if event.visible_to(None) else getattr(event, "seat", None)
            deal = run.cur_deal
            # written once here, for every seat that gets it (None: protobuf writes it)
            framed = framing.event_frame(sequence, number, deal, event, private, extras)
            if framed is None:  # a deal's start or end (None: protobuf writes it)
                framed = deal_frame(
                    sequence, number, deal, event, private, extras, self.options.players
                )
            published.append(EventMsg(sequence, number, deal, event, private, extras, framed))
        self.sequence = sequence
        if published:
            run.events += published
            self.delivery.events(published, exclude, everyone=everyone)

    def welcome_msg(self, seat: int | None, *, resumed: bool = False) -> WelcomeMsg:
        """The first message of a stream: ``seat``'s (None: a spectator's)."""
        side = self.options.side_of(seat) if seat is not None else None
        return WelcomeMsg(
            seat, side, self.match_id, self.room_id, self.config, self.seat_public(), resumed
        )

    def new_game_msg(self, run: GameRun, games_won: list[int]) -> NewGameMsg:
        """``run``'s start; ``games_won``: the match's now (a finished run's own win is
        taken off, as it stood when the run began)."""
        return NewGameMsg(
            run.number,
            self.options,
            self.seat_public(),
            run.first_dealer,
            tuple(games_won)
            if run.result is None
            else tuple(w - (1 if i == run.result.winner else 0) for i, w in enumerate(games_won)),
            self.config.best_of,
        )

    def view_msg(self, run: GameRun, seat: int | None) -> ViewMsg:
        return ViewMsg(run.game.view(seat), run.number, self.sequence, self.seat_public())

    def decision_msg(self, run: GameRun, decision: Decision, clock: ClockState) -> DecisionMsg:
        """``decision``'s request, its bytes written now from the game's state (the
        view as it stands when the decision opens), in one call (``framing``)."""
        seats = self._public
        if seats is None:
            seats = self.seat_public()
        framed = framing.decision_frame(
            run.game,
            decision.seat,
            decision.id,
            decision.codes,
            run.number,
            self.sequence,
            seats,
            self._wire,
            clock,
        )
        return DecisionMsg(decision.id, None, tuple(decision.codes), clock, 0, framed)

    def catch_up(
        self,
        conn: Connection,
        run: GameRun | None,
        seat: int | None,
        after: int,
        games_won: list[int],
    ) -> None:
        """Bring a stream that joins (``seat``, or a spectator) up to date with ``run``:
        its start, its events after sequence ``after`` that ``seat`` may see, a view."""
        if run is None:
            return
        conn.send(self.new_game_msg(run, games_won))
        for msg in run.events:
            if msg.sequence > after and msg.event.visible_to(seat):
                conn.send(msg)
        conn.send(self.view_msg(run, seat))
