"""Decisions and clocks: which seat must act, on which numbered legal actions, by when.

``Turns`` holds the open decision and every seat's clock (``clock.SeatClock``), arms one
timer for the earliest deadline (the clock, or the end of a disconnected seat's grace
period) and says what a submission means: the legal action code it chooses, or the
``Rejection`` it earns. It knows nothing of streams or records; the session calls
``on_timeout`` when the timer fires.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from cirulla.rules import Action, Game, IllegalActionError, Options
from cirulla.server.clock import SeatClock, TimeControl
from cirulla.server.errors import Rejection, reject_reason_for
from cirulla.server.messages import ClockState, RejectedMsg

#: The clock of a seat playing without a time limit.
NO_LIMIT = ClockState(None, None, None)
#: Rejection reasons counted as an illegal action (an index outside the list is one too).
COUNTED = frozenset(("illegal", "index_out_of_range"))


@dataclass(slots=True)
class Decision:
    id: int
    seat: int
    codes: list[int]
    rejected: int = 0
    timer: asyncio.TimerHandle | None = None
    #: when it was opened (perf_counter), for the latency metric at a finer grain than
    #: the clock's whole milliseconds
    opened_at: float = field(default_factory=time.perf_counter)


class Turns:
    """The open decision (at most one) and the seats' clocks."""

    __slots__ = ("_on_timeout", "clocks", "counter", "decision", "unlimited")

    def __init__(self, time: TimeControl, players: int, on_timeout: Callable[[int], None]) -> None:
        self.clocks = [SeatClock(time) for _ in range(players)]
        #: No move limit and no bank: no deadline, and every clock reads "no limit".
        self.unlimited = not time.limited
        self.decision: Decision | None = None
        self.counter = 0
        self._on_timeout = on_timeout

    def reset_game(self) -> None:
        for clock in self.clocks:
            clock.reset_game()

    def open(self, seat: int, codes: list[int]) -> Decision:
        """A new decision for ``seat``; its clock starts now (``schedule`` arms the timer)."""
        self.counter += 1
        decision = Decision(self.counter, seat, codes)
        self.decision = decision
        self.clocks[seat].start()
        return decision

    def schedule(self, disconnected_at: float | None, grace_ms: int) -> None:
        """(Re)arm the timer of the open decision: its clock's deadline, or the end of the
        grace period of its seat's dropped stream, whichever comes first."""
        decision = self.decision
        if decision is None:
            return
        self.cancel_timer()
        if self.unlimited and disconnected_at is None:
            return  # no deadline
        deadlines = []
        clock_deadline = self.clocks[decision.seat].deadline()
        if clock_deadline is not None:
            deadlines.append(clock_deadline)
        if disconnected_at is not None:
            deadlines.append(disconnected_at + grace_ms / 1000)
        if deadlines:
            loop = asyncio.get_running_loop()
            decision.timer = loop.call_at(min(deadlines), self._on_timeout, decision.id)

    def cancel_timer(self) -> None:
        decision = self.decision
        if decision is not None and decision.timer is not None:
            decision.timer.cancel()
            decision.timer = None

    def close(self, decision: Decision, *, answered: bool) -> int:
        """``decision`` was answered by its seat (``answered``: its bank gets the increment)
        or played for it by the timeout policy: stop its clock; the ms it used."""
        if decision.timer is not None:
            decision.timer.cancel()
        elapsed = self.clocks[decision.seat].stop(answered=answered)
        self.decision = None
        return elapsed

    def drop(self, *, stop_clock: bool) -> None:
        """No decision is open any more (the game or the match ended)."""
        self.cancel_timer()
        if stop_clock and self.decision is not None:
            self.clocks[self.decision.seat].stop()
        self.decision = None

    def clock_state(self, seat: int) -> ClockState:
        if self.unlimited:
            return NO_LIMIT  # what ``left`` and ``increment_ms`` say without limits
        move, bank = self.clocks[seat].left()
        return ClockState(move, bank, self.clocks[seat].increment_ms())

    def open_for(self, seat: int | None) -> Decision | None:
        """The open decision if it is ``seat``'s."""
        decision = self.decision
        return decision if decision is not None and decision.seat == seat else None

    def rejected(self, seat: int | None, decision_id: int, exc: Exception) -> RejectedMsg:
        """The answer to a submission of ``seat`` for ``decision_id`` refused with ``exc``
        (``errors.reject_reason_for``), with the open decision and its clock if it is
        ``seat``'s; that decision counts an illegal action (``COUNTED``) among its
        rejected attempts."""
        reason, rule = reject_reason_for(exc)
        decision = self.open_for(seat)
        if decision is None or seat is None:
            return RejectedMsg(decision_id, reason, rule, _message(exc), None, None)
        if reason in COUNTED:
            decision.rejected += 1
        clock = self.clock_state(seat)
        return RejectedMsg(decision_id, reason, rule, _message(exc), clock, decision.id)

    def check_turn(self, seat: int, decision_id: int) -> Decision:
        """The open decision, if ``seat`` may answer ``decision_id`` now."""
        decision = self.decision
        if decision is None:
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
        return decision


def _message(exc: Exception) -> str:
    return exc.message if isinstance(exc, Rejection) else str(exc)


def forfeit_winner(options: Options, totals: Sequence[int], seat: int) -> int:
    """The side that wins a game ``seat`` forfeits (its clock ran out under the
    forfeit_game policy): the forfeiting side loses; among the others the best total
    wins (ties: the first after ``seat`` in seat order)."""
    loser = options.side_of(seat)
    n = options.players
    order = [options.side_of((seat + k) % n) for k in range(1, n)]
    others = [s for s in dict.fromkeys(order) if s != loser]
    return max(others, key=lambda s: (totals[s], -others.index(s)))


@dataclass(slots=True)
class ByIndex:  # read-only; not frozen: one per submission, and frozen costs 4x to make
    """``SubmitAction.legal_action_index``: an index into the decision's legal actions."""

    index: int


@dataclass(frozen=True, slots=True)
class ByAction:
    """``SubmitAction.action`` or ``.notation``, decoded: the action itself."""

    action: Action


@dataclass(frozen=True, slots=True)
class Unreadable:
    """A submitted choice that could not be read (empty, a malformed action or notation,
    a notation over the limit): never played. ``chosen_code`` raises it as an INVALID
    ``Rejection`` once the turn is checked, so a stale or foreign submission is reported
    as such whatever its choice."""

    message: str
    #: The part of the choice at fault (logged; a rejection names a rule only if illegal).
    rule: str = "syntax"


#: What a seat submits (``SubmitAction.choice``, decoded).
Choice = ByIndex | ByAction | Unreadable


def chosen_code(decision: Decision, game: Game, choice: Choice) -> int:
    """The legal action code ``choice`` names. Raises ``Rejection`` (an index out of
    range, an ``Unreadable`` choice) or ``IllegalActionError`` (an action not legal now)."""
    if isinstance(choice, Unreadable):
        raise Rejection("invalid", choice.rule, choice.message)
    if isinstance(choice, ByIndex):
        index = choice.index
        if not 0 <= index < len(decision.codes):
            raise Rejection(
                "index_out_of_range",
                "legal_action_index",
                f"SubmitAction.legal_action_index: {index} is outside the valid range "
                f"0..{len(decision.codes) - 1} (decision {decision.id} offers "
                f"{len(decision.codes)} legal actions)",
            )
        return decision.codes[index]
    action = choice.action
    code = action.to_int()
    if code not in decision.codes:
        raise IllegalActionError(*game.explain_illegal(action))
    return int(code)
