"""The pool of kept-alive bot processes (``ServedBot``s, ``cirulla.clients.matches.supervise``)
a runner draws its seats from: by bot name, at most one game per process at a time,
restarted only after a crash or a hang.

Duplicate deals: a process that played a game of a deal group (games dealt alike: a
ladder pair, a tournament's deck seed) knows hands that are another seat's in the
group's other games. It never plays another game of that group, and while the group is
open (a game of it not over) it plays nothing at all: whatever it shows in another match
(its seat's name, its moves, which anyone may spectate) could be read by the process
playing the twin. It stays idle, quarantined, until the pool learns the group is over
(``game_over`` for each of its games, ``group_over``, or the ``settled`` check); a pool
that never learns it never lets it play again (``stop_idle`` stops it in time).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from cirulla.bots.botspec import BotSpec
from cirulla.bots.cgroups import BotLimits
from cirulla.clients.matches.files import safe_name
from cirulla.clients.matches.log_budget import LogBudget
from cirulla.clients.matches.sandbox import Confinement
from cirulla.clients.matches.seat_argv import program_env, served_argv
from cirulla.clients.matches.supervise import KILL_GRACE, READY_TIMEOUT, ServedBot

log = logging.getLogger("cirulla.bots")

#: Open deal groups kept although no process of the pool waits on them (some of their
#: games ended here, the others elsewhere or never: a ladder pair's twin replayed on
#: another worker): at most this many, the oldest dropped first. Dropping one only makes
#: a later process of that group wait for ``group_over`` or ``settled`` instead of the
#: count of its games: the safe side.
MAX_UNWAITED_GROUPS = 10_000


@dataclass
class _Group:
    """A deal group some process played a game of (or some game of which ended), not
    known to be over yet."""

    #: its games (the match's ``deal_group_size``); None: unknown, over only when told
    size: int | None
    #: the keys of its games that ended for good (a game played again counts once)
    ended: set[Hashable] = field(default_factory=set)
    #: the processes that played a game of it: quarantined until it is over
    members: set[ServedBot] = field(default_factory=set)


class BotStartError(OSError):
    """A kept-alive bot could not be started; ``log_path`` holds what it said."""

    def __init__(self, message: str, log_path: Path) -> None:
        super().__init__(message)
        self.log_path = log_path


class BotPool:
    """Long-lived bot processes by bot name: a game takes an idle one (or starts one) per
    seat and gives it back when the bot reported leaving the match; a crashed or hung
    process is stopped instead, and the next game starts a fresh one. With concurrency N
    a bot thus keeps at most N processes per seat it takes in a game, plus those a
    duplicate deal keeps idle until their group is over (module docstring): with groups
    played one after another (a ladder's pairs, a tournament's deck sets) about twice
    that."""

    def __init__(
        self,
        specs: Mapping[str, BotSpec],
        logs: Path,
        tied: bool = False,
        confinement: Confinement | None = None,
        limits: dict[str, BotLimits] | None = None,
        settled: Callable[[str], bool] | None = None,
        log_budget: LogBudget | None = None,
    ) -> None:
        """``tied``: its processes die with the runner (``die_with_parent``), for a
        runner whose game threads live as long as the run; ``confinement``: they run
        sandboxed, and their assignments name the server as the sandbox reaches it;
        ``limits``: a bot's own limits there (default: the confinement's);
        ``settled``: asked whether a deal group is over (True: every game of it ended
        or was cancelled, for good) before a process is started because the idle ones
        are quarantined (the ladder asks its database); False or an error: not over."""
        self.specs = specs
        self.logs = logs
        self.tied = tied
        self.confinement = confinement
        self.limits = dict(limits or {})
        self.budget = log_budget or LogBudget()
        self._lock = threading.Lock()
        self._idle: dict[str, list[ServedBot]] = {}
        self._all: list[ServedBot] = []
        self._started: dict[str, int] = {}
        self.settled = settled
        #: deal groups not known to be over, by name
        self._groups: dict[str, _Group] = {}
        #: per quarantined process, the open groups it played a game of
        self._held: dict[ServedBot, set[str]] = {}

    def acquire(
        self,
        bot: str,
        timeout: float = READY_TIMEOUT,
        spec: BotSpec | None = None,
        deal_group: str | None = None,
        limits: BotLimits | None = None,
        group_size: int | None = None,
    ) -> ServedBot:
        """An idle process of ``bot``, or a new one once it said it is ready; OSError if
        it cannot be started, exits first or stays silent for ``timeout`` seconds.
        ``limits`` (default: the pool's for ``bot``): an idle process under other limits
        is stopped rather than reused.

        ``spec`` (default: the pool's spec of ``bot``) is what the process must run: an
        idle process started from another spec (a ladder bot's older version) is
        stopped rather than reused. ``deal_group``: the game's duplicate-deal group; a
        process that played a game of it is never given this one (a kept-alive bot
        would otherwise know its twin's hands from the first game), and none of a
        group still open is given any game (it is quarantined, module docstring).
        ``group_size``: the group's games (``deal_group_size``); 1: a single game,
        nothing to keep apart; None or 0 (unknown): over only when told so."""
        argv = served_argv(self.specs[bot] if spec is None else spec, bot)
        wanted = self._limits_of(bot, limits)
        found, stale, played, held = self._take_idle(bot, argv, wanted, deal_group)
        if found is None and held and self.settled is not None:
            over = [group for group in sorted(held) if self._is_settled(group)]
            for group in over:
                self.group_over(group)
            if over:
                found, more, played, held = self._take_idle(bot, argv, wanted, deal_group)
                stale += more
        number = 0
        if found is None:
            with self._lock:
                number = self._started[bot] = self._started.get(bot, 0) + 1
        for served in stale:
            self.discard(served, 0.0)
        if found is None and (played or held):
            self._twin_spawned(bot)
        # an idle process is ready, or still starting if it was started ahead (prestart)
        served = found or self._spawn(bot, argv, number, wanted)
        served.ready.wait(timeout)
        if served.alive() and served.ready.is_set():
            if deal_group is not None:
                self._mark(served, deal_group, group_size)
            return served
        self.discard(served)
        if served.proc.returncode is not None and served.ready.is_set():
            problem = f"exited with code {served.proc.returncode} before it was ready"
        else:
            problem = f'did not write {{"ready": true}} within {timeout:.0f}s'
        raise BotStartError(f"bot {bot} {problem}; see {served.log_path}", served.log_path)

    def _take_idle(
        self, bot: str, argv: list[str], wanted: BotLimits, deal_group: str | None
    ) -> tuple[ServedBot | None, list[ServedBot], list[ServedBot], set[str]]:
        """Take an idle process that may play: (it or None, the stale ones taken out to
        stop, those left idle because they played ``deal_group``, the open groups of
        those left idle because they are quarantined)."""
        stale: list[ServedBot] = []
        kept: list[ServedBot] = []
        played: list[ServedBot] = []
        held: set[str] = set()
        found: ServedBot | None = None
        with self._lock:
            idle = self._idle.setdefault(bot, [])
            while idle and found is None:
                served = idle.pop()
                if not (served.alive() and served.argv == argv and served.limits == wanted):
                    stale.append(served)
                elif deal_group is not None and deal_group in served.deal_groups:
                    played.append(served)
                    kept.append(served)
                elif self._held.get(served):
                    held |= self._held[served]
                    kept.append(served)
                else:
                    found = served
            idle.extend(reversed(kept))
        return found, stale, played, held

    def _is_settled(self, group: str) -> bool:
        assert self.settled is not None
        try:
            return self.settled(group)
        except Exception:  # not known to be over: it stays quarantined
            log.exception("bot_pool_settled_failed group=%s", group)
            return False

    def _mark(self, served: ServedBot, group: str, size: int | None) -> None:
        """``served`` plays a game of ``group``: quarantined while the group is open."""
        with self._lock:
            served.deal_groups.add(group)
            if size == 1:
                return  # a single game: no twin to keep it from
            entry = self._group(group, size)
            entry.members.add(served)
            self._held.setdefault(served, set()).add(group)

    def _group(self, group: str, size: int | None) -> _Group:
        """The open group's entry (under the lock); a known size replaces an unknown."""
        size = size or None  # 0: not announced
        entry = self._groups.get(group)
        if entry is None:
            entry = self._groups[group] = _Group(size)
        elif entry.size is None:
            entry.size = size
        return entry

    def game_over(self, group: str, game: Hashable, size: int | None = None) -> None:
        """A game of ``group`` (``size`` games, None or 0: unknown) ended for good: it will
        not be played again (a result, or cancelled). ``game`` is its key in the group,
        the same if it is played again (a tournament's game index, a ladder match's id):
        once ``size`` distinct keys ended the group is over (``group_over``)."""
        if size == 1:
            return
        with self._lock:
            entry = self._group(group, size)
            entry.ended.add(game)
            over = entry.size is not None and len(entry.ended) >= entry.size
            if not over and len(self._groups) > MAX_UNWAITED_GROUPS:
                self._drop_unwaited()
        if over:
            self.group_over(group)

    def _drop_unwaited(self) -> None:
        """Keep at most ``MAX_UNWAITED_GROUPS`` open groups no process waits on (under
        the lock): memory stays bounded on a ladder that never sees some twins end."""
        unwaited = [name for name, entry in self._groups.items() if not entry.members]
        excess = len(unwaited) - MAX_UNWAITED_GROUPS
        for name in unwaited[: max(excess, 0)]:
            del self._groups[name]

    def open_groups(self) -> int:
        """How many deal groups the pool holds as open (a figure for tests and metrics)."""
        with self._lock:
            return len(self._groups)

    def group_over(self, group: str) -> None:
        """Every game of ``group`` is over (or cancelled): its processes may play again
        (any game but one of this group, which they never play)."""
        with self._lock:
            entry = self._groups.pop(group, None)
            for served in entry.members if entry is not None else ():
                held = self._held.get(served)
                if held is not None:
                    held.discard(group)
                    if not held:
                        del self._held[served]

    def quarantined(self, served: ServedBot) -> set[str]:
        """The open groups that keep ``served`` from playing (empty: it may play)."""
        with self._lock:
            return set(self._held.get(served, ()))

    def _twin_spawned(self, bot: str) -> None:
        """A new process is started because every idle one played this deal group or is
        quarantined by an open one."""

    def _limits_of(self, bot: str, limits: BotLimits | None) -> BotLimits:
        """The limits a process of ``bot`` runs under (what a ``ServedBot`` keeps)."""
        if limits is None and bot in self.limits:
            limits = self.limits[bot]
        if limits is None:
            limits = self.confinement.limits if self.confinement is not None else BotLimits()
        return self.budget.cap(limits)

    def _spawn(
        self, bot: str, argv: list[str], number: int, limits: BotLimits | None = None
    ) -> ServedBot:
        log = self.logs / f"{safe_name(bot)}-{number}.log"
        served = ServedBot(
            argv,
            log,
            bot_env(bot),
            self.tied,
            self.confinement,
            bot,
            self._limits_of(bot, limits),
        )
        self.budget.opened(bot, log)
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
        self.budget.closed(served.log_path)
        with self._lock:
            if served in self._all:
                self._all.remove(served)
            for group in self._held.pop(served, ()):
                entry = self._groups.get(group)
                if entry is not None:
                    entry.members.discard(served)

    def stop_idle(self, older_than: float, quarantined_only: bool = False) -> int:
        """Stop the processes idle for more than ``older_than`` seconds (a long-running
        ladder keeps only the bots it is playing); how many were stopped.
        ``quarantined_only``: only those an open deal group keeps idle (a runner that
        may never see their group end: its other games are played elsewhere)."""
        now = time.monotonic()
        with self._lock:
            old = [
                served
                for idle in self._idle.values()
                for served in idle
                if now - served.idle_since > older_than
                and (not quarantined_only or served in self._held)
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
            self._held, self._groups = {}, {}
        for served in every:
            if served.proc.stdin is not None:
                with contextlib.suppress(OSError, ValueError):
                    served.proc.stdin.close()
        for served in every:
            served.stop(1.0)
            self.budget.closed(served.log_path)


def bot_env(name: str) -> dict[str, str]:
    """A long-lived bot's environment: ``program_env()`` and CIRULLA_NAME (its matches
    arrive on stdin, so no per-match CIRULLA_* variable)."""
    env = program_env()
    env["CIRULLA_NAME"] = name
    return env
