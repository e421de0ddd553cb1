"""How a seat's game ended for it (``Outcome``), in a module of its own: the ladder's
commands print it without importing the results journal and, through it, the bot specs
and every bot kind."""

from __future__ import annotations

from enum import StrEnum


class Outcome(StrEnum):
    """How a seat's game ended for it: every runner's one vocabulary (results files,
    tables, the ladder's seats and faults). All but ``ok`` lose the game for that seat.
    StrEnum: each is its own string in JSON and in the database."""

    OK = "ok"
    #: the seat's process died (or never started)
    CRASH = "crash"
    #: it forfeited on its clock
    TIMEOUT = "timeout"
    #: illegal actions ran its clock out
    ILLEGAL = "illegal"
    #: the server forfeited it (the game was lost on a rule)
    FORFEIT = "forfeit"
    #: its stream dropped and did not come back in time
    DISCONNECT = "disconnect"
    #: a ladder connect-in bot that never took its seat
    NO_JOIN = "no-join"
