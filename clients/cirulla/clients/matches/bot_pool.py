"""The pool of kept-alive bot processes (``ServedBot``s, ``cirulla.clients.matches.supervise``)
a runner draws its seats from: by bot name, at most one game per process at a time,
restarted only after a crash or a hang.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Mapping
from pathlib import Path

from cirulla.bots.botspec import BotSpec
from cirulla.bots.cgroups import BotLimits
from cirulla.clients.matches.sandbox import Confinement
from cirulla.clients.matches.seat_argv import program_env, served_argv
from cirulla.clients.matches.supervise import KILL_GRACE, READY_TIMEOUT, ServedBot


class BotStartError(OSError):
    """A kept-alive bot could not be started; ``log_path`` holds what it said."""

    def __init__(self, message: str, log_path: Path) -> None:
        super().__init__(message)
        self.log_path = log_path


class BotPool:
    """Long-lived bot processes by bot name: a game takes an idle one (or starts one) per
    seat and gives it back when the bot reported leaving the match; a crashed or hung
    process is stopped instead, and the next game starts a fresh one. With concurrency N
    a bot thus keeps at most N processes per seat it takes in a game."""

    def __init__(
        self,
        specs: Mapping[str, BotSpec],
        logs: Path,
        tied: bool = False,
        confinement: Confinement | None = None,
        limits: dict[str, BotLimits] | None = None,
    ) -> None:
        """``tied``: its processes die with the runner (``die_with_parent``), for a
        runner whose game threads live as long as the run; ``confinement``: they run
        sandboxed, and their assignments name the server as the sandbox reaches it;
        ``limits``: a bot's own limits there (default: the confinement's)."""
        self.specs = specs
        self.logs = logs
        self.tied = tied
        self.confinement = confinement
        self.limits = dict(limits or {})
        self._lock = threading.Lock()
        self._idle: dict[str, list[ServedBot]] = {}
        self._all: list[ServedBot] = []
        self._started: dict[str, int] = {}

    def acquire(
        self,
        bot: str,
        timeout: float = READY_TIMEOUT,
        spec: BotSpec | None = None,
        deal_group: str | None = None,
        limits: BotLimits | None = None,
    ) -> ServedBot:
        """An idle process of ``bot``, or a new one once it said it is ready; OSError if
        it cannot be started, exits first or stays silent for ``timeout`` seconds.
        ``limits`` (default: the pool's for ``bot``): an idle process under other limits
        is stopped rather than reused.

        ``spec`` (default: the pool's spec of ``bot``) is what the process must run: an
        idle process started from another spec (a ladder bot's older version) is
        stopped rather than reused. ``deal_group``: the game's duplicate-deal group; a
        process that played a game of it is left idle for other groups, never given this
        one (a kept-alive bot would otherwise know its twin's hands from the first game)."""
        argv = served_argv(self.specs[bot] if spec is None else spec, bot)
        wanted = self._limits_of(bot, limits)
        stale: list[ServedBot] = []
        played: list[ServedBot] = []
        found: ServedBot | None = None
        number = 0
        with self._lock:
            idle = self._idle.setdefault(bot, [])
            while idle and found is None:
                served = idle.pop()
                if not (served.alive() and served.argv == argv and served.limits == wanted):
                    stale.append(served)
                elif deal_group is not None and deal_group in served.deal_groups:
                    played.append(served)
                else:
                    found = served
            idle.extend(reversed(played))
            if found is None:
                number = self._started.get(bot, 0) + 1
                self._started[bot] = number
        for served in stale:
            self.discard(served, 0.0)
        if found is None and played:
            self._twin_spawned(bot)
        # an idle process is ready, or still starting if it was started ahead (prestart)
        served = found or self._spawn(bot, argv, number, wanted)
        served.ready.wait(timeout)
        if served.alive() and served.ready.is_set():
            if deal_group is not None:
                served.deal_groups.add(deal_group)
            return served
        self.discard(served)
        if served.proc.returncode is not None and served.ready.is_set():
            problem = f"exited with code {served.proc.returncode} before it was ready"
        else:
            problem = f'did not write {{"ready": true}} within {timeout:.0f}s'
        raise BotStartError(f"bot {bot} {problem}; see {served.log_path}", served.log_path)

    def _twin_spawned(self, bot: str) -> None:
        """A new process is started because every idle one played this deal group."""

    def _limits_of(self, bot: str, limits: BotLimits | None) -> BotLimits:
        """The limits a process of ``bot`` runs under (what a ``ServedBot`` keeps)."""
        if limits is not None:
            return limits
        if bot in self.limits:
            return self.limits[bot]
        return self.confinement.limits if self.confinement is not None else BotLimits()

    def _spawn(
        self, bot: str, argv: list[str], number: int, limits: BotLimits | None = None
    ) -> ServedBot:
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in bot)
        log = self.logs / f"{safe}-{number}.log"
        served = ServedBot(
            argv,
            log,
            bot_env(bot),
            self.tied,
            self.confinement,
            bot,
            self._limits_of(bot, limits),
        )
        with self._lock:
            self._all.append(served)
        return served

    def prestart(self, bot: str) -> None:
        """Start a process of ``bot`` now, idle: its start-up then overlaps other work
        (the runner starts the first games' bots while its match server starts); the
        game that acquires it waits until it is ready."""
        argv = served_argv(self.specs[bot], bot)
        with self._lock:
            number = self._started[bot] = self._started.get(bot, 0) + 1
        served = self._spawn(bot, argv, number)
        with self._lock:
            self._idle.setdefault(bot, []).append(served)

    def release(self, bot: str, served: ServedBot) -> None:
        if not served.alive():
            self.discard(served)
            return
        served.idle_since = time.monotonic()
        with self._lock:
            self._idle.setdefault(bot, []).append(served)

    def discard(self, served: ServedBot, grace: float = KILL_GRACE) -> None:
        served.stop(grace)
        with self._lock:
            if served in self._all:
                self._all.remove(served)

    def stop_idle(self, older_than: float) -> int:
        """Stop the processes idle for more than ``older_than`` seconds (a long-running
        ladder keeps only the bots it is playing); how many were stopped."""
        now = time.monotonic()
        with self._lock:
            old = [
                served
                for idle in self._idle.values()
                for served in idle
                if now - served.idle_since > older_than
            ]
            for idle in self._idle.values():
                idle[:] = [s for s in idle if s not in old]
        for served in old:
            self.discard(served, 1.0)
        return len(old)

    def log_paths(self) -> list[Path]:
        """The logs of the processes still running (a retention pass keeps them)."""
        with self._lock:
            return [served.log_path for served in self._all]

    def started(self, bot: str) -> int:
        """How many processes of ``bot`` were started (restarts included)."""
        with self._lock:
            return self._started.get(bot, 0)

    def close(self) -> None:
        """Stop every process: stdin closed first, so idle bots leave on their own."""
        with self._lock:
            every, self._all, self._idle = list(self._all), [], {}
        for served in every:
            if served.proc.stdin is not None:
                with contextlib.suppress(OSError, ValueError):
                    served.proc.stdin.close()
        for served in every:
            served.stop(1.0)


def bot_env(name: str) -> dict[str, str]:
    """A long-lived bot's environment: ``program_env()`` and CIRULLA_NAME (its matches
    arrive on stdin, so no per-match CIRULLA_* variable)."""
    env = program_env()
    env["CIRULLA_NAME"] = name
    return env
