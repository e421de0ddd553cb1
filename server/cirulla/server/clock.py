"""A seat's clock: a per-move limit and a per-game bank (either may be off), a Fischer
increment and a margin.

Kept apart from the session so the deadline arithmetic has one home: the session asks
when the open decision must be answered and charges the time spent when it is.
The margin only moves the deadline the server enforces (network and scheduling delay
are not the bot's fault); the clock a seat is shown never includes it, and time spent
in it still comes off the bank.
"""

from __future__ import annotations

import time
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TimeControl:
    move_limit_ms: int = 0  # 0 = no per-move limit
    game_bank_ms: int = 0  # 0 = no bank
    increment_ms: int = 0  # added to the bank after each decision answered in time
    margin_ms: int = 0  # grace past a deadline before the timeout policy applies

    @property
    def limited(self) -> bool:
        return bool(self.move_limit_ms or self.game_bank_ms)


class SeatClock:
    __slots__ = ("bank_left_ms", "control", "started")

    def __init__(self, control: TimeControl) -> None:
        self.control = control
        self.bank_left_ms: int | None = control.game_bank_ms or None
        self.started: float | None = None

    def reset_game(self) -> None:
        self.bank_left_ms = self.control.game_bank_ms or None

    def start(self) -> None:
        self.started = time.monotonic()

    def elapsed_ms(self) -> int:
        return 0 if self.started is None else int((time.monotonic() - self.started) * 1000)

    def allowed_ms(self) -> int | None:
        """Time allowed for the current decision from its start, None without limits."""
        # A bank spent down to 0 leaves no time: 0 is a limit here, not "no bank".
        limits = [
            x for x in (self.control.move_limit_ms or None, self.bank_left_ms) if x is not None
        ]
        return min(limits) if limits else None

    def deadline(self) -> float | None:
        """Monotonic time after which the open decision times out (the margin included)."""
        allowed = self.allowed_ms()
        if allowed is None or self.started is None:
            return None
        return self.started + (allowed + self.control.margin_ms) / 1000

    def stop(self, answered: bool = False) -> int:
        """Close the decision: charge its time to the bank and return it in ms.

        ``answered``: the seat answered it itself (within the deadline, margin included),
        so the bank also gets the increment.
        """
        spent = self.elapsed_ms()
        if self.bank_left_ms is not None:
            self.bank_left_ms = max(0, self.bank_left_ms - spent)
            if answered:
                self.bank_left_ms += self.control.increment_ms
        self.started = None
        return spent

    def left(self) -> tuple[int | None, int | None]:
        """(move time left, bank time left) now, in ms, margin excluded; None where there
        is no limit."""
        spent = self.elapsed_ms()
        move = self.control.move_limit_ms
        move_left = max(0, move - spent) if move else None
        bank_left = None if self.bank_left_ms is None else max(0, self.bank_left_ms - spent)
        return move_left, bank_left

    def increment_ms(self) -> int | None:
        """The increment the seat is shown, None when there is none (or no bank)."""
        return (self.control.increment_ms or None) if self.bank_left_ms is not None else None
