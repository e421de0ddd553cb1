"""Whatever plays one seat of one game, as the referee (``cirulla.clients.matches.referee``)
sees it: a process of its own (``CommandSeat``) or a kept-alive bot of the pool
(``ServedSeat``), each waited for, stopped or given back the same way."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from cirulla.clients.matches.bot_pool import BotPool
from cirulla.clients.matches.supervise import Child, ServedBot, Ticket

#: Exit code recorded for a seat whose command could not be started at all.
NOT_STARTED = 127


class SeatPlayer(Protocol):
    """Whatever plays one seat of one game: a process of its own or a served bot."""

    log_path: Path | None

    def gone(self) -> bool:
        """The seat's player has left this match (exited, or reported it is done)."""
        ...

    def finish(self, grace: float) -> int | None:
        """Wait up to ``grace`` for it to leave, stop it if it hangs; its exit code
        (None when it had to be stopped)."""
        ...

    def check_limits(self) -> str | None:
        """The hard limit (memory, processes) its process tree ran into, which stops it."""
        ...

    def killed_by(self) -> str | None:
        """``killed: memory limit 2 GiB`` when a limit stopped it, else None."""
        ...

    def throttled_by(self) -> str | None:
        """``throttled: cpu limit 1 core (...)`` when its CPU quota held it back in this
        game (``supervise.THROTTLE_NOTED``), else None."""
        ...


class CommandSeat:
    """A ``cmd:`` bot: one process for this seat of this game (None: it could not start)."""

    def __init__(self, child: Child | None, log_path: Path | None = None) -> None:
        self.child = child
        self.log_path = child.log_path if child is not None else log_path

    def gone(self) -> bool:
        return self.child is None or self.child.poll() is not None

    def finish(self, grace: float) -> int | None:
        if self.child is None:
            return NOT_STARTED
        self.child.wait(grace)
        code = self.child.poll()
        self.child.stop()
        return code

    def check_limits(self) -> str | None:
        return self.child.check_limits() if self.child is not None else None

    def killed_by(self) -> str | None:
        return self.child.killed_by() if self.child is not None else None

    def throttled_by(self) -> str | None:
        return self.child.throttled_by() if self.child is not None else None


class ServedSeat:
    """A served bot playing this seat: back to the pool when it reports leaving the match,
    stopped (and replaced in a later game) when it crashed or hangs."""

    def __init__(self, pool: BotPool, bot: str, served: ServedBot, ticket: Ticket) -> None:
        self.pool = pool
        self.bot = bot
        self.served = served
        self.ticket = ticket
        self.log_path: Path | None = served.log_path

    def gone(self) -> bool:
        return self.ticket.done.is_set()

    def finish(self, grace: float) -> int | None:
        done = self.ticket.done.wait(grace)
        # read before the process goes back to its pool (its next game marks anew)
        self.throttled = self.served.throttled_by()
        if done and not self.ticket.exited and self.served.alive():
            self.pool.release(self.bot, self.served)
            return self.ticket.code
        self.pool.discard(self.served)
        return self.ticket.code if done else None

    def check_limits(self) -> str | None:
        return self.served.check_limits()

    def killed_by(self) -> str | None:
        return self.served.killed_by()

    throttled: str | None = None

    def throttled_by(self) -> str | None:
        return self.throttled
