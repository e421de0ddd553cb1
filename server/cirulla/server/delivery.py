"""Who receives what: the seats' streams and the spectators of one match.

The hiding rule is applied here and only here: an event goes to a seat only if
``event.visible_to(seat)`` and to spectators only if ``event.visible_to(None)`` (the rules
core decides; ``cirulla.rules.events``). Everything else a match sends (welcome, views,
decisions, results) is addressed to one stream or built per receiver by the session.
"""

from __future__ import annotations

from typing import Any

from cirulla.server.connection import Connection
from cirulla.server.messages import EventMsg
from cirulla.server.seats import Seat


class Delivery:
    """Sends a match's messages to its seats' live streams and its spectators."""

    def __init__(self, seats: list[Seat]) -> None:
        self.seats = seats
        self.spectators: set[Connection] = set()

    def receivers(self) -> list[Connection]:
        """Every live stream: the seats' (in seat order), then the spectators'."""
        return [s.conn for s in self.seats if s.conn is not None] + list(self.spectators)

    def to_all(self, msg: Any) -> None:
        """A message every receiver may see (a new game, the match result)."""
        for conn in self.receivers():
            conn.send(msg)

    def to_seat(self, seat: int, msg: Any) -> None:
        conn = self.seats[seat].conn
        if conn is not None:
            conn.send(msg)

    def to_spectators(self, msg: Any) -> None:
        for spec in self.spectators:
            spec.send(msg)

    def event(self, msg: EventMsg, exclude: Connection | None = None) -> None:
        """An event, to each receiver allowed to see it."""
        event = msg.event
        for seat, slot in enumerate(self.seats):
            if slot.conn is not None and slot.conn is not exclude and event.visible_to(seat):
                slot.conn.send(msg)
        if event.visible_to(None):
            for spec in self.spectators:
                spec.send(msg)

    def close_all(self, reason: str, message: str = "") -> None:
        """Goodbye ``reason`` to every receiver."""
        for conn in self.receivers():
            conn.close(reason, message)
