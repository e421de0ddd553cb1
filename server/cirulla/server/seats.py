"""The seats of a match: their secret tokens and what each seat did (``Seat``)."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from cirulla.server.connection import Connection
from cirulla.server.documents import SeatSummary
from cirulla.server.messages import SeatPublic


def new_seat_token() -> str:
    """A secret seat token (192 bits, hex): only letters and digits, so it can never start
    with "-" and be read as an option by a command line that receives it."""
    return secrets.token_hex(24)


def token_seat(tokens: list[str], token: str) -> int | None:
    """The seat whose token is ``token`` (compared in constant time, any characters)."""
    given = token.encode("utf-8", "surrogatepass")
    for seat, t in enumerate(tokens):
        if secrets.compare_digest(t.encode(), given):
            return seat
    return None


@dataclass
class Seat:
    """One seat: its player's name and software, its live stream, and its faults."""

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

    def summary(self, public: SeatPublic) -> SeatSummary:
        """This seat in a match summary: its public part, its fault counts and notes."""
        return {
            "seat": public.seat,
            "side": public.side,
            "name": public.name,
            "version": public.version,
            "connected": public.connected,
            "timeouts": self.timeouts,
            "illegal_actions": self.illegal,
            "forfeits": self.forfeits,
            "disconnects": self.disconnects,
            "notes": self.notes(),
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
